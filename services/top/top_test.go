package top

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

func TestRenderShowsWhatAnOperatorLooksFor(t *testing.T) {
	snap := &wololov1.ClusterGetResponse{
		Taken: timestamppb.New(time.Unix(0, 0)), IntervalSeconds: 1,
		Stages:    []*wololov1.ClusterStage{{Name: "shard", Instances: 2, Serving: 1, Unreachable: 1, Health: "degraded", RowsInPerSecond: 12345, OutboxDepth: 3, MaxLagBatches: 2, Restarts: 4}},
		Streams:   []*wololov1.ClusterStream{{Name: "matches", From: "gateway", To: "shard", RowsPerSecond: 2_500_000, Rows: 99}},
		Masters:   []*wololov1.ClusterMaster{{Instance: "master-1", Reachable: true, ElectionRole: "leader", Term: 7, Leader: 1, Acting: true}, {Instance: "master-2"}},
		Jobs:      []*wololov1.ClusterJob{{JobId: "x1", Name: "nightly", Client: "alice", State: "uploading", Progress: 0.5, EtaSeconds: 12.34, ElapsedSeconds: 3}},
		Processes: []*wololov1.ClusterProcess{{Instance: "shard-1", State: "unreachable", Error: "connection refused"}, {Instance: "shard-0", State: "serving"}},
	}
	var b strings.Builder
	Render(&b, "gw:7100", snap)
	out := b.String()
	for _, want := range []string{
		"rates over 1.0s", "shard", "1/2", "degraded", "12.3k", "matches", "gateway → shard", "2.5M",
		"master-1  leader", "7", "master-1", "yes", "master-2  unreachable",
		"nightly (x1)", "alice", "[##########..........]  50.0%", "12.3s",
		"shard-1: unreachable (connection refused)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "shard-0:") {
		t.Errorf("a serving process is listed as not serving:\n%s", out)
	}
}
