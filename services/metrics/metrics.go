// Package metrics is one Wololo process's Prometheus metrics: the registry
// that labels every series with the process's stage and instance, the
// collector of a graph node (channels, outboxes, backpressure, store,
// recovery), the store's commit and sync latency histograms, the counters
// of what the gRPC servers refuse (Refusals), and the HTTP handler
// /metrics serves.
//
// Instrumentation is pull-based where it can be: the node collector reads,
// at scrape time, the counters the transport and the stage runtime keep
// anyway for Status (updated once per batch under locks they take already),
// so a job's series exist exactly while the process holds the job and
// vanish when it is dropped, with no deletion to forget. Only the latency
// histograms are observed on the commit path, once per commit or sync.
// A channel's bytes cost nothing extra: a batch travels as its encoding,
// and the counters add its length.
//
// A job's series carry its id in a "job" label, which only the operator
// may read (as only the operator may call Cluster/Get): the registry has
// two handlers, Handler with every label for an authenticated scraper and
// PublicHandler with TenantLabels summed away for anyone else (redact.go);
// services/admin picks one per request.
//
// It reads state; it never changes it, serves nothing itself and opens no
// sockets (services/admin serves the handlers).
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wololo/wololo/transport"
)

// Namespace prefixes every Wololo metric.
const Namespace = "wololo"

// Registry is a process's metrics: every series it gathers carries the
// process's stage and instance labels.
type Registry struct {
	reg     *prometheus.Registry
	labeled prometheus.Registerer
}

// New returns the registry of the process instance of stage, with the Go
// runtime's and the process's standard collectors registered.
func New(stage, instance string) *Registry {
	reg := prometheus.NewRegistry()
	labeled := prometheus.WrapRegistererWith(prometheus.Labels{"stage": stage, "instance": instance}, reg)
	labeled.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Registry{reg: reg, labeled: labeled}
}

// Register adds collectors; their series get the process's labels.
func (r *Registry) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := r.labeled.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Handler serves the registry in the Prometheus text format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{})
}

// LatencyBuckets are the buckets of the latency histograms: 50 µs to
// about 13 s, doubling.
var LatencyBuckets = prometheus.ExponentialBuckets(50e-6, 2, 19)

// StoreTimes are the store's latency histograms: a commit (the whole
// Store.Commit call, the wait for a group's sync included) and one sync
// to stable storage (fdatasync, or Pebble's WAL fsync).
type StoreTimes struct {
	Commit prometheus.Histogram
	Sync   prometheus.Histogram
}

// NewStoreTimes returns unregistered histograms; Collectors lists them.
func NewStoreTimes() *StoreTimes {
	return &StoreTimes{
		Commit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "store_commit_seconds", Buckets: LatencyBuckets,
			Help: "Time of one store commit (one application step), the wait for its group's sync included.",
		}),
		Sync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "store_sync_seconds", Buckets: LatencyBuckets,
			Help: "Time of one sync of the store to stable storage (fdatasync of a segment, or of Pebble's WAL).",
		}),
	}
}

// ObserveSync records one sync; it is segstore's Options.OnSync.
func (t *StoreTimes) ObserveSync(d time.Duration) { t.Sync.Observe(d.Seconds()) }

// Collectors are the histograms, to register.
func (t *StoreTimes) Collectors() []prometheus.Collector {
	return []prometheus.Collector{t.Commit, t.Sync}
}

// TimeCommits wraps a store so that every Commit is observed in h.
func TimeCommits(st transport.Store, h prometheus.Histogram) transport.Store {
	return timedStore{Store: st, h: h}
}

type timedStore struct {
	transport.Store
	h prometheus.Histogram
}

func (s timedStore) Commit(c *transport.Commit) error {
	start := time.Now()
	err := s.Store.Commit(c)
	s.h.Observe(time.Since(start).Seconds())
	return err
}
