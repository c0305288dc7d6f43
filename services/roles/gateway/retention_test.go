package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// TestOpenStandingJobOutlivesTheRetention: with a short --retention, an
// abandoned batch upload and a standing job whose append's upload was
// left unfinished are dropped, while an open standing job waiting for
// its next append (idle longer than both) is kept, until its own
// --standing-retention runs out; then it is dropped too, saying which
// flag dropped it.
func TestOpenStandingJobOutlivesTheRetention(t *testing.T) {
	store := transport.NewMemStore()
	dropped := make(chan string, 8)
	cfg := Config{Retention: 100 * time.Millisecond, StandingRetention: time.Hour, Epochs: (&fakeEpochs{}).runtime()}
	g := newTestGateway(t, store, cfg, dropped)
	svc := g.Service()
	ctx := context.Background()
	for _, name := range []string{"waiting", "appending"} {
		if _, err := svc.CreateJob(ctx, standingRequest(name)); err != nil {
			t.Fatal(err)
		}
		uploadEpoch(t, svc, name, 1, tMatches, tPlayers)
	}
	if _, err := svc.AppendJob(ctx, appendRequest("appending", sPlayers)); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateJob(ctx, createRequest("batch")); err != nil {
		t.Fatal(err)
	}
	waiting, appending, batch := internalID(t, g, "waiting"), internalID(t, g, "appending"), internalID(t, g, "batch")
	gone := map[string]bool{}
	testkit.WaitFor(t, "the abandoned uploads dropped", 10*time.Second, func() bool {
		for {
			select {
			case id := <-dropped:
				gone[id] = true
			default:
				return gone[appending] && gone[batch]
			}
		}
	})
	if gone[waiting] {
		t.Fatal("the open standing job waiting for its next append was dropped after --retention")
	}
	if j := getJob(t, svc, "waiting"); !j.Open || j.State == wololov1.JobState_JOB_STATE_FAILED {
		t.Fatalf("the waiting job: %+v", j)
	}

	// Its own retention, short: it goes too.
	cfg.Retention, cfg.StandingRetention = time.Hour, 100*time.Millisecond
	g2 := newTestGateway(t, store, cfg, dropped)
	testkit.WaitFor(t, "the waiting job dropped after --standing-retention", 10*time.Second, func() bool {
		select {
		case id := <-dropped:
			gone[id] = true
		default:
		}
		return gone[waiting]
	})
	_, err := g2.Service().GetJob(ctx, &wololov1.GetJobRequest{JobId: "waiting"})
	if err == nil || !strings.Contains(err.Error(), "--standing-retention") {
		t.Fatalf("the dropped job: %v; want it said dropped for --standing-retention", err)
	}
}
