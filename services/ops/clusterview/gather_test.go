package clusterview

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// TestGathererAsksEveryProcessOncePerPeriod: every instance and master is
// asked, a snapshot is served again within the cache period, and a
// process that does not answer is shown unreachable with the reason.
func TestGathererAsksEveryProcessOncePerPeriod(t *testing.T) {
	top := deploy.Default()
	var calls atomic.Int64
	g := NewGatherer(top, func(ctx context.Context, instance string) (*wololov1.GetResponse, error) {
		calls.Add(1)
		if instance == "shard-1" {
			return nil, errors.New("connection refused")
		}
		return &wololov1.GetResponse{Instance: instance}, nil
	}, nil)
	g.cacheFor = time.Hour
	want := int64(len(top.Instances()) + top.Masters)
	first := g.Get(context.Background())
	if again := g.Get(context.Background()); again != first || calls.Load() != want {
		t.Errorf("two Gets within the cache period: %d Status calls, same snapshot %v; want %d and true", calls.Load(), again == first, want)
	}
	states := map[string]string{}
	for _, p := range first.GetProcesses() {
		states[p.GetInstance()] = p.GetState() + " " + p.GetError()
	}
	if len(states) != int(want) || states["shard-1"] != "unreachable connection refused" || states["master-2"] != "serving " {
		t.Errorf("processes: %v", states)
	}
	g.cacheFor = 0
	if g.Get(context.Background()); calls.Load() != 2*want {
		t.Errorf("after the cache period: %d Status calls, want %d", calls.Load(), 2*want)
	}
}
