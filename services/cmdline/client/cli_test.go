package client

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
)

// TestGatewayFlagsPrecedence: a flag on the command line wins over its
// WOLOLO_* variable, the variable over the built-in default; an empty
// variable counts as unset.
func TestGatewayFlagsPrecedence(t *testing.T) {
	cases := []struct {
		name                   string
		env                    map[string]string
		args                   []string
		server, tlsDir, client string
	}{
		{"defaults", nil, nil, DefaultServer, DefaultTLSDir, tlsflags.DefaultClient},
		{"variables", map[string]string{EnvServer: "gw:1", tlsflags.EnvDir: "/etc/w", tlsflags.EnvClient: "ops"}, nil, "gw:1", "/etc/w", "ops"},
		{"flags", nil, []string{"--server", "f:2", "--tls-dir", "/f", "--name", "fl"}, "f:2", "/f", "fl"},
		{"flags over variables", map[string]string{EnvServer: "gw:1", tlsflags.EnvDir: "/etc/w", tlsflags.EnvClient: "ops"},
			[]string{"--server", "f:2", "--tls-dir", "/f", "--name", "fl"}, "f:2", "/f", "fl"},
		{"one flag, the rest variables", map[string]string{EnvServer: "gw:1", tlsflags.EnvDir: "/etc/w", tlsflags.EnvClient: "ops"},
			[]string{"--server", "f:2"}, "f:2", "/etc/w", "ops"},
		{"empty variables are unset", map[string]string{EnvServer: "", tlsflags.EnvDir: "", tlsflags.EnvClient: ""}, nil, DefaultServer, DefaultTLSDir, tlsflags.DefaultClient},
		{"a flag set to empty wins", map[string]string{EnvServer: "gw:1"}, []string{"--server="}, "", DefaultTLSDir, tlsflags.DefaultClient},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{EnvServer, tlsflags.EnvDir, tlsflags.EnvClient} {
				t.Setenv(k, c.env[k])
			}
			var stderr bytes.Buffer
			fs := cli.NewFlagSet("wololo client test", "usage\n", &stderr)
			g := registerGateway(fs)
			if err := cli.Parse(fs, c.args); err != nil {
				t.Fatal(err)
			}
			if g.server != c.server || g.creds.Dir != c.tlsDir || g.creds.Name != c.client {
				t.Errorf("server %q, tls-dir %q, name %q; want %q, %q, %q", g.server, g.creds.Dir, g.creds.Name, c.server, c.tlsDir, c.client)
			}
			fs.Usage()
			for _, env := range []string{EnvServer, tlsflags.EnvDir, tlsflags.EnvClient} {
				if !strings.Contains(stderr.String(), "$"+env) {
					t.Errorf("the flags' help does not name $%s:\n%s", env, stderr.String())
				}
			}
		})
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestCommandsUseTheVariables runs the commands themselves against a
// gateway that is not there: the address they give up on is the one the
// precedence picks, and giving up is exit status 5.
func TestCommandsUseTheVariables(t *testing.T) {
	fromEnv, fromFlag := closedAddr(t), closedAddr(t)
	cases := []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"status, the variable", fromEnv, []string{"status", "--job", "j"}, fromEnv},
		{"status, the flag over the variable", fromEnv, []string{"status", "--job", "j", "--server", fromFlag}, fromFlag},
		{"watch, the variable", fromEnv, []string{"watch", "--job", "j"}, fromEnv},
		{"results, the flag over the variable", fromEnv, []string{"results", "--job", "j", "--out", "OUT", "--server", fromFlag}, fromFlag},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(EnvServer, c.env)
			args := append(c.args, "--insecure", "--connect-timeout", "200ms")
			for i := range args {
				if args[i] == "OUT" {
					args[i] = t.TempDir()
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			err := Run(ctx, args, &stdout, &stderr)
			if !errors.Is(err, cli.ErrUnreachable) || !errors.Is(err, ErrUnreachable) || cli.ExitCode(err) != cli.ExitUnreachable {
				t.Fatalf("err %v (exit %d), want unreachable (exit %d)", err, cli.ExitCode(err), cli.ExitUnreachable)
			}
			if !strings.Contains(err.Error(), "at "+c.want) {
				t.Errorf("err %q does not name %s", err, c.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: %q", stdout.String())
			}
		})
	}
}

// TestHelpNamesTheVariablesAndExitStatuses: every client command's -h
// lists the WOLOLO_* variables and the exit statuses.
func TestHelpNamesTheVariablesAndExitStatuses(t *testing.T) {
	for _, cmd := range [][]string{{"help"}, {"submit", "-h"}, {"status", "-h"}, {"watch", "-h"}, {"results", "-h"}} {
		var stdout, stderr bytes.Buffer
		if err := Run(context.Background(), cmd, &stdout, &stderr); cli.ExitCode(err) != 0 {
			t.Fatalf("%q: %v", cmd, err)
		}
		help := stdout.String() + stderr.String()
		for _, s := range []string{EnvServer, tlsflags.EnvDir, tlsflags.EnvClient, cli.ExitCodes} {
			if !strings.Contains(help, s) {
				t.Errorf("%q help lacks %q:\n%s", cmd, s, help)
			}
		}
	}
}

// TestChunkBuffersReuseOnlyAcknowledged: a sent chunk's buffer is read
// into again only after an acknowledgement at or past its end.
func TestChunkBuffersReuseOnlyAcknowledged(t *testing.T) {
	var c chunkBuffers
	a, b := c.get(), c.get()
	if len(a) != ChunkSize || &a[0] == &b[0] {
		t.Fatal("two fresh buffers share memory or are not a chunk long")
	}
	c.sent(100, a)
	c.sent(200, b)
	c.acked(150) // covers a, not b
	if got := c.get(); &got[0] != &a[0] {
		t.Fatal("the acknowledged chunk's buffer was not reused")
	}
	if got := c.get(); &got[0] == &b[0] {
		t.Fatal("an unacknowledged chunk's buffer was reused")
	}
	c.acked(200)
	if got := c.get(); &got[0] != &b[0] {
		t.Fatal("b was not freed by the acknowledgement of its end")
	}
}

// TestOneDoneTime: a finished job's time is said once, and the same way,
// by `client submit`'s summary and by `client status`: submit used to say
// "done in" its own wall time and status "done after" the gateway's.
func TestOneDoneTime(t *testing.T) {
	job := &wololov1.Job{JobId: "nightly", State: wololov1.JobState_JOB_STATE_DONE, ElapsedSeconds: 3.24,
		ResultRows: map[string]int64{"q1.csv": 2}, Queries: []string{"q1"}}
	var submit, status strings.Builder
	PrintSummary(&submit, &Summary{JobID: "nightly", Job: job, Total: 4512 * time.Millisecond, Upload: time.Second,
		Files: map[string]string{"q1.csv": "out/q1.csv"}})
	printJob(&status, job)
	const want = "job nightly: done after 3.2s"
	for name, out := range map[string]string{"submit": submit.String(), "status": status.String()} {
		if !strings.HasPrefix(out, want) {
			t.Errorf("%s prints %q, want it to begin %q", name, out, want)
		}
		if n := strings.Count(out, "done"); n != 1 {
			t.Errorf("%s says done %d times:\n%s", name, n, out)
		}
	}
}
