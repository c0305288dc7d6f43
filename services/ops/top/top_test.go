package top

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
)

func TestRenderShowsWhatAnOperatorLooksFor(t *testing.T) {
	snap := &wololov1.ClusterGetResponse{
		Taken: timestamppb.New(time.Unix(0, 0)), IntervalSeconds: 1,
		Stages:  []*wololov1.ClusterStage{{Name: "shard", Instances: 2, Serving: 1, Unreachable: 1, Health: "degraded", RowsInPerSecond: 12345, OutboxDepth: 3, MaxLagBatches: 2, Restarts: 4}},
		Streams: []*wololov1.ClusterStream{{Name: "matches", From: "gateway", To: "shard", RowsPerSecond: 2_500_000, Rows: 99}, {Name: "match_players-by-CASE_WHEN__rating___1000__THEN__low__", From: "gateway", To: "shard"}},
		Masters: []*wololov1.ClusterMaster{{Instance: "master-1", Reachable: true, ElectionRole: "leader", Term: 7, Leader: 1, Acting: true}, {Instance: "master-2"}},
		Jobs: []*wololov1.ClusterJob{
			{JobId: "x1", Name: "nightly", Client: "alice", State: "uploading", Progress: 0.5, EtaSeconds: 12.34, ElapsedSeconds: 3, Queries: queries.Names},
			{JobId: "x2", Name: "adhoc", Client: "bob", State: "running", Progress: 1, EtaSeconds: -1, ElapsedSeconds: 9, Queries: []string{"civs", "by-map"}},
		},
		Processes: []*wololov1.ClusterProcess{{Instance: "shard-1", State: "unreachable", Error: "connection refused"}, {Instance: "shard-0", State: "serving",
			Status: &wololov1.GetResponse{Fenced: []*wololov1.FencedInstance{{Instance: "shard-1", RefusedIncarnation: 100, NewestIncarnation: 3700, Refusals: 42, Seconds: 90}}}}},
	}
	var b strings.Builder
	Render(&b, "gw:7100", snap)
	want := `wololo top  gw:7100  00:00:00  (rates over 1.0s)

  STAGE  INSTANCES     STATE  ROWS IN/S  ROWS OUT/S  OUTBOX  MAX LAG  BACKPRESSURE  RESTARTS
  shard        1/2  degraded      12.3k           0       3        2            0%         4

                                    STREAM        FROM → TO  ROWS/S  BYTES/S  ROWS  OUTBOX  MAX LAG
                                   matches  gateway → shard    2.5M        0    99       0        0
  match_players-by-CASE_WHEN__rating___10…  gateway → shard       0        0     0       0        0

MASTER    ROLE         TERM  LEADER    ACTING  RESTARTS DONE
master-1  leader       7     master-1  yes     0
master-2  unreachable                          

JOB           CLIENT  QUERIES      STATE      PROGRESS                       ELAPSED  ETA    FINISHED BY
nightly (x1)  alice   q1..q4       uploading  [##########..........]  50.0%  3s       12.3s  0 processes
adhoc (x2)    bob     civs,by-map  running    [####################] 100.0%  9s       -      0 processes

not serving:
  shard-1: unreachable (connection refused)

fenced (refused as older than an incarnation claimed of them):
  shard-0 refuses shard-1: incarnation 100, 3600 newer claimed; 42 refusals in 1m30s
`
	if got := b.String(); got != want {
		t.Errorf("Render wrote\n%s\nwant\n%s", got, want)
	}
}

// fakeCluster answers Cluster/Get with an empty snapshot.
type fakeCluster struct {
	wololov1.UnimplementedClusterServer
}

func (fakeCluster) Get(context.Context, *wololov1.ClusterGetRequest) (*wololov1.ClusterGetResponse, error) {
	return &wololov1.ClusterGetResponse{Taken: timestamppb.Now(), IntervalSeconds: 1}, nil
}

// frames signals each snapshot top draws.
type frames struct{ drawn chan struct{} }

func (f frames) Write(p []byte) (int, error) {
	if strings.HasPrefix(string(p), "wololo top ") {
		select {
		case f.drawn <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

// TestInterruptedTopIsAnInterruption: Ctrl-C while top waits for its next
// snapshot returns the context's error, so that main exits 130 as the
// exit table says, not 0.
func TestInterruptedTopIsAnInterruption(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	wololov1.RegisterClusterServer(srv, fakeCluster{})
	go srv.Serve(l)
	defer srv.Stop()
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	out := frames{drawn: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{"--insecure", "--server", l.Addr().String(), "--interval", "1h"}, out, io.Discard)
	}()
	select {
	case <-out.drawn:
	case err := <-done:
		t.Fatalf("top ended before drawing: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("top drew nothing in 10 s")
	}
	interrupt()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted top returned %v, want the interruption (context.Canceled)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("top did not end within 10 s of the interruption")
	}
}
