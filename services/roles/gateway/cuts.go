package gateway

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/ingest"
)

// Epochs cut while an upload runs (--epoch-every, docs/standing.md):
// a standing job's append is one epoch or more. Its end ends one, in the
// step that commits its last file's end (standing.go); while one of its
// files uploads, every --epoch-every of input the gateway also ends one,
// in the step that commits the rows read so far: the epoch's markers of
// every table's Source (the uploading file's own, and one made for each
// other table, as at an append's end) and the epoch's EpochEnd record
// ("end/E") go in that one step, so a gateway killed at any point has
// the cut with its rows or neither, and its restarted uploads resume
// after the last cut: no epoch is cut twice or lost.
//
// Epochs are numbered one by one as they end, whatever ends them: the
// EpochEnd records are end/1..end/N. The appends keep their own numbers
// (UploadStart.epoch, AppendJobResponse.epoch, the epoch/K/ records,
// from before epochs were cut), and Job.append_epochs says the last epoch
// of each.
//
// A cut needs every table's Source to agree on the epochs ended: it is
// made only when no other upload of the job runs (the file being
// uploaded is the only one whose Source lives on past a step; the others'
// are made for the step, from the count of ended epochs), under j.epochMu,
// which it holds until its step is committed; an upload's Source is made
// under it too (newPlanUpload), so a file that starts meanwhile resumes
// after the cut. A cut that cannot be made now (another upload runs, or
// an epoch's end is under way) is made at the next step that finds it
// due. A cut with no row since the last epoch's end is not made: an
// epoch is never empty of rows, unless an append is.
//
// The append's end ends an epoch unless nothing came since the last cut
// of that append (no row of any table): then that cut was the append's
// last epoch, and no version is made twice of the same rows.

// epochEndKey is the record of epoch e's end (EpochEnd).
func epochEndKey(e int64) string { return "end/" + strconv.FormatInt(e, 10) }

// Cutter says when an append's next epoch is due: Due is asked at each
// step of its uploads, Cut told when an epoch was cut. One per append
// (cutterFor), so that its time runs on from one file to the next; its
// uploads may call it at once.
type Cutter interface {
	Due() bool
	Cut()
}

// WallCutter is the wall clock's Cutter: an epoch is due every this much
// time of the append, from its first upload's start and from each cut.
func WallCutter(every time.Duration) Cutter {
	return &wallCutter{every: every, last: time.Now()}
}

type wallCutter struct {
	every time.Duration
	mu    sync.Mutex
	last  time.Time
}

func (c *wallCutter) Due() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Since(c.last) >= c.every
}

func (c *wallCutter) Cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = time.Now()
}

// cutterFor is the Cutter of append a's uploads, nil without
// --epoch-every: made (by make) at its first upload here, kept while the
// append runs.
func (j *job) cutterFor(a int64, make func(time.Duration) Cutter) Cutter {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.standing
	every := s.epochEvery(a)
	if every <= 0 {
		return nil
	}
	if s.cutter == nil || s.cutterOf != a {
		s.cutter, s.cutterOf = make(every), a
	}
	return s.cutter
}

// epochEnd is an epoch's end as a step carries it: its number and
// record.
type epochEnd struct {
	epoch int64
	rec   *wololov1.EpochEnd
}

// epochEvery is the --epoch-every of an append's uploads: its own, else
// the job's; j.mu is held.
func (s *standing) epochEvery(append int64) time.Duration {
	ms := s.everyMs
	if append >= 2 && s.appendEveryMs[append-2] > 0 {
		ms = s.appendEveryMs[append-2]
	}
	return time.Duration(ms) * time.Millisecond
}

// tableRows are the rows of each of j's tables committed so far with
// those of u's ingest in (not committed yet): every file of every append
// but u's, as their uploads committed them (with u nil, every file);
// j.mu is held.
func (j *job) tableRowsLocked(u *upload, in *ingest.Ingest) map[string]int64 {
	out := map[string]int64{}
	for _, fs := range j.files {
		out[fs.table] = 0
	}
	for _, fs := range j.allFiles() {
		if u != nil && fs == u.fs {
			out[fs.table] += in.Report.Rows
		} else {
			out[fs.table] += fs.report.Rows
		}
	}
	return out
}

// sameRows reports whether two counts of rows by table are equal, a
// table missing from one counting 0 (none ended yet: no counts).
func sameRows(a, b map[string]int64) bool {
	for t, n := range a {
		if b[t] != n {
			return false
		}
	}
	for t, n := range b {
		if a[t] != n {
			return false
		}
	}
	return true
}

// nextEnd is the end of the next epoch with the rows now in (tableRows),
// ending in append a; j.mu is held.
func (s *standing) nextEnd(a int64, rows map[string]int64, cut bool) epochEnd {
	return epochEnd{epoch: s.ended + 1, rec: &wololov1.EpochEnd{Append: a, Rows: rows, Cut: cut, UnixMs: time.Now().UnixMilli()}}
}

// maybeCut cuts an epoch in the step about to commit u's rows up to in's
// offset if one is due (cutter) and can be made now (see above); what it
// emits and records goes into pipe's next step, which holds j.epochMu
// until it is committed.
//
// A replay of epochs that ended before (a run again after a lost state,
// an added query's job: rebuildstanding.go) cuts where they were cut,
// not by the clock: while an end is planned for the next epoch, the
// cutter is not asked, and the step whose rows are the planned cut's
// cuts (the replay ends its steps there).
func (g *Gateway) maybeCut(u *upload, cutter Cutter, plan *planUpload, in *ingest.Ingest, pipe *commitPipe) error {
	j := u.j
	if j.standing == nil {
		return nil // a batch job has no epochs
	}
	j.mu.Lock()
	next := j.standing.ended + 1
	j.mu.Unlock()
	planned := j.endPlanned(next)
	switch {
	case planned != nil && (!planned.Cut || planned.Append != u.epoch):
		return nil
	case planned != nil:
		j.epochMu.Lock() // the replay's own cut is not put off
	case cutter == nil || !cutter.Due() || !j.epochMu.TryLock():
		return nil
	}
	j.mu.Lock()
	others := false
	for _, fs := range j.allFiles() {
		others = others || (fs != u.fs && fs.uploading)
	}
	rows := j.tableRowsLocked(u, in)
	end := j.standing.nextEnd(u.epoch, rows, true)
	nothing := sameRows(rows, j.standing.ends[j.standing.ended].GetRows())
	moved := end.epoch != next
	j.mu.Unlock()
	if others || nothing || moved || (planned != nil && !sameRows(rows, planned.Rows)) {
		j.epochMu.Unlock()
		return nil
	}
	extra, err := g.endEpoch(j, plan, u.fs.table)
	if err != nil {
		j.epochMu.Unlock()
		return err
	}
	pipe.extra, pipe.ends, pipe.after = append(pipe.extra, extra...), &end, j.epochMu.Unlock
	if cutter != nil {
		cutter.Cut()
	}
	return nil
}

// endRecord is the encoded record of an epoch's end.
func (e *epochEnd) record() (string, []byte, error) {
	b, err := proto.Marshal(e.rec)
	if err != nil {
		return "", nil, fmt.Errorf("encode the end of epoch %d: %w", e.epoch, err)
	}
	return epochEndKey(e.epoch), b, nil
}

// epochEnded notes that the end of an epoch is durable (its step is
// committed).
func (j *job) epochEnded(e *epochEnd) {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.standing
	if e.epoch != s.ended+1 {
		j.log.Error("epoch ended out of order", "epoch", e.epoch, "ended", s.ended)
		return
	}
	s.ended = e.epoch
	s.ends[e.epoch] = e.rec
	j.log.Info("epoch ended", "epoch", e.epoch, "append", e.rec.Append, "cut", e.rec.Cut)
	j.notifyLocked()
}

// recoverEnds reads back a standing job's epoch ends: the epochs ended,
// the rows of each, the last epoch of each committed append (s.committed
// of them, known already), and a run again's planned ends.
func (s *standing) recoverEnds(records map[string][]byte) error {
	last := map[int64]int64{} // append → its last epoch
	for e := int64(1); records[epochEndKey(e)] != nil; e++ {
		var rec wololov1.EpochEnd
		if err := proto.Unmarshal(records[epochEndKey(e)], &rec); err != nil {
			return fmt.Errorf("end of epoch %d: %w", e, err)
		}
		s.ended, s.ends[e] = e, &rec
		last[rec.Append] = e
	}
	for e := int64(1); records[plannedEndKey(e)] != nil; e++ {
		var rec wololov1.EpochEnd
		if err := proto.Unmarshal(records[plannedEndKey(e)], &rec); err != nil {
			return fmt.Errorf("planned end of epoch %d: %w", e, err)
		}
		s.planned[e] = &rec
	}
	for a := int64(1); a <= s.committed; a++ {
		if last[a] == 0 {
			return fmt.Errorf("append %d is committed and no epoch ends in it", a)
		}
		s.appendEnds = append(s.appendEnds, last[a])
	}
	return nil
}
