package client

import (
	"errors"
	"strings"
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

func TestStallWatchFires(t *testing.T) {
	fired := make(chan error, 1)
	w := watchStall(300*time.Millisecond, func(cause error) { fired <- cause })
	defer w.stop()
	job := &wololov1.Job{State: wololov1.JobState_JOB_STATE_RUNNING, Stages: []*wololov1.StageProgress{{Stage: "shard", RowsIn: 1}}}
	start := time.Now()
	for i := 0; i < 5; i++ { // progress keeps it quiet
		time.Sleep(100 * time.Millisecond)
		job.Stages[0].RowsIn++
		w.saw(job)
	}
	select {
	case <-fired:
		t.Fatal("fired while the job made progress")
	default:
	}
	blind := &wololov1.Job{State: wololov1.JobState_JOB_STATE_RUNNING}
	for i := 0; i < 5; i++ { // a gateway that reports no stages cannot be judged
		time.Sleep(100 * time.Millisecond)
		w.saw(blind)
	}
	select {
	case <-fired:
		t.Fatal("fired on a job whose gateway reports no stages")
	default:
	}
	for i := 0; i < 5; i++ { // the same state again is no progress
		w.saw(job)
	}
	select {
	case cause := <-fired:
		if !errors.Is(cause, errStalled) || time.Since(start) < 1300*time.Millisecond {
			t.Fatalf("cause %v after %s", cause, time.Since(start))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not fire")
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
