package gateway

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/ingest"
)

// A standing job whose state a process lost runs again from its retained
// epochs (retain.go), as a batch job runs again from its retained input
// (rebuild.go): the new run is the job submitted again with --standing
// and every epoch appended again, in order, each replayed through the
// upload path and ended by its last file's commit, as its client's
// uploads did. Its versions are made again, epoch by epoch, from nothing
// (the new run's id is fresh everywhere): by the guarantee of every
// version (docs/standing.md) each one is byte-equal to the one the lost
// run published, so a watcher that follows the job (WatchAnswers) sees
// the epochs it has not seen yet, and `results --epoch N` answers again
// once epoch N is published again. Until then the job has fewer versions
// than before.
//
// What the new run starts from: the old run's description (replace), its
// appends' descriptions (epoch/K/meta, copied into the new run's first
// commit), and, when the old run was closed, recordCloseAfter: the
// replay closes the new run once every epoch is in. A gateway restarted
// during the replay resumes it (replayPending): every file already in is
// skipped, the rest replayed from the new run's committed offsets.
//
// An epoch the client was uploading when the state was lost is replayed
// as far as its copies go, and its client resumes it into the new run, as
// a batch job's upload does.

// recordCloseAfter is present in a rebuilt standing job whose lost run
// was closed: its replay closes it.
const recordCloseAfter = "standing/close-after-replay"

// plannedEndKey is the record, in a run again, of where the run it
// replaced ended epoch e (EpochEnd).
func plannedEndKey(e int64) string { return "planned/" + epochEndKey(e) }

// standingRebuildRecords are the records of a lost standing run that its
// rebuild's run starts from: its appends' descriptions, where it ended
// each epoch (its own ends, else those it was to replay: planned), and
// whether to close it once replayed.
func standingRebuildRecords(old map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for key, v := range old {
		switch {
		case strings.HasPrefix(key, "epoch/") && strings.HasSuffix(key, "/meta"):
			out[key] = v
		case strings.HasPrefix(key, "end/"):
			out["planned/"+key] = v
		case strings.HasPrefix(key, "planned/end/") && old[strings.TrimPrefix(key, "planned/")] == nil:
			out[key] = v
		}
	}
	if old[recordClosed] != nil || old[recordCloseAfter] != nil {
		out[recordCloseAfter] = []byte("1")
	}
	return out
}

// replayPending reports whether a rebuilt run's replay is to go on after
// a gateway restart: a batch job's input not all in; a standing job, not
// over, with a file of an epoch not in, or still to be closed. j.mu is
// not needed: recover holds the only reference.
func (j *job) replayPending() bool {
	if j.rebuildOf == "" || j.state == wololov1.JobState_JOB_STATE_DONE || j.state == wololov1.JobState_JOB_STATE_FAILED {
		return false
	}
	if j.standing == nil {
		return !j.inputDone() && j.state == wololov1.JobState_JOB_STATE_UPLOADING
	}
	for _, fs := range j.allFiles() {
		if !fs.done {
			return true
		}
	}
	return j.standing.closeAfter && !j.standing.closed
}

// closeAfterReplay closes a rebuilt standing job whose lost run was
// closed, once its replay has every epoch in.
func (g *Gateway) closeAfterReplay(ctx context.Context, j *job) error {
	j.mu.Lock()
	pending := j.standing != nil && j.standing.closeAfter && !j.standing.closed
	j.mu.Unlock()
	if !pending {
		return nil
	}
	_, err := g.closeJob(ctx, j)
	return err
}

// endPlanned is where epoch e of j is to end when its uploads replay
// epochs that ended before (nil when none is planned: a client's upload,
// cut as it goes): for a run again, where the run it replaced ended it
// (planned, copied from that run's end/E records); for an added query's
// job, where its standing job ended it, or is to end it again.
func (j *job) endPlanned(e int64) *wololov1.EpochEnd {
	j.mu.Lock()
	rec, parent := j.standing.planned[e], j.follows.parent
	j.mu.Unlock()
	if rec != nil || parent == nil {
		return rec
	}
	p := parent.follow()
	p.mu.Lock()
	rec = p.standing.ends[e]
	p.mu.Unlock()
	if rec != nil {
		return rec
	}
	return p.endPlanned(e)
}

// replayCuts replays, from job from's retained copies, append k's rows of
// j up to each epoch that ended within it by a cut (endPlanned), each
// input file as far as the cut's rows of its table, the cut made in the
// step that brings the last of them (maybeCut). The offsets are found by
// counting the copy's records as the upload counts them
// (ingest.RowsEnd), so the replayed epochs are those that ended, each
// over the same rows: their versions are the same, byte for byte. A cut
// whose rows the copy does not hold, or that the replay does not make,
// fails the replay, saying so. On a failure it returns the file.
func (g *Gateway) replayCuts(ctx context.Context, j *job, from string, k int64) (*fileState, error) {
	for {
		j.mu.Lock()
		e := j.standing.ended + 1
		files := slices.Clone(j.epochFiles(k))
		j.mu.Unlock()
		cut := j.endPlanned(e)
		if cut == nil || !cut.Cut || cut.Append != k {
			return nil, nil
		}
		for i, fs := range files {
			j.mu.Lock()
			need := cut.Rows[fs.table] - j.tableRowsLocked(nil, nil)[fs.table]
			at, rows, done := fs.offset, fs.report.Rows, fs.done
			j.mu.Unlock()
			if need <= 0 || done {
				continue
			}
			end, err := g.rowsEnd(from, retainedName(k, i), fs, at, need)
			if err != nil {
				return fs, fmt.Errorf("epoch %d was cut after %d rows of %s (%d of this file), and its retained copy cannot say where: %w", e, cut.Rows[fs.table], fs.table, rows+need, err)
			}
			if err := g.replayFile(ctx, j, k, i, from, retainedName(k, i), end); err != nil {
				return fs, err
			}
		}
		j.mu.Lock()
		ended := j.standing.ended
		j.mu.Unlock()
		if ended < e {
			return files[0], fmt.Errorf("epoch %d was cut after rows %v, and the replay of its retained copies did not cut it there", e, cut.Rows)
		}
	}
}

// rowsEnd is the offset in the retained copy name of job from where the
// next need records of fs, from offset at, end.
func (g *Gateway) rowsEnd(from, name string, fs *fileState, at, need int64) (int64, error) {
	r, err := g.jobs.inputs.Reader(from, name, fs.size)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if _, err := r.Seek(at, io.SeekStart); err != nil {
		return 0, err
	}
	return ingest.RowsEnd(r, at, need, g.cfg.MaxRecordBytes)
}
