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
