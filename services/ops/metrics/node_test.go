package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/version"
	"github.com/wololo/wololo/transport"
)

// TestNodeMetricsFollowTheJobs: the node's series come from the jobs the
// process holds at scrape time, labelled with job, stream and peer and
// with the process's stage and instance; a dropped job's series are gone
// at the next scrape.
func TestNodeMetricsFollowTheJobs(t *testing.T) {
	jobs := []*wololov1.JobProgress{{
		JobId: "j1", RowsIn: 7, RowsOut: 5, BackpressureWaits: 2, BackpressureSeconds: 0.5,
		Outputs: []*wololov1.OutputChannel{{Stream: "q1-tokens", Receiver: "gateway-0", LastSeq: 9, Acked: 6, OutboxDepth: 3, Batches: 9, Rows: 90, Bytes: 900, Connected: true}},
		Inputs:  []*wololov1.InputChannel{{Stream: "matches", Sender: "gateway-0", Watermark: 4, Batches: 4, Rows: 40, Bytes: 400}},
	}}
	reg := New("shard", "shard-1", "joiner", version.Info{Version: "v1.2.3", Go: "go1.26.8"})
	times := NewStoreTimes()
	recovering := false
	err := reg.Register(append(times.Collectors(), NewNodeCollector(NodeSource{Status: func() *wololov1.GetResponse {
		r := &wololov1.GetResponse{Incarnation: 4, Recovering: recovering, Store: &wololov1.StoreCounters{Commits: 3, Bytes: 300, Syncs: 2}}
		if !recovering {
			r.Jobs, r.RecoveryLoadSeconds, r.RecoveryReplaySeconds = jobs, 0.25, 0.5
		}
		return r
	}}))...)
	if err != nil {
		t.Fatal(err)
	}
	store := TimeCommits(transport.NewMemStore(), times.Commit)
	if err := store.Commit(&transport.Commit{Job: "j1"}); err != nil {
		t.Fatal(err)
	}
	scrape := func() string {
		rec := httptest.NewRecorder()
		reg.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	text := scrape()
	for _, want := range []string{
		`wololo_channel_sent_rows_total{process="shard-1",receiver="gateway-0",stage="shard",stream="q1-tokens",wololo_job="j1"} 90`,
		`wololo_channel_sent_bytes_total{process="shard-1",receiver="gateway-0",stage="shard",stream="q1-tokens",wololo_job="j1"} 900`,
		`wololo_channel_lag_batches{process="shard-1",receiver="gateway-0",stage="shard",stream="q1-tokens",wololo_job="j1"} 3`,
		`wololo_outbox_depth_batches{process="shard-1",receiver="gateway-0",stage="shard",stream="q1-tokens",wololo_job="j1"} 3`,
		`wololo_channel_received_rows_total{process="shard-1",sender="gateway-0",stage="shard",stream="matches",wololo_job="j1"} 40`,
		`wololo_backpressure_wait_seconds_total{process="shard-1",stage="shard",wololo_job="j1"} 0.5`,
		`wololo_job_rows_in_total{process="shard-1",stage="shard",wololo_job="j1"} 7`,
		`wololo_store_commits_total{process="shard-1",stage="shard"} 3`,
		`wololo_store_commit_seconds_count{process="shard-1",stage="shard"} 1`,
		`wololo_recovery_seconds{phase="replay",process="shard-1",stage="shard"} 0.5`,
		`wololo_process_incarnation{process="shard-1",stage="shard"} 4`,
		`go_goroutines{process="shard-1",stage="shard"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in\n%s", want, text)
		}
	}
	jobs = nil // the job was dropped
	if text := scrape(); strings.Contains(text, `wololo_job="j1"`) {
		t.Errorf("the dropped job's series are still served:\n%s", text)
	}
	// While the process recovers it says so, and serves neither jobs
	// (being rebuilt) nor a recovery time (not known yet).
	jobs, recovering = []*wololov1.JobProgress{{JobId: "j2"}}, true
	text = scrape()
	if !strings.Contains(text, `wololo_process_recovering{process="shard-1",stage="shard"} 1`) || strings.Contains(text, `wololo_job="j2"`) || strings.Contains(text, "wololo_recovery_seconds") {
		t.Errorf("while recovering:\n%s", text)
	}
}

// TestNodeMetricsNumberAPlansStreams: a job whose streams Streams renames
// (a job of SQL queries) has its channels' series labelled by the names
// given (stream="ch0"), and a stream it gives none by UnnamedStream,
// never by the stream's own name, made of the client's query and column
// names; a job of the built-in graph keeps its streams' names.
func TestNodeMetricsNumberAPlansStreams(t *testing.T) {
	reg := New("shard", "shard-1", "shard", version.Info{})
	err := reg.Register(NewNodeCollector(NodeSource{
		Status: func() *wololov1.GetResponse {
			return &wololov1.GetResponse{Jobs: []*wololov1.JobProgress{
				{JobId: "sql", Outputs: []*wololov1.OutputChannel{{Stream: "acme_payroll-to-gateway", Receiver: "gateway-0", Rows: 3}},
					Inputs: []*wololov1.InputChannel{{Stream: "acme_staff-by-employee_ssn", Sender: "gateway-0", Rows: 5}}},
				{JobId: "graph", Outputs: []*wololov1.OutputChannel{{Stream: "q3-partials", Receiver: "q3-aggregator-0", Rows: 7}}},
			}}
		},
		Streams: func(job string) (map[string]string, bool) {
			if job == "sql" {
				return map[string]string{"acme_payroll-to-gateway": "ch1"}, true
			}
			return nil, false
		},
	}))
	if err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]http.Handler{"Handler": reg.Handler(), "PublicHandler": reg.PublicHandler()} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		text := rec.Body.String()
		for _, want := range []string{
			`wololo_channel_sent_rows_total{process="shard-1",receiver="gateway-0",stage="shard",stream="ch1"`,
			`wololo_channel_received_rows_total{process="shard-1",sender="gateway-0",stage="shard",stream="` + UnnamedStream + `"`,
			`wololo_channel_sent_rows_total{process="shard-1",receiver="q3-aggregator-0",stage="shard",stream="q3-partials"`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: no %s in\n%s", name, want, text)
			}
		}
		for _, tenant := range []string{"acme", "employee_ssn"} {
			if strings.Contains(text, tenant) {
				t.Errorf("%s shows %q:\n%s", name, tenant, text)
			}
		}
	}
}
