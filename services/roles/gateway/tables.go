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

// inputsOf lists a CreateJob's inputs: the two files, then its tables in
// order.
func inputsOf(req *wololov1.CreateJobRequest) []inputHeader {
	out := []inputHeader{{fileInput(schema.Matches), req.GetMatches()}, {fileInput(schema.Players), req.GetPlayers()}}
	for _, t := range req.GetTables() {
		out = append(out, inputHeader{tableInput(t.GetName()), t.GetHeader()})
	}
	return out
}

// checkMalformed is the limit's error for the input whose whole report is
// r (schema.MalformedLimit.CheckNamed), naming it.
func (in input) checkMalformed(l schema.MalformedLimit, r schema.FileReport) error {
	return l.CheckNamed(in.String(), r)
}
