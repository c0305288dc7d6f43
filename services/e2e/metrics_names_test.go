package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/pki"
)

// TestMetricsNameNoTenantsQueries is issue 37's W10 as a test: after a
// job of a query named acme_payroll over a table acme_staff grouped by
// its column employee_ssn (whose plan's channels, and so streams, are
// named after the table, the column and the query), no process's
// /metrics, scraped without a credential or with the operator's token,
// shows any of those names; the job's channels are there all the same,
// by number (stream="chN").
func TestMetricsNameNoTenantsQueries(t *testing.T) {
	d := testDatasets(t)[0]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{Admin: true})
	staff := filepath.Join(t.TempDir(), "acme_staff.csv")
	var b strings.Builder
	b.WriteString("employee_ssn,salary\n")
	for i := range 300 {
		fmt.Fprintf(&b, "%03d-00-%04d,%d\n", i%50, i, 1000+i)
	}
	if err := os.WriteFile(staff, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := client.Submit(ctx, client.SubmitOptions{
		Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: d.matches, Players: d.players, Out: t.TempDir(), Keep: true,
		Queries: []sqljob.Query{{Name: "acme_payroll", Text: "SELECT employee_ssn, SUM(salary::numeric) AS total FROM acme_staff GROUP BY employee_ssn ORDER BY employee_ssn"}},
		Tables:  []client.Table{{Name: "acme_staff", Path: staff}},
	})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	token, err := c.CA.Token(pki.Identity{Kind: pki.Operator, Name: "operator"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	scrape := func(inst, token string) string {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.AdminAddrs[inst]+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s's /metrics: %v", inst, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s's /metrics: %d %s", inst, resp.StatusCode, body)
		}
		return string(body)
	}
	numbered := 0
	for inst := range c.AdminAddrs {
		for who, tok := range map[string]string{"without a credential": "", "with the operator's token": token} {
			body := scrape(inst, tok)
			for _, name := range []string{"acme_payroll", "acme_staff", "employee_ssn"} {
				if strings.Contains(body, name) {
					t.Errorf("%s's /metrics %s shows %q:\n%s", inst, who, name, grepLines(body, name))
				}
			}
			numbered += strings.Count(body, `stream="ch`)
		}
	}
	if numbered == 0 {
		t.Error("no process's /metrics has a series of the job's channels (stream=\"chN\")")
	}
}

// grepLines are the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
