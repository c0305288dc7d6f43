// Package metrics is one Wololo process's Prometheus metrics: the registry
// that labels every series with the process's stage and name (and serves
// wololo_build_info), the
// collector of a graph node (channels, outboxes, backpressure, store,
// recovery), the store's commit and sync latency histograms, the counters
// of what the gRPC servers refuse (Refusals), the gRPC servers' own
// metrics (NewRPCServerMetrics), the gateway's counters of uploads, rows and
// job outcomes (Gateway), and the HTTP handler /metrics serves.
//
// # Labels
//
// No Wololo series carries a "job" or "instance" label: those are the
// labels Prometheus gives every series of a scrape target (the scrape
// job's name and the target's address), and a series that carries its
// own either loses it to the target's (as exported_job) or, with
// honor_labels, overwrites the target's. So a process is named by
// LabelProcess ("process", e.g. shard-1) beside "stage", and a job by
// LabelJob ("wololo_job", its internal id); a scraper needs no
// honor_labels, and its own job and instance labels stay as it set them.
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
// A job's series carry its id in the wololo_job label, which only the operator
// may read (as only the operator may call Cluster/Get): the registry has
// two handlers, Handler with every label for an authenticated scraper and
// PublicHandler with TenantLabels summed away for anyone else (redact.go);
// services/ops/admin picks one per request.
//
// No series names a client's query, table or column, whoever scrapes: a
// job's streams are named after its queries, tables and keys, so a
// channel's stream label is the channel's number in the job's plan
// ("ch3", NodeSource.Streams). The
// names are the operator's to read where the operator's credential is
// asked for: Status, the dashboard page, /api/cluster.
//
// It reads state; it never changes it, serves nothing itself and opens no
// sockets (services/ops/admin serves the handlers).
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wololo/wololo/services/cmdline/version"
	"github.com/wololo/wololo/transport"
)

// Namespace prefixes every Wololo metric.
const Namespace = "wololo"

// The labels that name a process and a job (see "Labels" in the package
// doc for why not "instance" and "job").
const (
	LabelProcess = "process"
	LabelJob     = "wololo_job"
)

// Registry is a process's metrics: every series it gathers carries the
// process's stage and LabelProcess labels.
type Registry struct {
	reg     *prometheus.Registry
	labeled prometheus.Registerer
}

// New returns the registry of the process named process of stage, with
// the Go runtime's and the process's standard collectors registered, and
// wololo_build_info of build with role (the stage's role: gateway,
// filter, ..., or master).
func New(stage, process, role string, build version.Info) *Registry {
	reg := prometheus.NewRegistry()
	labeled := prometheus.WrapRegistererWith(prometheus.Labels{"stage": stage, LabelProcess: process}, reg)
	labeled.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), NewBuildInfo(role, build))
	return &Registry{reg: reg, labeled: labeled}
}

// NewBuildInfo is wololo_build_info: one series, always 1, whose labels say
// which build runs (version, commit, go_version) and as what (role), so
// that a query can join it to any other series by process, and a
// dashboard can show which processes run which commit during a rollout.
// A build without VCS information has commit "unknown"; one with
// uncommitted changes has "-modified" after its commit.
func NewBuildInfo(role string, build version.Info) prometheus.Collector {
	commit := build.Commit
	switch {
	case commit == "":
		commit = "unknown"
	case build.Modified:
		commit += "-modified"
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help:        "1, labelled with the version, commit and Go version of the binary and the role the process runs as.",
		ConstLabels: prometheus.Labels{"version": build.Version, "commit": commit, "go_version": build.Go, "role": role},
	})
	g.Set(1)
	return g
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

// Record reads through to the store it wraps (transport.ReadRecord).
func (s timedStore) Record(job, name string) ([]byte, bool, error) {
	return transport.ReadRecord(s.Store, job, name)
}

func (s timedStore) Commit(c *transport.Commit) error {
	start := time.Now()
	err := s.Store.Commit(c)
	s.h.Observe(time.Since(start).Seconds())
	return err
}
