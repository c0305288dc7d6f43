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
