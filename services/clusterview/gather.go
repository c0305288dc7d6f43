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

	mu   sync.Mutex // one gathering at a time
	prev Sample
	last *wololov1.ClusterResponse
}

// Defaults of a Gatherer.
const (
	DefaultTimeout  = time.Second
	DefaultCacheFor = 250 * time.Millisecond
)

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
func (g *Gatherer) Get(ctx context.Context) *wololov1.ClusterResponse {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last != nil && time.Since(g.prev.At) < g.cacheFor {
		return g.last
	}
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
	g.last, g.prev = Summarize(g.top, answers, g.jobs(), g.prev, time.Now())
	return g.last
}
