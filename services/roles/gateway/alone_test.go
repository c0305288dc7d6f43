package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/transport"
)

// TestAloneVerdict: the gateway's verdict on a lost shard of a job of
// the four default queries (rebuild.go, "A lost shard alone"): it can be rebuilt
// alone while the gateway applied nothing of its aggregates' channels
// (q1's may have been applied: its rows follow the matches it is sent),
// not once it applied one of q3's batches; the other shard's batches do
// not count; a loss that names no shard (the gateway, or nobody) has no
// verdict.
func TestAloneVerdict(t *testing.T) {
	svc := testGatewayWith(t, transport.NewMemStore(), Config{Retention: time.Hour}, make(chan string, 4))
	g := svc.(jobService).g
	if _, err := svc.CreateJob(context.Background(), createRequest("j")); err != nil {
		t.Fatal(err)
	}
	j, err := g.jobs.get(internalID(t, g, "j"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := physical.Decode(j.plan)
	if err != nil {
		t.Fatal(err)
	}
	from := func(stream, sender string) transport.ChannelID {
		return transport.ChannelID{Job: j.id, Stream: stream, Sender: sender, Receiver: "gateway-0"}
	}
	for _, c := range []struct {
		lost  string
		marks map[transport.ChannelID]uint64
		want  string
	}{
		{"shard-1", nil, "shard-1 alone can be rebuilt exactly"},
		{"shard-1", map[transport.ChannelID]uint64{from("q1-to-gateway", "shard-1"): 4}, "shard-1 alone can be rebuilt exactly"},
		{"shard-1", map[transport.ChannelID]uint64{from("q3-to-gateway", "shard-1"): 1}, "shard-1 could not be rebuilt alone: its receiver applied 1 batches of channel q3-to-gateway"},
		{"shard-1", map[transport.ChannelID]uint64{from("q3-to-gateway", "shard-0"): 2}, "shard-1 alone can be rebuilt exactly"},
		{"gateway-0", nil, ""},
		{"", nil, ""},
	} {
		marks := c.marks
		if marks == nil {
			marks = g.cfg.Committer.Inbox().Marks(j.id) // the gateway's own inbox: nothing applied
		}
		got, ok := shardAlone(p, c.lost, marks)
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) || ok != strings.Contains(c.want, "alone can") {
			t.Errorf("lost %q, applied %v: %q (alone: %v), want %q...", c.lost, c.marks, got, ok, c.want)
		}
	}
}

// TestBatchJobsKeepTheirBatchesUntilOver: where the gateway retains
// input, the batches a batch job sends stay in the store once
// acknowledged (a lost shard of it is sent them again), until the job is
// over and lets them go; a standing job's are trimmed as they are
// acknowledged (its epochs have their own rebuild, and it may run for
// ever). A gateway restarted after a job ended and before it let go of
// them trims them as it recovers the job.
func TestBatchJobsKeepTheirBatchesUntilOver(t *testing.T) {
	ctx := context.Background()
	store := transport.NewMemStore()
	cfg := retainingConfig(t)
	svc := testGatewayWith(t, store, cfg, make(chan string, 4))
	g := svc.(jobService).g
	if _, err := svc.CreateJob(ctx, createRequest("batch")); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateJob(ctx, standingRequest("standing")); err != nil {
		t.Fatal(err)
	}
	// One batch sent to shard-1 and acknowledged, for each job.
	sent := func(name string) transport.ChannelID {
		t.Helper()
		ch := transport.ChannelID{Job: internalID(t, g, name), Stream: "c0-matches-by-token", Sender: "gateway-0", Receiver: "shard-1"}
		if _, err := g.cfg.Committer.Commit(&transport.Step{Commit: transport.Commit{Job: ch.Job}, Emit: []transport.Output{{Channel: ch, Rows: []byte("rows"), Count: 1}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := g.cfg.Committer.Outbox().Ack(ch, 1); err != nil {
			t.Fatal(err)
		}
		return ch
	}
	held := func(ch transport.ChannelID) int {
		n := 0
		if err := store.ReadOutbox(ch, 1, func(transport.Entry) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	batch, standing := sent("batch"), sent("standing")
	if held(batch) != 1 || held(standing) != 0 {
		t.Fatalf("after the acknowledgements the store holds %d batches of the batch job and %d of the standing one; want 1 and 0", held(batch), held(standing))
	}
	if err := g.cfg.Committer.Outbox().CanRewind(batch.Job, "shard-1"); err != nil {
		t.Fatalf("the batch job's channel to shard-1 cannot be sent again: %v", err)
	}
	g.jobs.dropInput(batch.Job) // the job is over
	if held(batch) != 0 {
		t.Fatal("the batch job's batches are kept after it is over")
	}

	// A restart after a job's end, before it let go of its batches.
	if _, err := svc.CreateJob(ctx, createRequest("ended")); err != nil {
		t.Fatal(err)
	}
	ended := sent("ended")
	if err := store.Commit(&transport.Commit{Job: ended.Job, Records: map[string][]byte{recordFailed: []byte("it failed"), recordFailedAt: failedRecord(time.Now())}}); err != nil {
		t.Fatal(err)
	}
	if held(ended) != 1 {
		t.Fatal("the batch was not kept")
	}
	testGatewayWith(t, store, cfg, make(chan string, 4))
	if held(ended) != 0 {
		t.Fatal("a restarted gateway kept the batches of a job that is over")
	}
}
