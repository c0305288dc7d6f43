package e2e

import (
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/roles/local"
)

// TestClientConnectionErrorsFailFast runs `wololo client` against
// addresses that are not the gateway's public port: each used to wait the
// whole --connect-timeout (30 s) in silence and exit 5 ("retry"). Now a
// malformed address, an unknown host and a port that is another
// process's (an admin HTTP port, a shard's or the gateway's internal
// port) are usage errors (exit 2) naming what the port is; a refused
// port is retried a few seconds, saying so, and exits 5. Each ends well
// within 15 s.
func TestClientConnectionErrorsFailFast(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a local cluster")
	}
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[0]
	c := startLocal(t, local.Options{
		Binary: bin, DataDir: filepath.Join(t.TempDir(), "cluster"),
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	status := func(server string) []string {
		return []string{"client", "status", "--job", "j", "--tls-dir", c.TLSDir(), "--server", server}
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no port", status("127.0.0.1"), 2, []string{"want host:port"}},
		{"a URL", status("http://" + c.GatewayAddr()), 2, []string{"not a URL"}},
		{"a refused port", status(closed), 5, []string{"nothing listens on " + closed + " (connection refused)", "retrying for 1.5s"}},
		{"an unknown host", status("nosuch.invalid:7100"), 2, []string{`the host "nosuch.invalid" is unknown`}},
		{"the admin HTTP port", status(c.AdminAddr("gateway-0")), 2, []string{"it answers plain HTTP, as a process's admin HTTP port does", "the gateway's public port is 7100"}},
		{"a shard's internal port", status(c.Addr("shard-0")), 2, []string{`an internal port of instance "shard-0" (its certificate says so)`, "the gateway's public port is 7100"}},
		{"the gateway's internal port", status(c.Addr("gateway-0")), 2, []string{"serves no JobService, so it is not the gateway's public port"}},
		{"submit to a shard's port", []string{"client", "submit", "--tls-dir", c.TLSDir(), "--server", c.Addr("shard-1"), "--matches", d.matches, "--players", d.players, "--out", t.TempDir()}, 2, []string{`an internal port of instance "shard-1"`}},
		{"the gateway itself", status(c.GatewayAddr()), 4, []string{"j"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runFor(t, 40*time.Second, bin, tc.args...)
			code, out, took := r.code, r.output(), r.took
			if code != tc.code {
				t.Fatalf("exit %d after %s, want %d; output:\n%s", code, took, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if took > 15*time.Second {
				t.Errorf("took %s (the connect timeout is 30 s); output:\n%s", took, out)
			}
		})
	}
}

// TestSubmitStallsWithItsOwnExit stops both shards of a local cluster
// without masters (SIGSTOP: nothing restarts them) and submits with a
// short --stall-timeout: submit must give up with exit 6 naming the
// shards that do not answer, where it used to wait for ever. Its resume
// hint, pasted into a shell as printed after the shards are woken,
// finishes the job with answers byte-equal to the reference: the hint
// carries the binary's path, --server and --tls-dir.
func TestSubmitStallsWithItsOwnExit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a local cluster")
	}
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[0]
	c := startLocal(t, local.Options{
		Binary: bin, DataDir: filepath.Join(t.TempDir(), "cluster"),
	})
	var shards []string
	for _, in := range c.Instances() {
		if strings.HasPrefix(in, "shard-") {
			shards = append(shards, in)
		}
	}
	for _, s := range shards {
		if _, err := c.Signal(s, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	woken := false
	wake := func() {
		for _, s := range shards {
			if _, err := c.Signal(s, syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
		woken = true
	}
	defer func() {
		if !woken {
			wake()
		}
	}()

	out := t.TempDir()
	r := runFor(t, 2*time.Minute, bin, "client", "submit", "--server", c.GatewayAddr(), "--tls-dir", c.TLSDir(),
		"--job", "stalled", "--stall-timeout", "5s", "--matches", d.matches, "--players", d.players, "--out", out)
	code, res, took := r.code, r.output(), r.took
	if code != 6 {
		t.Fatalf("exit %d after %s, want 6; output:\n%s", code, took, res)
	}
	t.Logf("submit gave up after %s:\n%s", took, res)
	for _, w := range []string{"job stalled made no progress for 5s (--stall-timeout)", "not answering the gateway", shards[0]} {
		if !strings.Contains(res, w) {
			t.Errorf("output lacks %q:\n%s", w, res)
		}
	}
	_, hint, ok := strings.Cut(res, "resume it with `")
	hint, _, ok2 := strings.Cut(hint, "`")
	if !ok || !ok2 {
		t.Fatalf("no resume hint:\n%s", res)
	}
	for _, w := range []string{bin + " client submit --job stalled", "--server " + c.GatewayAddr(), "--tls-dir " + c.TLSDir()} {
		if !strings.Contains(hint, w) {
			t.Errorf("hint %q lacks %q", hint, w)
		}
	}

	wake()
	r = runFor(t, 2*time.Minute, "sh", "-c", hint)
	code, res = r.code, r.output()
	if code != 0 {
		t.Fatalf("the pasted hint %q: exit %d:\n%s", hint, code, res)
	}
	compareOutputs(t, d, out)
}
