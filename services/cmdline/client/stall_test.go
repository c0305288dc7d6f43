package client

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
)

func TestStuckOn(t *testing.T) {
	running := wololov1.JobState_JOB_STATE_RUNNING
	for _, c := range []struct {
		name string
		job  *wololov1.Job
		want string
	}{
		{"shards down", &wololov1.Job{State: running, Stages: []*wololov1.StageProgress{
			{Stage: "gateway", Instances: 1, RowsIn: 10, Finished: true},
			{Stage: "shard", Instances: 2, Unreachable: []string{"shard-0", "shard-1"}},
		}}, "stage shard: shard-0, shard-1 (2 of 2 instances) not answering the gateway"},
		{"a stage backed up", &wololov1.Job{State: running, Stages: []*wololov1.StageProgress{
			{Stage: "shard", Instances: 2, RowsIn: 40, Finished: true},
			{Stage: "q3-joiner", Instances: 2, RowsIn: 7},
		}}, "q3-joiner (7 rows applied) (`wololo top` shows their backlog; a process whose stream its receiver keeps refusing logs \"stream to receiver broken, reconnecting\""},
		{"upload", &wololov1.Job{State: wololov1.JobState_JOB_STATE_UPLOADING}, "acknowledged no new bytes"},
		{"nothing known", nil, "reported nothing"},
	} {
		err := stalledError("j", time.Minute, c.job)
		if !strings.Contains(err.Error(), c.want) || cli.ExitCode(err) != cli.ExitStalled || !strings.Contains(err.Error(), "job j made no progress for 1m0s") {
			t.Errorf("%s: %v (exit %d), want %q", c.name, err, cli.ExitCode(err), c.want)
		}
	}
}

// TestStallWatchFires: progress keeps the watch quiet, and so does a
// running job whose gateway reports no stages (it cannot be judged); the
// same state again is no progress, and the watch fires once limit has
// passed since the last progress, not a moment before. The time is the
// test's clock; the watch's real timer asks every limit at most, and asks
// again while there is time left, so it is what fires in the end.
func TestStallWatchFires(t *testing.T) {
	const limit = 20 * time.Millisecond
	var clock atomic.Int64 // nanoseconds
	var timerOnly atomic.Bool
	asked := make(chan struct{}, 1) // the clock read when only the timer reads it
	now := func() time.Time {
		if timerOnly.Load() {
			select {
			case asked <- struct{}{}:
			default:
			}
		}
		return time.Unix(0, clock.Load())
	}
	fired := make(chan error, 1)
	w := watchStallOn(now, limit, func(cause error) {
		select {
		case fired <- cause:
		default:
		}
	})
	defer w.stop()
	quiet := func(why string) {
		t.Helper()
		w.check(func(error) { t.Fatalf("fired %s", why) })
		select {
		case <-fired:
			t.Fatalf("fired %s", why)
		default:
		}
	}
	job := &wololov1.Job{State: wololov1.JobState_JOB_STATE_RUNNING, Stages: []*wololov1.StageProgress{{Stage: "shard", RowsIn: 1}}}
	blind := &wololov1.Job{State: wololov1.JobState_JOB_STATE_RUNNING}
	for _, c := range []struct {
		why string
		saw func()
	}{
		{"while the job made progress", func() { job.Stages[0].RowsIn++; w.saw(job) }},
		{"on a job whose gateway reports no stages", func() { w.saw(blind) }},
	} {
		for i := 0; i < 5; i++ { // 5 * limit/2 in all, limit/2 at most without progress
			clock.Add(int64(limit / 2))
			quiet(c.why)
			c.saw()
		}
	}
	for i := 0; i < 5; i++ { // the same state again is no progress (and reads no clock)
		w.saw(job)
	}
	clock.Add(int64(limit / 2))
	quiet("with half the limit passed since the last progress")
	// The timer, which found time left, asks again: twice.
	timerOnly.Store(true)
	for i := 0; i < 2; i++ {
		select {
		case <-asked:
		case <-time.After(10 * time.Second):
			t.Fatalf("the watch's timer stopped asking while there was time left (asked %d times)", i)
		}
	}
	timerOnly.Store(false)
	clock.Add(int64(limit/2 - 1))
	quiet("before the limit had passed since the last progress")
	clock.Add(1)
	select {
	case cause := <-fired:
		if !errors.Is(cause, errStalled) {
			t.Fatalf("cause %v, want errStalled", cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch's timer did not fire once the limit had passed")
	}
}

// TestStuckOnNamesTheChannel: a job whose channel its receiver never
// acknowledges (a receiver that refuses the link, or is stopped) gives up
// naming the channel, its sender and receiver, and its link's last error,
// those whose link fails first; `client status` and `watch` (printJob)
// and status --json show the failing one too.
func TestStuckOnNamesTheChannel(t *testing.T) {
	refused := &wololov1.ChannelBacklog{Stream: "c1-q1-to-gateway", Sender: "shard-0", Receiver: "gateway-0", Unacknowledged: 12,
		LastError: "open stream: rpc error: code = Unavailable desc = the gateway is recovering"}
	waiting := &wololov1.ChannelBacklog{Stream: "c0-matches-by-token", Sender: "gateway-0", Receiver: "shard-1", Unacknowledged: 3, Connected: true}
	job := &wololov1.Job{JobId: "j", State: wololov1.JobState_JOB_STATE_RUNNING, Stages: []*wololov1.StageProgress{
		{Stage: "gateway", Instances: 1, RowsIn: 10, Backlog: []*wololov1.ChannelBacklog{waiting}},
		{Stage: "shard", Instances: 2, RowsIn: 7, Backlog: []*wololov1.ChannelBacklog{refused}, BacklogMore: 2},
	}}
	msg := stalledError("j", time.Minute, job).Error()
	want := "channels whose receiver has not acknowledged their batches: " +
		"channel c1-q1-to-gateway from shard-0 to gateway-0: 12 batches unacknowledged (not connected; last error: open stream: rpc error: code = Unavailable desc = the gateway is recovering); " +
		"channel c0-matches-by-token from gateway-0 to shard-1: 3 batches unacknowledged; 2 more from stage shard"
	if !strings.Contains(msg, want) {
		t.Errorf("stall message:\n%s\nwant it to contain\n%s", msg, want)
	}
	down := proto.Clone(job).(*wololov1.Job)
	down.Stages[1].Unreachable = []string{"shard-1"}
	if msg := stalledError("j", time.Minute, down).Error(); !strings.Contains(msg, "not answering the gateway") || !strings.Contains(msg, "last error: open stream") {
		t.Errorf("with an instance down: %s", msg)
	}

	var status strings.Builder
	printJob(&status, job)
	if got, want := status.String(), "  not acknowledged: channel c1-q1-to-gateway from shard-0 to gateway-0: 12 batches unacknowledged (not connected; last error: open stream"; !strings.Contains(got, want) || strings.Contains(got, "c0-matches-by-token") {
		t.Errorf("status prints:\n%s\nwant the failing channel only:\n%s", got, want)
	}
	r := NewJobReport("j", job)
	if len(r.FailingChannels) != 1 || r.FailingChannels[0].Stream != "c1-q1-to-gateway" || r.FailingChannels[0].LastError != refused.LastError {
		t.Errorf("status --json's failing_channels: %+v", r.FailingChannels)
	}
}
