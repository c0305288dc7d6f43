package clusterview

import (
	"context"
	"sync"
	"time"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// StatusFunc asks one instance (of the graph, or a master) for its Status.
type StatusFunc func(ctx context.Context, instance string) (*wololov1.GetResponse, error)

// Gatherer takes snapshots of a deployment.
type Gatherer struct {
	top    deploy.Topology
	status StatusFunc
	jobs   func() []*wololov1.ClusterJob
	// Timeout bounds each process's Status call; CacheFor is how long a
	// snapshot is served again instead of gathering anew.
	timeout, cacheFor time.Duration

	mu      sync.Mutex // one gathering at a time
	history []Sample   // oldest first, the newest last
	last    *wololov1.ClusterGetResponse
}

// Defaults of a Gatherer.
const (
	DefaultTimeout  = time.Second
	DefaultCacheFor = 250 * time.Millisecond
)

// RateWindow is the shortest time rates are taken over: the gateway's
// uploads commit in chunks, so a shorter window would show bursts and
// gaps rather than a rate. Samples are kept for KeepSamples.
const (
	RateWindow  = time.Second
	KeepSamples = 10 * time.Second
)

// base is the sample to take rates against at now: the newest one at
// least RateWindow old, else the oldest there is.
func base(history []Sample, now time.Time) Sample {
	var b Sample
	for _, s := range history {
		if b.counters == nil || now.Sub(s.At) >= RateWindow {
			b = s
		}
	}
	return b
}

// NewGatherer returns a Gatherer of top's processes and masters; jobs is
// the gateway's list of jobs (nil: none).
func NewGatherer(top deploy.Topology, status StatusFunc, jobs func() []*wololov1.ClusterJob) *Gatherer {
	if jobs == nil {
		jobs = func() []*wololov1.ClusterJob { return nil }
	}
	return &Gatherer{top: top, status: status, jobs: jobs, timeout: DefaultTimeout, cacheFor: DefaultCacheFor}
}

// Get returns a snapshot: the last one if it is younger than the cache
// period, else a new one, every process asked at once.
func (g *Gatherer) Get(ctx context.Context) *wololov1.ClusterGetResponse {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.history); n > 0 && time.Since(g.history[n-1].At) < g.cacheFor {
		return g.last
	}
	// The snapshot is shared by every viewer: one that goes away does not
	// cut it short (each call has its own timeout).
	ctx = context.WithoutCancel(ctx)
	instances := append(g.top.Instances(), g.top.MasterInstances()...)
	answers := make([]Answer, len(instances))
	var wg sync.WaitGroup
	for i, in := range instances {
		answers[i].Instance = in.Name()
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, g.timeout)
			defer cancel()
			answers[i].Status, answers[i].Err = g.status(cctx, answers[i].Instance)
		}()
	}
	wg.Wait()
	now := time.Now()
	var cur Sample
	g.last, cur = Summarize(g.top, answers, g.jobs(), base(g.history, now), now)
	g.history = append(g.history, cur)
	for len(g.history) > 1 && now.Sub(g.history[0].At) > KeepSamples {
		g.history = g.history[1:]
	}
	return g.last
}
