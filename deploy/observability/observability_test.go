package observability

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMetricNames(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{`wololo_build_info`, []string{"wololo_build_info"}},
		{`sum by (stage) (rate(wololo_job_rows_in_total{wololo_job="x"}[$__rate_interval]))`, []string{"wololo_job_rows_in_total"}},
		{`histogram_quantile(0.99, sum by (le, process) (rate(wololo_store_commit_seconds_bucket[5m])))`, []string{"wololo_store_commit_seconds_bucket"}},
		{"a / b < 0.10\nor\ncount(c) unless on (wololo_job) count(d)", []string{"a", "b", "c", "d"}},
		{`label_replace(sum by (restarted) (increase(x_total[15m])), "process", "$1", "restarted", "(.+)") >= 3`, []string{"x_total"}},
		{`max by (wololo_job, client, state) (s{state=~"uploading|running"})`, []string{"s"}},
	}
	for _, c := range cases {
		if got := MetricNames(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("MetricNames(%q) = %v, want %v", c.expr, got, c.want)
		}
	}
}

// TestDashboardParses: the dashboard is JSON, every panel has queries,
// and every query reads a Wololo, gRPC or process metric. (Which names
// the processes really export is checked against a running cluster's
// /metrics by TestWatchingALocalCluster in services/e2e.)
func TestDashboardParses(t *testing.T) {
	queries, err := DashboardQueries()
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) < 10 {
		t.Fatalf("%d panels with queries: %v", len(queries), queries)
	}
	for panel, exprs := range queries {
		for _, e := range exprs {
			names := MetricNames(e)
			if len(names) == 0 {
				t.Errorf("panel %q: %q reads no metric", panel, e)
			}
			for _, n := range names {
				if !strings.HasPrefix(n, "wololo_") && !strings.HasPrefix(n, "grpc_server_") && !strings.HasPrefix(n, "process_") && !strings.HasPrefix(n, "go_") {
					t.Errorf("panel %q: %q is no metric of a Wololo process", panel, n)
				}
			}
		}
	}
	alerts := AlertQueries()
	for _, a := range []string{"WololoNoActingLeader", "WololoProcessRestartLoop", "WololoJobStalled", "WololoDiskNearlyFull"} {
		if len(MetricNames(alerts[a])) == 0 {
			t.Errorf("alert %s: no expression read from alerts.yaml (%q)", a, alerts[a])
		}
	}
}

// promtool finds promtool: bin/tools/promtool of the checkout (`make
// promtool`), else one on PATH.
func promtool(t *testing.T) string {
	t.Helper()
	if p, err := filepath.Abs("../../bin/tools/promtool"); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	t.Skip("SKIPPED: no promtool (bin/tools/promtool or on PATH): `make promtool` installs it; the alert rules are not checked")
	return ""
}

// TestAlertRules: promtool finds alerts.yaml valid, and its unit tests
// (alerts_test.yaml), which feed each alert series that must fire it and
// series that must not, pass.
func TestAlertRules(t *testing.T) {
	bin := promtool(t)
	for _, args := range [][]string{{"check", "rules", "alerts.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func TestLabelUses(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{`sum by (state) (wololo_gateway_job_state)`, []string{"wololo_gateway_job_state by state"}},
		{`sum(rate(x_total{code!="OK",type="unary"}[5m])) by (code)`, []string{`x_total{code!="OK"}`, `x_total{type="unary"}`, "x_total by code"}},
		{`histogram_quantile(0.99, sum by (le, process) (rate(h_bucket[5m])))`, []string{"h_bucket by le", "h_bucket by process"}},
		{"max by (wololo_job, client, state) (s{state=~\"uploading|running\"})\nunless on (wololo_job)\n(sum by (wololo_job) (increase(r_total[10m])) > 0)",
			[]string{"s by wololo_job", "s by client", "s by state", `s{state=~"uploading|running"}`, "s by wololo_job", "r_total by wololo_job", "r_total by wololo_job"}},
		{`label_replace(sum by (restarted) (increase(m_total[15m])), "process", "$1", "restarted", "(.+)") >= 3 or max by (process) (changes(i[15m])) >= 3`,
			[]string{"m_total by restarted", "m_total by restarted", "i by process"}},
		{"sum(a) < 1\nor\n(count(max_over_time(a[1h])) unless count(a))", nil},
		{`a / b < 0.10`, nil},
	}
	for _, c := range cases {
		var got []string
		for _, u := range LabelUses(c.expr) {
			got = append(got, u.String())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("LabelUses(%q) =\n%q\nwant\n%q", c.expr, got, c.want)
		}
	}
	legend := Target{Expr: `a / b`, Legend: "{{process}} {{ file }} free"}
	var got []string
	for _, u := range legend.Uses() {
		got = append(got, u.String())
	}
	if want := []string{"a by process", "b by process", "a by file", "b by file"}; !slices.Equal(got, want) {
		t.Errorf("uses of a legend: %q, want %q", got, want)
	}
}

// TestEveryQuerySelectsOnLabels: the dashboard and the alerts are read
// whole (no target or alert the readers miss), and the stall alert's
// selection on the gateway's job states is among what they find.
func TestEveryQuerySelectsOnLabels(t *testing.T) {
	targets, err := DashboardTargets()
	if err != nil {
		t.Fatal(err)
	}
	queries, _ := DashboardQueries()
	n := 0
	for _, exprs := range queries {
		n += len(exprs)
	}
	if len(targets) != n {
		t.Errorf("%d dashboard targets, %d queries", len(targets), n)
	}
	found := false
	for _, u := range LabelUses(AlertQueries()["WololoJobStalled"]) {
		found = found || u == LabelUse{Metric: "wololo_gateway_job_state", Label: "state", Op: "=~", Value: "uploading|running"}
	}
	if !found {
		t.Errorf("WololoJobStalled: no selection of the job states uploading and running among %v", LabelUses(AlertQueries()["WololoJobStalled"]))
	}
	series, err := AlertTestSeries()
	if err != nil {
		t.Fatal(err)
	}
	if len(series) < 10 {
		t.Fatalf("%d input series read from alerts_test.yaml", len(series))
	}
	for _, s := range series {
		if s.Metric == "" || len(s.Labels) == 0 {
			t.Errorf("input series %+v: no metric or no labels", s)
		}
	}
}
