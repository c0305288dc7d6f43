package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// Gateway is the gateway's metrics: counters of its uploads, of what they
// committed and of how its jobs ended (it is services/roles/gateway.Counters),
// and each job's state read at scrape time.
type Gateway struct {
	created   prometheus.Counter
	ended     *prometheus.CounterVec
	uploads   *prometheus.CounterVec
	bytes     *prometheus.CounterVec
	records   *prometheus.CounterVec
	malformed *prometheus.CounterVec
	jobs      func() []*wololov1.ClusterJob
}

// GatewayLabels are the values the gateway's counters take, each series
// created at zero (so that a rate or an increase counts from the start):
// the input files, how an upload call ends, how a job ends
// (services/roles/gateway's constants).
type GatewayLabels struct {
	Files, Uploads, Outcomes []string
}

var descJobState = desc("gateway_job_state", "1 for each job the gateway holds, labelled with its state (uploading, running, done, failed) and its client.", LabelJob, "client", "state")

// NewGateway returns the gateway's metrics, unregistered; jobs lists the
// jobs the gateway holds (services/roles/gateway.Gateway.ClusterJobs),
// each with its client and its State named (the gauge's labels).
func NewGateway(l GatewayLabels, jobs func() []*wololov1.ClusterJob) *Gateway {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	g := &Gateway{
		created: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "gateway_jobs_created_total",
			Help: "Jobs created (a resumed one is not counted again)."}),
		ended: counter("gateway_jobs_ended_total",
			"Jobs ended, by outcome: done, failed, or deleted before either (by its client, or for inactivity).", "outcome"),
		uploads: counter("gateway_uploads_total",
			"Upload calls that took their file's upload slot, by file and how they ended: complete, paused (the client closed its stream; it resumes), broken (an error).", "file", "outcome"),
		bytes: counter("gateway_upload_bytes_total",
			"Bytes of the input files committed into the graph, by file.", "file"),
		records: counter("gateway_records_total",
			"Data records of the input files read and committed, malformed ones included, by file.", "file"),
		malformed: counter("gateway_malformed_records_total",
			"Malformed data records skipped (wrong field count, bad quoting, over the record size bound), by file.", "file"),
		jobs: jobs,
	}
	for _, o := range l.Outcomes {
		g.ended.WithLabelValues(o)
	}
	for _, f := range l.Files {
		g.bytes.WithLabelValues(f)
		g.records.WithLabelValues(f)
		g.malformed.WithLabelValues(f)
		for _, o := range l.Uploads {
			g.uploads.WithLabelValues(f, o)
		}
	}
	return g
}

// JobCreated counts a new job.
func (g *Gateway) JobCreated() { g.created.Inc() }

// JobEnded counts a job's outcome.
func (g *Gateway) JobEnded(outcome string) { g.ended.WithLabelValues(outcome).Inc() }

// Upload counts an upload call's end.
func (g *Gateway) Upload(file, outcome string) { g.uploads.WithLabelValues(file, outcome).Inc() }

// Committed counts what a commit of an upload added. A counter only
// grows (Add panics on less than zero): a negative figure, which no commit
// makes, is not counted.
func (g *Gateway) Committed(file string, bytes, records, malformed int64) {
	for _, c := range []struct {
		v   *prometheus.CounterVec
		add int64
	}{{g.bytes, bytes}, {g.records, records}, {g.malformed, malformed}} {
		if c.add > 0 {
			c.v.WithLabelValues(file).Add(float64(c.add))
		}
	}
}

// Describe and Collect make Gateway one collector, to register.
func (g *Gateway) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range g.counters() {
		c.Describe(ch)
	}
	ch <- descJobState
}

func (g *Gateway) Collect(ch chan<- prometheus.Metric) {
	for _, c := range g.counters() {
		c.Collect(ch)
	}
	for _, j := range g.jobs() {
		ch <- prometheus.MustNewConstMetric(descJobState, prometheus.GaugeValue, 1, j.GetJobId(), j.GetClient(), j.GetState())
	}
}

func (g *Gateway) counters() []prometheus.Collector {
	return []prometheus.Collector{g.created, g.ended, g.uploads, g.bytes, g.records, g.malformed}
}
