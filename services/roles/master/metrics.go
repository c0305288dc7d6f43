package master

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/ops/metrics"
)

// masterMetrics are a master's Prometheus metrics: the election's state
// (read at scrape time), the restarts it did as leader, and how long the
// failovers that made it leader took. Whom it follows is a label of an
// info series (wololo_master_leader_info{leader="master-2"} 1) rather than
// a value: a dashboard shows the name, and count by (leader) tells at a
// glance whether the masters agree. The restarted process is the label
// "restarted", as "process" names the master itself (metrics.LabelProcess).
type masterMetrics struct {
	m        *Master
	status   func() *wololov1.MasterStatus // m.Status, read at scrape time
	restarts *prometheus.CounterVec
	failover prometheus.Histogram

	mu        sync.Mutex
	followed  time.Time // the last round this master followed another leader
	wasActing bool
}

var (
	descTerm     = prometheus.NewDesc(metrics.Namespace+"_master_term", "The highest term this master has acknowledged or claimed.", nil, nil)
	descLeader   = prometheus.NewDesc(metrics.Namespace+"_master_leader_info", "1, labelled with the master this one follows (itself when it leads); no series while it knows none.", []string{"leader"}, nil)
	descIsLeader = prometheus.NewDesc(metrics.Namespace+"_master_is_leader", "1 while this master leads.", nil, nil)
	descActing   = prometheus.NewDesc(metrics.Namespace+"_master_acting", "1 while this master leads and may restart processes (its lease holds).", nil, nil)
	descStates   = prometheus.NewDesc(metrics.Namespace+"_master_supervised_processes", "Processes this master watches, by state (alive, recovering, silent, exited, unknown).", []string{"state"}, nil)
)

func newMasterMetrics(m *Master) *masterMetrics {
	mm := &masterMetrics{
		m: m,
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace, Name: "master_restarts_total",
			Help: "Restarts this master did as the acting leader, by the process restarted and the reason (exited, silent, recovering-too-long).",
		}, []string{"restarted", "reason"}),
		failover: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: metrics.Namespace, Name: "master_failover_seconds", Buckets: metrics.LatencyBuckets,
			Help: "On a master that became the acting leader after following another: from the last round it still followed the old leader to its first acting round.",
		}),
	}
	if m != nil {
		mm.status = m.Status
	}
	return mm
}

// restarted counts one restart.
func (mm *masterMetrics) restarted(process string, cause Cause) {
	mm.restarts.WithLabelValues(process, string(cause)).Inc()
}

// round notes, once per supervision round, whom this master follows and
// whether it acts, and observes a failover when it starts acting.
func (mm *masterMetrics) round(now time.Time) {
	s := mm.m.elector.State()
	mm.see(now, s.Leader != 0 && s.Leader != mm.m.self, s.Acting)
}

// see is round's bookkeeping: following says the master follows another
// leader now, acting that it acts.
func (mm *masterMetrics) see(now time.Time, following, acting bool) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if following {
		mm.followed = now
	}
	if acting && !mm.wasActing && !mm.followed.IsZero() {
		mm.failover.Observe(now.Sub(mm.followed).Seconds())
		mm.followed = time.Time{}
	}
	mm.wasActing = acting
}

func (mm *masterMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTerm, descLeader, descIsLeader, descActing, descStates} {
		ch <- d
	}
	mm.restarts.Describe(ch)
	mm.failover.Describe(ch)
}

func (mm *masterMetrics) Collect(ch chan<- prometheus.Metric) {
	st := mm.status()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descTerm, float64(st.GetTerm()))
	if st.GetLeader() != 0 {
		gauge(descLeader, 1, deploy.Instance{Stage: deploy.MasterStage, Index: int(st.GetLeader())}.Name())
	}
	gauge(descIsLeader, metrics.Bool(st.GetElectionRole() == "leader"))
	gauge(descActing, metrics.Bool(st.GetActing()))
	states := map[string]int{"alive": 0, "recovering": 0, "silent": 0, "exited": 0, "unknown": 0}
	for _, p := range st.GetProcesses() {
		states[p.GetState()]++
	}
	for state, n := range states {
		gauge(descStates, float64(n), state)
	}
	mm.restarts.Collect(ch)
	mm.failover.Collect(ch)
}
