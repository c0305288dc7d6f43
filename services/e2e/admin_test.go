package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/ops/admin"
	"github.com/wololo/wololo/services/roles/local"
	"github.com/wololo/wololo/services/wire/pki"
)

// TestAdminPortKeepsTenantsToTheOperator attacks the admin HTTP listeners
// of a cluster of OS processes the way the second attack did, while a
// client's job runs and after it is done (kept, so that the gateway still
// lists it): the page and /api/cluster without a credential, with another
// CA's token, with a client's token of the deployment's own CA; /metrics
// without a credential; and every one of them, the operator's token
// included, under a foreign Host header, as a web page that rebinds its
// DNS name to 127.0.0.1 would send it. None may show the client's name,
// the job's name or its id, every response carries the security headers,
// and the operator's token still reads all of it; the job's four answers
// are byte-equal to the reference.
func TestAdminPortKeepsTenantsToTheOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a local cluster")
	}
	bin := testkit.WololoBinary(t)
	dir := t.TempDir()
	c := startLocal(t, local.Options{
		Binary: bin, DataDir: filepath.Join(dir, "cluster"),
		Masters: 1,
	})
	token := c.OperatorToken()
	if token == "" {
		t.Fatal("the cluster has no operator token")
	}
	ca, err := pki.LoadCA(c.TLSDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	clientsToken, _ := ca.Token(pki.Identity{Kind: pki.Client, Name: "client"}, time.Hour)
	otherCA, _ := pki.NewCA("someone else's CA")
	foreignToken, _ := otherCA.Token(pki.Identity{Kind: pki.Operator, Name: "operator"}, time.Hour)

	d := testDatasets(t)[2]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := t.TempDir()
	const jobName = "alices-payroll"
	submitted := make(chan error, 1)
	go func() {
		_, err := client.Submit(ctx, client.SubmitOptions{
			Server: c.GatewayAddr(), TLS: clientTLS(t, c), JobID: jobName, Keep: true, Out: out, Matches: d.matches, Players: d.players,
		})
		submitted <- err
	}()

	gateway := "http://" + c.AdminAddr("gateway-0")
	call := func(url, host, auth string) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if host != "" {
			req.Host = host
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}

	// The operator sees the job, and its internal id, which the attacks
	// must not see.
	var jobID string
	var code int
	var body string
	if !testkit.Await(time.Minute, func() bool {
		code, body, _ = call(gateway+"/api/cluster", "", "Bearer "+token)
		var snap struct {
			Jobs []struct {
				JobID  string `json:"job_id"`
				Name   string `json:"name"`
				Client string `json:"client"`
			} `json:"jobs"`
		}
		if code == 200 && json.Unmarshal([]byte(body), &snap) == nil && len(snap.Jobs) == 1 && snap.Jobs[0].Name == jobName && snap.Jobs[0].Client == "client" {
			jobID = snap.Jobs[0].JobID
		}
		return jobID != ""
	}) {
		t.Fatalf("the operator does not see job %s in /api/cluster: %d %s", jobName, code, body)
	}
	tenant := []string{jobID, jobName, `"client"`, `client="`, `wololo_job="`}

	attack := func(when string) {
		t.Helper()
		foreign := "rebound.attacker.example:" + strings.Split(c.AdminAddr("gateway-0"), ":")[1]
		cases := []struct {
			name, url, host, auth string
			code                  int
		}{
			{"the page without a credential", gateway + "/", "", "", 401},
			{"/api/cluster without a credential", gateway + "/api/cluster", "", "", 401},
			{"/api/cluster with a made-up token", gateway + "/api/cluster", "", "Bearer 0123456789abcdef", 403},
			{"/api/cluster with another CA's operator token", gateway + "/api/cluster", "", "Bearer " + foreignToken, 403},
			{"/api/cluster with a client's token of this CA", gateway + "/api/cluster", "", "Bearer " + clientsToken, 403},
			{"/api/cluster with a guessed Basic password", gateway + "/api/cluster", "", "Basic Y2xpZW50OmNsaWVudA==", 403},
			{"the page through DNS rebinding", gateway + "/", foreign, "", 421},
			{"/api/cluster through DNS rebinding, with the operator's token", gateway + "/api/cluster", foreign, "Bearer " + token, 421},
			{"the gateway's /metrics through DNS rebinding", gateway + "/metrics", foreign, "", 421},
			{"a shard's /metrics through DNS rebinding", "http://" + c.AdminAddr("shard-0") + "/metrics", "attacker.example", "", 421},
			{"the master's /metrics with another CA's token", "http://" + c.AdminAddr("master-1") + "/metrics", "", "Bearer " + foreignToken, 403},
			{"the gateway's /metrics without a credential", gateway + "/metrics", "", "", 200},
			{"a shard's /metrics without a credential", "http://" + c.AdminAddr("shard-0") + "/metrics", "", "", 200},
		}
		for round := 0; round < 3; round++ {
			for _, a := range cases {
				code, body, h := call(a.url, a.host, a.auth)
				if code != a.code {
					t.Errorf("%s, %s: %d, want %d: %.200s", when, a.name, code, a.code, body)
				}
				for _, s := range tenant {
					if strings.Contains(body, s) {
						t.Errorf("%s, %s: the answer shows %q:\n%.2000s", when, a.name, s, body)
					}
				}
				for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Content-Security-Policy": admin.Policy} {
					if h.Get(k) != v {
						t.Errorf("%s, %s: %s %q, want %q", when, a.name, k, h.Get(k), v)
					}
				}
			}
		}
		// The unauthenticated scrape still counts the job's rows, summed,
		// once the gateway has sent some (the job may be seen before its
		// first batch is out: waited for, not assumed).
		var metrics string
		if !testkit.Await(time.Minute, func() bool {
			_, metrics, _ = call(gateway+"/metrics", "", "")
			return strings.Contains(metrics, "wololo_channel_sent_rows_total{")
		}) {
			t.Errorf("%s: the public /metrics has no wololo_channel_sent_rows_total:\n%.1000s", when, metrics)
		}
	}
	attack("while the job runs")

	select {
	case err := <-submitted:
		if err != nil {
			t.Fatalf("submit beside the attacks: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the job did not finish beside the attacks")
	}
	compareOutputs(t, d, out)
	attack("after the job")

	// The operator, by each way it may present the token, reads it all.
	if code, body, _ := call(gateway+"/api/cluster", "", "Bearer "+token); code != 200 || !strings.Contains(body, jobID) || !strings.Contains(body, jobName) {
		t.Errorf("the operator's /api/cluster: %d %.500s", code, body)
	}
	if code, body, h := call(c.DashboardURL(), "", ""); code != 200 || !strings.Contains(body, "<title>Wololo</title>") || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'sha256-") {
		t.Errorf("the page at %s: %d %q %.200s", c.DashboardURL(), code, h.Get("Content-Security-Policy"), body)
	}
	for _, inst := range []string{"gateway-0", "shard-0"} {
		if code, body, _ := call("http://"+c.AdminAddr(inst)+"/metrics", "localhost", "Bearer "+token); code != 200 || !strings.Contains(body, `wololo_job="`+jobID+`"`) {
			t.Errorf("the operator's /metrics of %s: %d, no wololo_job=%q", inst, code, jobID)
		}
	}
}
