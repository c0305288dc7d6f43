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
	want := `wololo top  gw:7100  00:00:00  (rates over 1.0s)

  STAGE  INSTANCES     STATE  ROWS IN/S  ROWS OUT/S  OUTBOX  MAX LAG  BACKPRESSURE  RESTARTS
  shard        1/2  degraded      12.3k           0       3        2            0%         4

   STREAM        FROM → TO  ROWS/S  BYTES/S  ROWS  OUTBOX  MAX LAG
  matches  gateway → shard    2.5M        0    99       0        0

MASTER    ROLE         TERM  LEADER    ACTING  RESTARTS DONE
master-1  leader       7     master-1  yes     0
master-2  unreachable                          

JOB           CLIENT  STATE      PROGRESS                       ELAPSED  ETA    FINISHED BY
nightly (x1)  alice   uploading  [##########..........]  50.0%  3s       12.3s  0 processes

not serving:
  shard-1: unreachable (connection refused)
`
	if got := b.String(); got != want {
		t.Errorf("Render wrote\n%s\nwant\n%s", got, want)
	}
}
