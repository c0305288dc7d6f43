package gateway

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/ingest"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/transport"
)

// Standing jobs (docs/standing.md): a job created with
// CreateJobRequest.standing does not end with its upload. Its files are
// epoch 1; each AppendJob opens the next epoch, whose files are uploaded
// as a job's are (same offsets, same resume, UploadStart.epoch naming
// the epoch). An epoch is committed whole or not at all: its rows go out
// as they are committed, but the epoch ends, and its version is made,
// only in the commit step that commits its last file's end, which also
// carries an epoch marker from every Source of the job (EpochRuntime.
// EndEpoch, each table's, a table with no rows in the epoch too): a
// gateway killed at any point either has that step or parses the file's
// end again. Appends are sequential: one is refused (FailedPrecondition)
// while an epoch is open. CloseJob ends every table (Source.End, today's
// end of input) in one step, and the job finishes as a batch job does.
//
// The versions come back from the gateway's stage runtime as records of
// its commits (Records: version/K/NAME.csv, change/K/NAME.csv); the
// gateway indexes them (versions.go: where each is, its sizes) and reads
// a version's files from its store when a client asks.
//
// With --epoch-every an append is one epoch or more (cuts.go): epochs
// are then numbered as they end, and "epoch" in what names an append's
// files (UploadStart.epoch, AppendJobResponse.epoch, the epoch/K/
// records, epochFiles) is the append's number, which is its epoch's
// without cuts.
//
// What a standing job keeps in the store, besides a job's records:
// JobRecord.standing; "epoch/K/meta" (EpochRecord) for each append, and
// its files' upload records under "upload/epoch/K/FILE"; "end/E"
// (EpochEnd) for each epoch ended; "standing/closed" once closed. The
// gateway retains each append's files (Config.Inputs, retain.go):
// one-off queries read them (oneoff.go), and a run that lost a process's
// state is run again from them (rebuildstanding.go).

// recordClosed is present once a standing job is closed: written in the
// step that ends its tables.
const recordClosed = "standing/closed"

// epochMetaKey is the record of epoch k's append (EpochRecord).
func epochMetaKey(k int64) string { return "epoch/" + strconv.FormatInt(k, 10) + "/meta" }

// epochInput is the input of epoch k (from 2) as the append named it:
// the key of its records in the store is its epoch's.
func epochInput(in input, k int64) input {
	in.key = "epoch/" + strconv.FormatInt(k, 10) + "/" + in.key
	return in
}

// standing is what a standing job has that a batch job has not; the
// job's mu guards it.
type standing struct {
	// appends are the files of appends 2, 3, ...: appends[k-2] (append
	// 1's are job.files), each the job's inputs in its order.
	appends [][]*fileState
	// committed is how many appends have their input whole (the step
	// that ended them is durable).
	committed int64
	closed    bool
	versions  *versions
	// closeAfter closes a rebuilt run once its replay is over: the run
	// it replaced was closed (rebuildstanding.go).
	closeAfter bool
	// ended is how many epochs have ended durably (cuts.go): an append
	// ends one or more. ends are their records by epoch (the rows of
	// each table of epochs 1..E together, the append, whether a cut),
	// and appendEnds the last epoch of each committed append.
	ended      int64
	ends       map[int64]*wololov1.EpochEnd
	appendEnds []int64
	// planned are, for a run again after a lost state, the ends of the
	// epochs of the run it replaced (rebuildstanding.go): its replay
	// ends each where it ended.
	planned map[int64]*wololov1.EpochEnd
	// everyMs is the job's --epoch-every, appendEveryMs each append's
	// own (0: the job's).
	everyMs       int64
	appendEveryMs []int64
	// cutter says when the append cutterOf's next epoch is due
	// (cutterFor).
	cutter   Cutter
	cutterOf int64
}

func newStanding(names []string, everyMs int64, store transport.Store) *standing {
	return &standing{versions: newVersions(names, store), ends: map[int64]*wololov1.EpochEnd{}, planned: map[int64]*wololov1.EpochEnd{}, everyMs: everyMs}
}

// appendCount is how many appends the job has: 1, its own files, and
// each append (each one epoch or, cut by --epoch-every, several).
func (s *standing) appendCount() int64 { return int64(1 + len(s.appends)) }

// epochFiles are the files of an epoch: j.files for epoch 0 (a batch
// job) and 1, an append's for a later one; j.mu is held (an append adds
// to the list).
func (j *job) epochFiles(epoch int64) []*fileState {
	if epoch <= 1 {
		return j.files
	}
	return j.standing.appends[epoch-2]
}

// allFiles are the job's files of every epoch; j.mu is held.
func (j *job) allFiles() []*fileState {
	if j.standing == nil || len(j.standing.appends) == 0 {
		return j.files
	}
	out := slices.Clone(j.files)
	for _, files := range j.standing.appends {
		out = append(out, files...)
	}
	return out
}

// uploadEpoch is the epoch an upload names: 0 for a batch job (which has
// none), 1 for a standing job's first files, an append's number.
func (j *job) uploadEpoch(start *wololov1.UploadStart) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	k := start.GetEpoch()
	switch {
	case j.standing == nil && k > 1:
		return 0, errorf(ErrInvalid, "job %q is a batch job: it has no epoch %d", j.name, k)
	case j.standing == nil:
		return 0, nil
	case k < 0 || k > j.standing.appendCount():
		return 0, errorf(ErrInvalid, "job %q has no epoch %d (epochs 1 to %d: append to open the next)", j.name, k, j.standing.appendCount())
	}
	return max(k, 1), nil
}

// appendCommitted notes that append k's input is whole and durable,
// its last epoch the last one ended (its step's, or an earlier cut's).
func (j *job) appendCommitted(k int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if s := j.standing; s != nil && k > s.committed {
		s.committed = k
		s.appendEnds = append(s.appendEnds, s.ended)
		j.log.Info("append committed", "append", k, "epoch", s.ended)
		j.notifyLocked()
	}
}

// lastOfEpoch reports whether every input of the upload's epoch but its
// own is committed whole; j.epochMu is held, so no other file of the
// epoch ends meanwhile.
func (u *upload) lastOfEpoch() bool {
	u.j.mu.Lock()
	defer u.j.mu.Unlock()
	for _, fs := range u.j.epochFiles(u.epoch) {
		if fs != u.fs && !fs.done {
			return false
		}
	}
	return true
}

// endOfStandingFile is the end of a standing job's file: its rows are
// flushed, not ended, and when it is the last file of its epoch to end,
// the step that commits its end also ends the epoch (endEpoch). It takes
// j.epochMu, so that of two files of an epoch ending at once exactly one
// sees the other done; the returned unlock waits for every step of the
// upload to be over (committed, or failed) before it lets the next file
// look.
func (g *Gateway) endOfStandingFile(u *upload, plan *planUpload, in *ingest.Ingest, pipe *commitPipe) (unlock func(), err error) {
	if err := plan.flush(in); err != nil {
		return nil, err
	}
	u.j.epochMu.Lock()
	unlock = func() {
		_ = pipe.stop() // its error is the upload's, returned on its path
		u.j.epochMu.Unlock()
	}
	pipe.open = true
	if !u.lastOfEpoch() {
		return unlock, nil
	}
	pipe.endsAppend = u.epoch
	// The append's end ends an epoch, unless a cut of this append
	// ended one and no row came since (cuts.go).
	u.j.mu.Lock()
	s := u.j.standing
	rows := u.j.tableRowsLocked(u, in)
	end := s.nextEnd(u.epoch, rows, false)
	var lastAppendEnd int64
	if n := len(s.appendEnds); n > 0 {
		lastAppendEnd = s.appendEnds[n-1]
	}
	cutSince := s.ended > lastAppendEnd // a cut of this append ended the last epoch
	nothing := cutSince && sameRows(rows, s.ends[s.ended].GetRows())
	u.j.mu.Unlock()
	if nothing {
		return unlock, nil
	}
	if pipe.extra, err = g.endEpoch(u.j, plan, u.fs.table); err != nil {
		unlock()
		return nil, err
	}
	pipe.ends = &end
	return unlock, nil
}

// endEpoch emits the markers that end the next epoch of job j: own's
// Source's (table's, into own's outputs, which the step drains), and
// every other table's, through a Source of its own, returned for the
// same step. j.epochMu is held.
func (g *Gateway) endEpoch(j *job, own *planUpload, table string) ([]stage.Emitted, error) {
	if err := g.epochs.EndEpoch(own.src, own.out); err != nil {
		return nil, fmt.Errorf("job %s: end the epoch of table %s: %w", j.id, table, err)
	}
	j.mu.Lock()
	ended := j.standing.ended
	j.mu.Unlock()
	return g.eachSource(j, table, ended, func(src *sqlops.Source, out *stage.Outputs) ([]stage.Emitted, error) {
		if err := g.epochs.EndEpoch(src, out); err != nil {
			return nil, err
		}
		emitted, _ := out.Drain(false)
		return emitted, nil
	})
}

// eachSource makes a Source of every table of j but skip ("": every
// one), going on after the epochs ended, and returns what f emits
// through each.
func (g *Gateway) eachSource(j *job, skip string, ended int64, f func(*sqlops.Source, *stage.Outputs) ([]stage.Emitted, error)) ([]stage.Emitted, error) {
	p, err := physical.Decode(j.plan)
	if err != nil {
		return nil, fmt.Errorf("job %s: its plan: %w", j.id, err)
	}
	var all []stage.Emitted
	for _, fs := range j.files {
		if fs.table == skip {
			continue
		}
		src, err := sqlops.NewSource(p, fs.table, fs.names)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", j.id, err)
		}
		if err := src.ResumeEpochs(ended); err != nil {
			return nil, fmt.Errorf("job %s: %w", j.id, err)
		}
		emitted, err := f(src, stage.NewOutputs(g.self, j.id, src.Outputs()))
		if err != nil {
			return nil, fmt.Errorf("job %s: table %s: %w", j.id, fs.table, err)
		}
		all = append(all, emitted...)
	}
	return all, nil
}

// closeJob ends a standing job's input: every table's Source ends
// (Source.End, EOF on every channel) in one step, with recordClosed. It
// returns the job's epochs. Refused for a batch job, a failed one, and
// while an epoch is open; a closed job is closed again without a step.
func (g *Gateway) closeJob(ctx context.Context, j *job) (int64, error) {
	if j.standing == nil {
		return 0, errorf(ErrNotStanding, "job %q is a batch job: its input ends with its upload, and it has nothing to close", j.name)
	}
	j.epochMu.Lock()
	defer j.epochMu.Unlock()
	j.mu.Lock()
	epochs, committed, closed, ended := j.standing.appendCount(), j.standing.committed, j.standing.closed, j.standing.ended
	err := j.failureLocked()
	j.activity = time.Now()
	j.mu.Unlock()
	switch {
	case err != nil:
		return 0, err
	case closed:
		return ended, nil
	case committed < epochs:
		return 0, errorf(ErrNotStanding, "job %q: epoch %d is open (its files are not all uploaded): finish its upload (the same submit or append again resumes it), then close", j.name, epochs)
	}
	if err := g.introduce(ctx, j); err != nil {
		return 0, err
	}
	emitted, err := g.eachSource(j, "", ended, func(src *sqlops.Source, out *stage.Outputs) ([]stage.Emitted, error) {
		if err := src.End(out); err != nil {
			return nil, err
		}
		emitted, _ := out.Drain(true)
		return emitted, nil
	})
	if err != nil {
		return 0, err
	}
	step := &transport.Step{Commit: transport.Commit{Job: j.id, Records: map[string][]byte{recordClosed: []byte("1")}}}
	if step.Emit, err = stage.Encode(emitted); err != nil {
		return 0, err
	}
	if _, err := g.cfg.Committer.Commit(step); err != nil {
		return 0, errorf(ErrStore, "close job %q: %v", j.name, err)
	}
	j.mu.Lock()
	j.standing.closed = true
	j.notifyLocked()
	j.mu.Unlock()
	j.log.Info("standing job closed", "appends", epochs, "epochs", ended)
	return ended, nil
}

// appended is what appendEpoch made: the epoch, and whether it was open
// already with the same files (a retry).
type appended struct {
	epoch   int64
	resumed bool
}

// appendEpoch opens the next epoch of the owner's standing job with the
// files req declares, durably (EpochRecord), after the checks a
// CreateJob's files get (checkHeaders, the columns the plan reads) and
// the byte quotas over all the job's epochs.
func (js *jobs) appendEpoch(j *job, req *wololov1.AppendJobRequest) (appended, error) {
	if req.GetEpochEveryMs() < 0 {
		return appended{}, errorf(ErrInvalid, "an epoch every %dms: every 1ms or more", req.GetEpochEveryMs())
	}
	inputs, err := appendInputs(j, req)
	if err != nil {
		return appended{}, err
	}
	if err := js.limits.checkHeaders(inputs); err != nil {
		return appended{}, err
	}
	p, err := physical.Decode(j.plan)
	if err != nil {
		return appended{}, fmt.Errorf("job %s: its plan: %w", j.id, err)
	}
	scanned := p.Scanned()
	for _, in := range inputs {
		if in.h == nil {
			continue
		}
		for _, c := range scanned[in.in.table] {
			if !slices.Contains(in.h.Columns, c) {
				return appended{}, errorf(ErrInvalid, "%s: no column %q (read by the job's queries)", in.in, c)
			}
		}
	}
	js.mu.Lock() // the client's quotas count its other jobs
	defer js.mu.Unlock()
	others := js.inFlightLocked(j.owner, j) // before j.mu: no two jobs' locks are held at once
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.appendableLocked(); err != nil {
		return appended{}, err
	}
	s := j.standing
	if s.committed < s.appendCount() {
		if s.appendCount() > 1 && sameEpochFiles(j.epochFiles(s.appendCount()), inputs) {
			return appended{epoch: s.appendCount(), resumed: true}, nil
		}
		return appended{}, errorf(ErrNotStanding, "job %q: epoch %d is open (its files are not all uploaded): finish it first (append again with the same files resumes it)", j.name, s.appendCount())
	}
	sizes := []int64{j.bytes}
	for _, in := range inputs {
		if in.h != nil {
			sizes = append(sizes, in.h.Size)
		}
	}
	total, ok := sumSizes(sizes...)
	if !ok || total > js.limits.MaxJobBytes {
		return appended{}, errorf(ErrFull, "the job's files of every epoch would declare %s bytes together, more than a job may have (%d, --max-job-bytes)", sizesText(sizes), js.limits.MaxJobBytes)
	}
	if inFlight, ok := sumSizes(others, total); !ok || inFlight > js.limits.ClientMaxBytes {
		return appended{}, errorf(ErrFull, "this client's unfinished jobs would declare %d bytes, more than its limit (%d, --client-max-bytes)", inFlight, js.limits.ClientMaxBytes)
	}
	rec := &wololov1.EpochRecord{CreatedUnixMs: time.Now().UnixMilli(), EpochEveryMs: req.GetEpochEveryMs()}
	for _, in := range inputs {
		f := &wololov1.FileRecord{}
		if h := in.h; h != nil {
			f = &wololov1.FileRecord{Columns: h.Columns, Size: h.Size, DataOffset: h.DataOffset, Fingerprint: h.Fingerprint}
		}
		rec.Files = append(rec.Files, f)
	}
	k, err := js.openEpochLocked(j, rec, scanned)
	if err != nil {
		return appended{}, err
	}
	j.bytes = total
	j.log.Info("epoch opened", "epoch", k, "bytes", total)
	return appended{epoch: k}, nil
}

// openEpochLocked opens the next epoch of standing job j with the files
// rec describes, durably, and returns it (an append's, or an added
// query's job following its parent: addquery.go); j.mu is held.
func (js *jobs) openEpochLocked(j *job, rec *wololov1.EpochRecord, scanned map[string][]string) (int64, error) {
	k := j.standing.appendCount() + 1
	files, err := epochFilesOf(j, k, rec, scanned)
	if err != nil {
		return 0, err
	}
	b, err := proto.Marshal(rec)
	if err != nil {
		return 0, fmt.Errorf("encode epoch %d of job %q: %w", k, j.id, err)
	}
	if err := js.store.Commit(&transport.Commit{Job: j.id, Records: map[string][]byte{epochMetaKey(k): b}}); err != nil {
		return 0, errorf(ErrStore, "store epoch %d of job %q: %v", k, j.name, err)
	}
	js.retainHeaders(j, k, rec.Files)
	j.standing.appends = append(j.standing.appends, files)
	j.standing.appendEveryMs = append(j.standing.appendEveryMs, rec.EpochEveryMs)
	j.activity = time.Now()
	j.notifyLocked()
	return k, nil
}

// appendableLocked is why the job takes no append, nil if it does; j.mu
// is held.
func (j *job) appendableLocked() error {
	if err := j.failureLocked(); err != nil {
		return err
	}
	switch {
	case j.standing == nil:
		return errorf(ErrNotStanding, "job %q is a batch job: it takes no appends (submit a job with --standing to append to it)", j.name)
	case j.standing.closed:
		return errorf(ErrNotStanding, "job %q is closed: it takes no more appends", j.name)
	case j.state == wololov1.JobState_JOB_STATE_DONE:
		return errorf(ErrNotStanding, "job %q is done: it takes no more appends", j.name)
	}
	return nil
}

// inFlightLocked is the bytes the owner's unfinished jobs but except
// declare together (what --client-max-bytes bounds); js.mu is held.
func (js *jobs) inFlightLocked(owner string, except *job) int64 {
	var n int64
	for _, o := range js.byID {
		if o == except || o.owner != owner {
			continue
		}
		o.mu.Lock()
		if o.state != wololov1.JobState_JOB_STATE_DONE && o.state != wololov1.JobState_JOB_STATE_FAILED {
			n, _ = sumSizes(n, o.bytes)
		}
		o.mu.Unlock()
	}
	return n
}

// appendInputs lists an append's inputs in the job's order: its two
// files, then each of the job's tables, with the header req gives it or
// none. A table the job does not have, or one given twice, is refused.
func appendInputs(j *job, req *wololov1.AppendJobRequest) ([]inputHeader, error) {
	out := []inputHeader{{fileInput(schema.Matches), req.GetMatches()}, {fileInput(schema.Players), req.GetPlayers()}}
	given := map[string]*wololov1.FileHeader{}
	for _, t := range req.GetTables() {
		if _, twice := given[t.GetName()]; twice {
			return nil, errorf(ErrInvalid, "table %q given twice", t.GetName())
		}
		if !slices.Contains(j.tableNames(), t.GetName()) {
			return nil, errorf(ErrInvalid, "job %q has no table %q (its tables: %s)", j.name, t.GetName(), strings.Join(j.tableNames(), ", "))
		}
		if t.GetHeader() == nil {
			return nil, errorf(ErrInvalid, "table %q: no header", t.GetName())
		}
		given[t.GetName()] = t.GetHeader()
	}
	for _, name := range j.tableNames() {
		out = append(out, inputHeader{tableInput(name), given[name]})
	}
	return out, nil
}

// sameEpochFiles reports whether an open epoch's files are those an
// append declares again (a retry): the same sizes, and the same
// fingerprints where both have one.
func sameEpochFiles(files []*fileState, inputs []inputHeader) bool {
	return slices.EqualFunc(files, inputs, func(fs *fileState, in inputHeader) bool {
		if in.h == nil {
			return fs.size == 0 && fs.done
		}
		return fs.size == in.h.Size && (len(fs.print) == 0 || len(in.h.Fingerprint) == 0 || slices.Equal(fs.print, in.h.Fingerprint))
	})
}

// epochFilesOf makes the files of epoch k of j as rec describes them; a
// table the append left out (size 0, no columns) is complete already.
func epochFilesOf(j *job, k int64, rec *wololov1.EpochRecord, scanned map[string][]string) ([]*fileState, error) {
	if len(rec.Files) != len(j.files) {
		return nil, errorf(ErrInvalid, "job %q: epoch %d of %d files, the job has %d inputs", j.id, k, len(rec.Files), len(j.files))
	}
	var out []*fileState
	for i, f := range rec.Files {
		if f.Size < 0 || f.DataOffset < 0 || f.DataOffset > f.Size {
			return nil, errorf(ErrInvalid, "job %q: epoch %d: a file of %d bytes whose data starts at byte %d", j.id, k, f.Size, f.DataOffset)
		}
		in := epochInput(j.files[i].input, k)
		fs := &fileState{input: in, size: f.Size, start: f.DataOffset, print: f.Fingerprint, offset: f.DataOffset, report: schema.FileReport{Missing: map[string]int64{}}}
		fs.names = scannedOnly(f.Columns, scanned[in.table])
		fs.done = f.Size == 0 && len(f.Columns) == 0 // left out: no rows this epoch
		out = append(out, fs)
	}
	return out, nil
}

// recoverStanding reads back what a standing job's records say of its
// epochs: each append's files and how far their uploads got, the epochs
// committed, whether it is closed, and its versions.
func (js *jobs) recoverStanding(j *job, records map[string][]byte) error {
	s := j.standing
	var scanned map[string][]string
	for k := int64(2); records[epochMetaKey(k)] != nil; k++ {
		var rec wololov1.EpochRecord
		if err := proto.Unmarshal(records[epochMetaKey(k)], &rec); err != nil {
			return fmt.Errorf("epoch %d: %w", k, err)
		}
		if scanned == nil {
			p, err := physical.Decode(j.plan)
			if err != nil {
				return err
			}
			scanned = p.Scanned()
		}
		files, err := epochFilesOf(j, k, &rec, scanned)
		if err != nil {
			return err
		}
		if err := recoverUploads(files, records); err != nil {
			return err
		}
		for _, fs := range files {
			j.bytes, _ = sumSizes(j.bytes, fs.size)
		}
		s.appends = append(s.appends, files)
		s.appendEveryMs = append(s.appendEveryMs, rec.EpochEveryMs)
	}
	// An epoch is committed when its files all are: its last file's
	// end and its markers are one step.
	for k := int64(1); k <= s.appendCount(); k++ {
		whole := true
		for _, fs := range j.epochFiles(k) {
			whole = whole && fs.done
		}
		if !whole {
			break
		}
		s.committed = k
	}
	s.closed = records[recordClosed] != nil
	s.closeAfter = records[recordCloseAfter] != nil
	if err := s.recoverEnds(records); err != nil {
		return err
	}
	s.versions.add(j.id, records)
	return nil
}

// standingView adds a standing job's epochs to its view, and makes its
// file reports those of every epoch together; j.mu is held.
func (j *job) standingView(out *wololov1.Job) {
	s := j.standing
	out.Standing, out.Open = true, !s.closed
	out.Epochs, out.EpochsCommitted, out.EpochsPublished = s.ended, s.ended, s.versions.published
	if s.committed < s.appendCount() {
		out.Epochs++ // the open append's epoch, not ended yet
	}
	out.AppendEpochs = slices.Clone(s.appendEnds)
	reports := []*wololov1.FileReport{out.Matches, out.Players}
	reports = append(reports, out.Tables...)
	for _, files := range s.appends {
		for i, fs := range files {
			r := reports[i]
			r.Rows += fs.report.Rows
			r.Malformed += fs.report.Malformed
			for c, n := range fs.report.Missing {
				r.Missing[c] += n
			}
			r.Offset += fs.offset
			r.Size += fs.size
			r.Done = r.Done && fs.done
		}
	}
}

// standingListing adds a standing job's epochs to its listing; j.mu is
// held.
func (j *job) standingListing(s *wololov1.JobSummary) {
	if j.standing == nil {
		return
	}
	s.Standing, s.Open, s.EpochsPublished = true, !j.standing.closed, j.standing.versions.published
}

// inputClosed reports whether the job's input is over: every file in, and
// for a standing job, closed too; j.mu is held.
func (j *job) inputClosed() bool {
	return j.inputDone() && (j.standing == nil || j.standing.closed)
}
