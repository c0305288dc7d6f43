package gateway

import (
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
)

// A job's inputs: its two files (matches.csv and match_players.csv, the
// tables matches and match_players), then, for a job of SQL queries, its
// extra tables (CreateJobRequest.tables: any CSV file with a header row,
// table NAME). The job keeps them in one list, job.files, the two files
// first at their schema.File index and the tables after them in the
// request's order: every path that works on "a file of the job" (the
// upload, its records in the store, the reports, the quotas) works on any
// input through its index and its input, and only what is particular to
// the two files (the built-in graph's typed rows, their required columns)
// asks which one it is.

// DefaultMaxTables is how many extra tables a job may have unless
// --max-tables says otherwise.
const DefaultMaxTables = sqljob.DefaultMaxTables

// input is what names one input of a job.
type input struct {
	// name is how messages and the job's report call it: the file's
	// name (matches.csv), or the table's name for a table (its client's
	// file may be called anything).
	name string
	// table is its SQL table.
	table string
	// key is its part of its records' keys in the store (uploadKey,
	// rejectsKey): the file's name, "table/NAME" for a table, which no
	// file's name is.
	key string
	// counter is its label on the gateway's upload counters: the file's
	// name, "table" for every table (a label per table name would grow
	// without bound).
	counter string
	// file is which of the two files it is; isTable is set for a table.
	file    schema.File
	isTable bool
}

// String is how messages name it: the file's name, or "table NAME".
func (in input) String() string {
	if in.isTable {
		return "table " + in.name
	}
	return in.name
}

func fileInput(f schema.File) input {
	return input{name: f.String(), table: sqljob.FileTable(f), key: f.String(), counter: f.String(), file: f}
}

func tableInput(name string) input {
	return input{name: name, table: name, key: "table/" + name, counter: "table", isTable: true}
}

// inputHeader is one input of a CreateJob and its header.
type inputHeader struct {
	in input
	h  *wololov1.FileHeader
}

// inputsOf lists a CreateJob's inputs: the two files (an absent one's
// header empty), then its tables in order.
func inputsOf(req *wololov1.CreateJobRequest) []inputHeader {
	out := []inputHeader{{fileInput(schema.Matches), orAbsent(req.GetMatches())}, {fileInput(schema.Players), orAbsent(req.GetPlayers())}}
	for _, t := range req.GetTables() {
		out = append(out, inputHeader{tableInput(t.GetName()), t.GetHeader()})
	}
	return out
}

// A job of tables only (docs/sql.md "Tables": --table files and no
// --matches, --players) has neither of the two files. Such a file is
// still one of the job's inputs, at its index, so that nothing that
// walks a job's inputs by index (the upload, the store's keys, the
// retained copies, the rebuild's replay, the epochs of a standing job)
// learns of a second kind of job: it is an input with no columns and no
// bytes (an empty header, recorded as an empty FileRecord), complete
// from the job's creation, which no plan scans (sqljob.Spec.NoFiles
// compiles the queries without its table, and one that reads it is
// refused) and no upload may name. Only the job's view leaves it out. It
// is the shape a table left out of an append has already (standing.go),
// so an append to such a job leaves the two files out as it may leave a
// table out. A file with a header always has columns (ingest.ReadHeader
// reads at least one), so "no columns and no bytes" is no file.

// absent says whether a file's header is an absent file's: none, or no
// columns and no bytes.
func absent(h *wololov1.FileHeader) bool {
	return len(h.GetColumns()) == 0 && h.GetSize() == 0
}

// orAbsent is h, or an absent file's empty header for none.
func orAbsent(h *wololov1.FileHeader) *wololov1.FileHeader {
	if h == nil {
		return &wololov1.FileHeader{}
	}
	return h
}

// checkFilesGiven refuses one of the two files without the other: a job
// (or an append) has both, or neither.
func checkFilesGiven(matches, players *wololov1.FileHeader) error {
	if absent(matches) != absent(players) {
		return errorf(ErrInvalid, "both file headers are required, or neither for a job of its tables only: %s without %s, or the other way round", schema.Matches, schema.Players)
	}
	return nil
}

// checkAppendFiles refuses an append that gives the two files to a job
// that has none (a job of tables only: its plan has no table of theirs).
func (j *job) checkAppendFiles(req *wololov1.AppendJobRequest) error {
	if j.files[schema.Matches].absent && !absent(req.GetMatches()) || j.files[schema.Players].absent && !absent(req.GetPlayers()) {
		return errorf(ErrInvalid, "job %q has no %s nor %s (a job of tables only): append to its tables only", j.name, schema.Matches, schema.Players)
	}
	return nil
}

// checkMalformed is the limit's error for the input whose whole report is
// r (schema.MalformedLimit.CheckNamed), naming it.
func (in input) checkMalformed(l schema.MalformedLimit, r schema.FileReport) error {
	return l.CheckNamed(in.String(), r)
}
