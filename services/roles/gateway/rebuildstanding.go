package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
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

// standingRebuildRecords are the records of a lost standing run that its
// rebuild's run starts from: its appends' descriptions, and whether to
// close it once replayed.
func standingRebuildRecords(old map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for key, v := range old {
		if strings.HasPrefix(key, "epoch/") && strings.HasSuffix(key, "/meta") {
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

// notReplayable says why a standing job cannot be run again from its
// retained appends with the epochs it had ("" when it can, and for a
// batch job): an epoch that --epoch-every cut where the upload's timing
// put it (cuts.go) would not end in the same place again, and versions
// numbered otherwise than the lost run's are not its versions.
func (j *job) notReplayable() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.standing
	if s == nil || s.ended == int64(len(s.appendEnds)) {
		return ""
	}
	return fmt.Sprintf("--epoch-every cut its appends into %d epochs, where a run again would end one per append", s.ended)
}

// cutsEpochs says how standing job j's appends are, or may be, cut into
// epochs ("" when each append is one epoch, and none is to be cut): a
// query added to it replays whole appends (addquery.go).
func (j *job) cutsEpochs() string {
	if why := j.notReplayable(); why != "" {
		return why
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.standing
	if s == nil {
		return ""
	}
	if s.everyMs > 0 || slices.ContainsFunc(s.appendEveryMs, func(ms int64) bool { return ms > 0 }) {
		return "cuts its appends into epochs (--epoch-every)"
	}
	return ""
}
