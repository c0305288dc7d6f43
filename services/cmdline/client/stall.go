package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
)

// DefaultStall is how long submit waits for a job that makes no progress
// before it gives up (--stall-timeout).
const DefaultStall = 5 * time.Minute

// errStalled is the cause a stalled submit's context is cancelled with.
var errStalled = errors.New("no progress")

// stallWatch bounds a submit: progress is any upload byte the gateway
// acknowledges, and then any change in where the graph stands on the job
// (Job.stages: rows applied, stages finished, the state). When nothing
// moved for limit, it cancels the submit's context with errStalled.
// A limit of 0 never fires.
type stallWatch struct {
	limit time.Duration
	now   func() time.Time // the clock (tests set theirs)

	mu    sync.Mutex
	last  time.Time
	seen  string        // the progress last seen, as progressKey
	job   *wololov1.Job // the job as last watched
	timer *time.Timer
}

// watchStall starts a watch that cancels with cancel after limit without
// progress; stop it with stop.
func watchStall(limit time.Duration, cancel context.CancelCauseFunc) *stallWatch {
	return watchStallOn(time.Now, limit, cancel)
}

// watchStallOn is watchStall judging time by now; the timer that asks
// whether it is up stays a real one.
func watchStallOn(now func() time.Time, limit time.Duration, cancel context.CancelCauseFunc) *stallWatch {
	w := &stallWatch{limit: limit, now: now, last: now()}
	if limit > 0 {
		w.timer = time.AfterFunc(limit, func() { w.check(cancel) })
	}
	return w
}

// check fires when the time is up since the last progress, else waits
// again for the rest.
func (w *stallWatch) check(cancel context.CancelCauseFunc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if left := w.limit - w.now().Sub(w.last); left > 0 {
		w.timer.Reset(left)
		return
	}
	cancel(errStalled)
}

// stop ends the watch.
func (w *stallWatch) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// restart starts the watch again from now, after a stop (a lost job
// submitted again after its fetch had stopped the watch).
func (w *stallWatch) restart() {
	w.touch()
	if w.timer != nil {
		w.timer.Reset(w.limit)
	}
}

// touch records progress now.
func (w *stallWatch) touch() {
	w.mu.Lock()
	w.last = w.now()
	w.mu.Unlock()
}

// saw records a state of the job; it is progress when it differs from
// the one seen before. A running job whose gateway reports no stages (one
// that does not gather them) cannot be judged, and counts as progress.
func (w *stallWatch) saw(job *wololov1.Job) {
	key := progressKey(job)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.job = job
	blind := job.GetState() == wololov1.JobState_JOB_STATE_RUNNING && len(job.GetStages()) == 0
	if key != w.seen || blind {
		w.seen, w.last = key, w.now()
	}
}

// lastJob is the job as last seen, nil if none.
func (w *stallWatch) lastJob() *wololov1.Job {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.job
}

// progressKey is what of a job's state counts as progress.
func progressKey(j *wololov1.Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", j.GetState())
	for _, f := range InputReports(j) {
		fmt.Fprintf(&b, " %d", f.GetOffset())
	}
	for _, s := range j.GetStages() {
		fmt.Fprintf(&b, " %s:%d:%t", s.GetStage(), s.GetRowsIn(), s.GetFinished())
	}
	return b.String()
}

// stalledError says what a job that made no progress for limit is stuck
// on, from its last state (nil: the gateway told nothing of it): the
// stages with instances that do not answer, else the stages not done
// with it; and the channels whose receivers have not acknowledged their
// batches, with their links' last errors (StageProgress.backlog). It is
// marked cli.ErrStalled (exit 6).
func stalledError(id string, limit time.Duration, job *wololov1.Job) error {
	what := stuckOn(job)
	return cli.Mark(fmt.Errorf("job %s made no progress for %s (--stall-timeout): %s", id, limit, what), cli.ErrStalled)
}

// stuckOn describes where a job stands still.
func stuckOn(job *wololov1.Job) string {
	if job == nil {
		return "the gateway acknowledged no upload and reported nothing of the job"
	}
	var down, busy []string
	for _, s := range job.GetStages() {
		if n := len(s.GetUnreachable()); n > 0 {
			down = append(down, fmt.Sprintf("stage %s: %s (%d of %d instances) not answering the gateway", s.GetStage(), strings.Join(s.GetUnreachable(), ", "), n, s.GetInstances()))
		} else if !s.GetFinished() {
			busy = append(busy, fmt.Sprintf("%s (%d rows applied)", s.GetStage(), s.GetRowsIn()))
		}
	}
	state := StateWord(job.GetState())
	channels := ""
	if b := backlogLines(job); len(b) > 0 {
		channels = "; channels whose receiver has not acknowledged their batches: " + strings.Join(b, "; ")
	}
	switch {
	case len(down) > 0:
		return fmt.Sprintf("it is %s; %s%s; a master restarts a process that exited, not one that is stopped or whose host is cut off (`wololo top` shows the processes)", state, strings.Join(down, "; "), channels)
	case len(busy) > 0 && channels != "":
		return fmt.Sprintf("it is %s; every process answers, but these stages, not done with it, applied no new rows: %s%s (a refusal no retry changes fails the job instead)", state, strings.Join(busy, ", "), channels)
	case len(busy) > 0:
		return fmt.Sprintf("it is %s; every process answers, but these stages, not done with it, applied no new rows: %s (`wololo top` shows their backlog; a process whose stream its receiver keeps refusing logs \"stream to receiver broken, reconnecting\" with the receiver's reason, and a refusal no retry changes fails the job instead)", state, strings.Join(busy, ", "))
	case job.GetState() == wololov1.JobState_JOB_STATE_UPLOADING:
		return "it is uploading, and the gateway acknowledged no new bytes" + channels
	}
	return fmt.Sprintf("it is %s, and the gateway reports no stage at work on it%s", state, channels)
}

// backlogLines are a job's channels with batches not acknowledged, as its
// stages list them (StageProgress.backlog), one line each: those whose
// link failed first, "channel S from A to B: N batches unacknowledged
// (not connected; last error: E)".
func backlogLines(job *wololov1.Job) []string {
	var failed, rest []string
	for _, s := range job.GetStages() {
		for _, b := range s.GetBacklog() {
			line := backlogLine(b)
			if b.GetLastError() != "" {
				failed = append(failed, line)
			} else {
				rest = append(rest, line)
			}
		}
		if n := s.GetBacklogMore(); n > 0 {
			rest = append(rest, fmt.Sprintf("%d more from stage %s", n, s.GetStage()))
		}
	}
	return append(failed, rest...)
}

// backlogLine says one channel's backlog.
func backlogLine(b *wololov1.ChannelBacklog) string {
	var why []string
	if !b.GetConnected() {
		why = append(why, "not connected")
	}
	if e := b.GetLastError(); e != "" {
		why = append(why, "last error: "+e)
	}
	line := fmt.Sprintf("channel %s from %s to %s: %d batches unacknowledged", b.GetStream(), b.GetSender(), b.GetReceiver(), b.GetUnacknowledged())
	if len(why) > 0 {
		line += " (" + strings.Join(why, "; ") + ")"
	}
	return line
}
