package e2e

import (
	"context"
	"crypto/tls"
	"io"
	"maps"
	"net"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/deploy/observability"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
)

// sample is one series of a scrape: its name as a query reads it
// (NAME_bucket with le for a histogram's buckets) and its labels.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// flatten turns a scrape's families into the series a query selects.
func flatten(fams map[string]*dto.MetricFamily) []sample {
	var out []sample
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			with := func(k, v string) map[string]string {
				c := maps.Clone(labels)
				c[k] = v
				return c
			}
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					out = append(out, sample{name + "_bucket", with("le", strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)), float64(b.GetCumulativeCount())})
				}
				out = append(out, sample{name + "_bucket", with("le", "+Inf"), float64(h.GetSampleCount())},
					sample{name + "_sum", labels, h.GetSampleSum()}, sample{name + "_count", labels, float64(h.GetSampleCount())})
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					out = append(out, sample{name, with("quantile", strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64)), q.GetValue()})
				}
				out = append(out, sample{name + "_sum", labels, s.GetSampleSum()}, sample{name + "_count", labels, float64(s.GetSampleCount())})
			default:
				out = append(out, sample{name, labels, m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()})
			}
		}
	}
	return out
}

// masterOnly are the metrics of the alerts and the dashboard that only a
// master exports: an in-process cluster runs none (services/roles/master's
// own tests check their labels).
var masterOnly = []string{"wololo_master_acting", "wololo_master_leader_info", "wololo_master_restarts_total", "wololo_master_supervised_processes"}

// TestAlertsAndPanelsLabelsAreFilled scrapes every process of a running
// cluster, as the operator's Prometheus does, while a job waits on its
// upload, while another runs (held there: the gateway takes no results
// while its internal plane refuses connections), and after that one is
// done. Every label an alert rule or a dashboard panel selects on
// (observability.LabelUses: matchers, by/on clauses, label_replace
// sources, legends) is on every series of its metric and filled; every
// value an alert's or a panel's matcher asks for occurs; the stall
// alert's two sides name the job alike; and alerts_test.yaml's input
// series have the labels the processes really export, with job states
// they really take. Issue 38: the job-state gauge had state="" on every
// job, so WololoJobStalled could never fire.
func TestAlertsAndPanelsLabelsAreFilled(t *testing.T) {
	d := testDatasets(t)[0]
	gwName := deploy.Instance{Stage: deploy.Default().Gateway().Name}.Name()
	c, gwProxy := startClusterGatewayProxied(t, node.ClusterOptions{Admin: true, DataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	token, err := c.CA.Token(pki.Identity{Kind: pki.Operator, Name: "operator"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	scrapeAll := func() []sample {
		t.Helper()
		var all []sample
		for inst, addr := range c.AdminAddrs {
			b := get(t, "http://"+addr+"/metrics", token)
			parser := expfmt.NewTextParser(model.LegacyValidation)
			fams, err := parser.TextToMetricFamilies(strings.NewReader(string(b)))
			if err != nil {
				t.Fatalf("%s's /metrics: %v", inst, err)
			}
			all = append(all, flatten(fams)...)
		}
		return all
	}
	jobStates := func(ss []sample) map[string]string { // wololo_job -> state
		out := map[string]string{}
		for _, s := range ss {
			if s.name == "wololo_gateway_job_state" {
				out[s.labels["wololo_job"]] = s.labels["state"]
			}
		}
		return out
	}

	// A job whose client created it and sent nothing: uploading, for ever.
	conn, err := client.Dial(c.GatewayAddr(), clientTLS(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := func(f schema.File) *wololov1.FileHeader {
		return &wololov1.FileHeader{Columns: schema.RequiredColumns[f], Size: 100, DataOffset: 10}
	}
	if _, err := wololov1.NewJobServiceClient(conn).CreateJob(ctx, &wololov1.CreateJobRequest{JobId: "waiting", Matches: head(schema.Matches), Players: head(schema.Players)}); err != nil {
		t.Fatal(err)
	}
	// A job whose input is all in but whose results cannot reach the
	// gateway: running, until the gateway takes connections again.
	gwProxy.Refuse(true)
	submitted := submitOptsInBackground(ctx, t, c, client.SubmitOptions{Matches: d.matches, Players: d.players, Out: t.TempDir(), JobID: "held", Keep: true})
	ids := map[string]string{}
	for held := false; !held; {
		for _, j := range c.Nodes[gwName].Gateway.ClusterJobs() {
			ids[j.GetName()] = j.GetJobId()
			held = held || j.GetName() == "held" && j.GetInputComplete()
		}
		select {
		case err := <-submitted:
			t.Fatalf("the held job ended (%v) while the gateway refused its results", err)
		case <-ctx.Done():
			t.Fatal("the held job's input is not all in the graph")
		case <-time.After(50 * time.Millisecond):
		}
	}
	during := scrapeAll()
	gwProxy.Refuse(false)
	select {
	case err := <-submitted:
		if err != nil {
			t.Fatalf("submit of the held job: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the held job did not end once the gateway took connections again")
	}
	// A refused call and a refused connection, for the refusal counters'
	// series: a JobService call without a client certificate, and a
	// connection that sends no TLS handshake.
	anon, err := rpc.NewClient(c.GatewayAddr(), &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, err := wololov1.NewJobServiceClient(anon).ListJobs(ctx, &wololov1.ListJobsRequest{}); err == nil {
		t.Fatal("a JobService call without a client certificate was answered")
	}
	if raw, err := net.Dial("tcp", c.GatewayAddr()); err == nil {
		raw.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		io.Copy(io.Discard, raw) // until the gateway closes it
		raw.Close()
	}
	var after []sample
	for { // the refusal may be counted after the connection is closed
		after = scrapeAll()
		if slices.ContainsFunc(after, func(s sample) bool { return s.name == "wololo_rpc_refused_connections_total" }) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the gateway never counted the connection that sent no TLS handshake")
		case <-time.After(50 * time.Millisecond):
		}
	}

	if got, want := jobStates(during), map[string]string{ids["waiting"]: "uploading", ids["held"]: "running"}; !maps.Equal(got, want) {
		t.Errorf("job states while the held job runs: %v, want %v", got, want)
	}
	if got, want := jobStates(after), map[string]string{ids["waiting"]: "uploading", ids["held"]: "done"}; !maps.Equal(got, want) {
		t.Errorf("job states after it is done: %v, want %v", got, want)
	}

	all := append(slices.Clone(during), after...)
	byName := map[string][]sample{}
	for _, s := range all {
		byName[s.name] = append(byName[s.name], s)
	}
	type use struct {
		where string
		observability.LabelUse
	}
	var uses []use
	for name, expr := range observability.AlertQueries() {
		for _, u := range observability.LabelUses(expr) {
			uses = append(uses, use{"alert " + name, u})
		}
	}
	targets, err := observability.DashboardTargets()
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		for _, u := range tg.Uses() {
			uses = append(uses, use{"panel " + strconv.Quote(tg.Panel), u})
		}
	}
	if len(uses) < 40 {
		t.Fatalf("only %d label selections read from the alerts and the dashboard", len(uses))
	}
	absent := map[string]bool{}
	for _, u := range uses {
		series := byName[u.Metric]
		if len(series) == 0 {
			absent[u.Metric] = true
			continue
		}
		seen := map[string]bool{}
		for _, s := range series {
			v, ok := s.labels[u.Label]
			if !ok || v == "" {
				t.Errorf("%s selects %s: a series has it empty: %s %v", u.where, u, u.Metric, s.labels)
				break
			}
			seen[v] = true
		}
		// A value an equality or a plain alternation asks for occurs.
		var want []string
		switch u.Op {
		case "=":
			want = []string{u.Value}
		case "=~":
			if regexp.MustCompile(`^[A-Za-z0-9_-]+(\|[A-Za-z0-9_-]+)*$`).MatchString(u.Value) {
				want = strings.Split(u.Value, "|")
			}
		}
		for _, w := range want {
			if !seen[w] {
				t.Errorf("%s selects %s: no series has %s=%q (values: %v)", u.where, u, u.Label, w, slices.Sorted(maps.Keys(seen)))
			}
		}
	}
	var missing []string
	for m := range absent {
		if !slices.Contains(masterOnly, m) {
			missing = append(missing, m)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("metrics the alerts or the dashboard select on that no process exported during or after the job: %v", missing)
	}

	// WololoJobStalled joins the gauge to the rows applied on wololo_job:
	// the held job's rows are counted under the id the gauge names it by.
	rows := false
	for _, s := range byName["wololo_job_rows_in_total"] {
		rows = rows || s.labels["wololo_job"] == ids["held"] && s.value > 0
	}
	if !rows {
		t.Errorf("no wololo_job_rows_in_total{wololo_job=%q} with rows: the stall alert's join finds no progress of the job", ids["held"])
	}

	// alerts_test.yaml feeds the rules series of the shape the processes
	// export: the same label names, and job states the gateway takes.
	inputs, err := observability.AlertTestSeries()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, in := range inputs {
		real := byName[in.Metric]
		if len(real) == 0 {
			if !slices.Contains(masterOnly, in.Metric) {
				t.Errorf("alerts_test.yaml feeds %s, which no process exported", in.Metric)
			}
			continue
		}
		checked++
		want := slices.Sorted(maps.Keys(in.Labels))
		if got := slices.Sorted(maps.Keys(real[0].labels)); !slices.Equal(got, want) {
			t.Errorf("alerts_test.yaml's %s %v has labels %v; the processes export %v", in.Metric, in.Labels, want, got)
		}
		if in.Metric == "wololo_gateway_job_state" && !slices.ContainsFunc(real, func(s sample) bool { return s.labels["state"] == in.Labels["state"] }) {
			t.Errorf("alerts_test.yaml's %s %v: the gateway exported no job in state %q", in.Metric, in.Labels, in.Labels["state"])
		}
	}
	if checked == 0 {
		t.Error("no input series of alerts_test.yaml was compared with a scrape")
	}
}
