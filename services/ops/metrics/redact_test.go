package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/version"
)

// TestPublicMetricsNameNoJob: the node's series of two jobs, scraped
// without credentials, are summed over the jobs with no job label left,
// while the full handler keeps each job's.
func TestPublicMetricsNameNoJob(t *testing.T) {
	out := func(rows int64) []*wololov1.OutputChannel {
		return []*wololov1.OutputChannel{{Stream: "q1-tokens", Receiver: "gateway-0", LastSeq: 9, Acked: 6, Rows: rows}}
	}
	reg := New("shard", "shard-1", "joiner", version.Info{Version: "v1.2.3", Go: "go1.26.8"})
	err := reg.Register(NewNodeCollector(NodeSource{Status: func() *wololov1.GetResponse {
		return &wololov1.GetResponse{Jobs: []*wololov1.JobProgress{
			{JobId: "alices-nightly", Finished: true, RowsIn: 7, Outputs: out(90)},
			{JobId: "bobs-payroll", RowsIn: 5, Outputs: out(10)},
		}}
	}}))
	if err != nil {
		t.Fatal(err)
	}
	hist := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "h", Buckets: []float64{1, 2}}, []string{LabelJob, "phase"})
	hist.WithLabelValues("alices-nightly", "load").Observe(0.5)
	hist.WithLabelValues("bobs-payroll", "load").Observe(1.5)
	summary := prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: "s", Objectives: map[float64]float64{0.5: 0.05}}, []string{"client"})
	summary.WithLabelValues("alice").Observe(1)
	if err := reg.Register(hist, summary); err != nil {
		t.Fatal(err)
	}
	scrape := func(full bool) string {
		h := reg.PublicHandler()
		if full {
			h = reg.Handler()
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	cases := []struct {
		name       string
		full       bool
		want, not_ []string
	}{
		{"public", false, []string{
			`wololo_job_rows_in_total{process="shard-1",stage="shard"} 12`,
			`wololo_job_finished{process="shard-1",stage="shard"} 1`,
			`wololo_channel_sent_rows_total{process="shard-1",receiver="gateway-0",stage="shard",stream="q1-tokens"} 100`,
			`wololo_channel_lag_batches{process="shard-1",receiver="gateway-0",stage="shard",stream="q1-tokens"} 6`,
			`wololo_jobs{process="shard-1",stage="shard"} 2`,
			`h_bucket{phase="load",process="shard-1",stage="shard",le="1"} 1`,
			`h_bucket{phase="load",process="shard-1",stage="shard",le="2"} 2`,
			`h_count{phase="load",process="shard-1",stage="shard"} 2`,
		}, []string{"alice", "bob", "wololo_job=", "client=", "\ns_count"}},
		{"operator", true, []string{
			`wololo_job_rows_in_total{process="shard-1",stage="shard",wololo_job="alices-nightly"} 7`,
			`wololo_channel_sent_rows_total{process="shard-1",receiver="gateway-0",stage="shard",stream="q1-tokens",wololo_job="bobs-payroll"} 10`,
			`s_count{client="alice",process="shard-1",stage="shard"} 1`,
		}, nil},
	}
	for _, c := range cases {
		text := scrape(c.full)
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: no %s in\n%s", c.name, w, text)
			}
		}
		for _, n := range c.not_ {
			if strings.Contains(text, n) {
				t.Errorf("%s: %q in\n%s", c.name, n, text)
			}
		}
	}
}
