package node

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// TestStatusShowsFencedSenders: an instance the process's StageService
// refuses as an older incarnation than the newest it saw (after a claim
// above the real instance's, say) is in the process's Status, so that the
// masters and top can show it; once a claim at the newest is taken again,
// it is not.
func TestStatusShowsFencedSenders(t *testing.T) {
	server := transport.NewServer("gateway-0", 1, nil, nil)
	st := &statusServer{
		role: "gateway", instance: "gateway-0", started: time.Now(), store: transport.NewMemStore(),
		announced: &atomic.Bool{}, recovering: &atomic.Bool{}, loadTime: &atomic.Int64{}, replayTime: &atomic.Int64{},
		progress: func() []*wololov1.JobProgress { return nil },
		fenced:   server.Fenced,
	}
	real := transport.ClockIncarnation(time.Now())
	announce := func(inc uint64) error {
		_, err := server.Announce(context.Background(), &wololov1.AnnounceRequest{Sender: "shard-1", Incarnation: inc})
		return err
	}
	fenced := func() []*wololov1.FencedInstance {
		r, err := st.Get(context.Background(), &wololov1.GetRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Fenced
	}
	if err := announce(real + 1000); err != nil { // a claim above the real one's
		t.Fatal(err)
	}
	if got := fenced(); len(got) != 0 {
		t.Fatalf("Status lists %v before any refusal", got)
	}
	if err := announce(real); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("the real incarnation below the claim: %v, want FailedPrecondition", err)
	}
	got := fenced()
	if len(got) != 1 || got[0].Instance != "shard-1" || got[0].RefusedIncarnation != real || got[0].NewestIncarnation != real+1000 || got[0].Refusals != 1 {
		t.Fatalf("Status lists %v as fenced, want shard-1, incarnation %d refused below %d", got, real, real+1000)
	}
	if err := announce(real + 1000); err != nil {
		t.Fatal(err)
	}
	if got := fenced(); len(got) != 0 {
		t.Fatalf("Status lists %v once the newest was taken again", got)
	}
}
