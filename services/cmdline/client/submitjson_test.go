package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
)

// TestSubmitJSONOnEveryFailure: `client submit --json` prints exactly one
// JSON object with error and hint on stdout whatever makes it fail once
// its flags are parsed, here the failures that need no gateway: a flag
// left out, a missing file, a missing credential, a gateway that is not
// there, an interruption. (Refused and failed jobs are in services/e2e.)
func TestSubmitJSONOnEveryFailure(t *testing.T) {
	dir := t.TempDir()
	matches, players := filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv")
	if err := os.WriteFile(matches, []byte("token,ladder,mirror,average_rating,map,server,duration,winning_team\nt,RM_1v1,False,1000,arabia,ukwest,100,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(players, []byte("token,match,rating,color,civ,team,winner\np,t,1000,Red,franks,1,True\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(tlsflags.EnvDir, "")
	t.Setenv(tlsflags.EnvClient, "")
	t.Setenv(EnvServer, "")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	files := []string{"--matches", matches, "--players", players, "--out", t.TempDir()}
	cases := []struct {
		name     string
		ctx      context.Context
		args     []string
		exit     int
		hint     string // a part of the hint
		inError  string // a part of the error
		jobID    string
		noServer bool
	}{
		{"a flag left out", nil, []string{"--players", players, "--out", t.TempDir()}, cli.ExitUsage, "submit -h", "--matches is required", "", true},
		{"a missing file", nil, []string{"--matches", filepath.Join(dir, "nope.csv"), "--players", players, "--out", t.TempDir()}, cli.ExitError, "run the same command again", "nope.csv", "", true},
		{"no credential", nil, append([]string{"--tls-dir", t.TempDir(), "--job", "j1"}, files...), cli.ExitError, "fix what the error names", "", "j1", true},
		{"no gateway", nil, append([]string{"--insecure", "--connect-timeout", "300ms", "--job", "j2"}, files...), cli.ExitUnreachable, "check that a gateway runs at", "cannot reach the gateway", "j2", false},
		{"interrupted", cancelled, append([]string{"--insecure", "--job", "j3"}, files...), cli.ExitError, "interrupted before the gateway took the job", "", "j3", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := c.ctx
			if ctx == nil {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
			}
			args := append([]string{"submit", "--json"}, c.args...)
			if !c.noServer {
				args = append(args, "--server", closedAddr(t))
			}
			var stdout, stderr bytes.Buffer
			err := Run(ctx, args, &stdout, &stderr)
			if err == nil || (ctx.Err() == nil && cli.ExitCode(err) != c.exit) {
				t.Fatalf("err %v (exit %d), want exit %d", err, cli.ExitCode(err), c.exit)
			}
			if strings.Count(stdout.String(), "\n") != 1 {
				t.Fatalf("stdout is not one line: %q", stdout.String())
			}
			var r SubmitReport
			if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
				t.Fatalf("stdout is not a report (%v): %s", err, stdout.String())
			}
			if r.Error == "" || !strings.Contains(r.Error, c.inError) || !strings.Contains(r.Hint, c.hint) {
				t.Errorf("error %q (want %q in it), hint %q (want %q in it)", r.Error, c.inError, r.Hint, c.hint)
			}
			if r.JobID != c.jobID || r.State != "unknown" || r.Inputs == nil || r.Outputs == nil {
				t.Errorf("job_id %q state %q inputs %v outputs %v; want job_id %q, state unknown and empty lists", r.JobID, r.State, r.Inputs, r.Outputs, c.jobID)
			}
		})
	}
}

// TestSubmitReportAfterTheJobExists: once the job exists, the object after
// a failure keeps the job's facts, and its hint is the error's own (how to
// resume a job left behind) or says what to do with the job.
func TestSubmitReportAfterTheJobExists(t *testing.T) {
	failed := &wololov1.Job{JobId: "j", State: wololov1.JobState_JOB_STATE_FAILED, Message: "a shard's state was lost"}
	cases := []struct {
		name       string
		sum        *Summary
		err        error
		state      string
		error      string
		hint       string
		wantExit   int
		notCreated bool
	}{
		{"failed", &Summary{JobID: "j", Job: failed}, cli.Mark(errors.New("job j failed: a shard's state was lost"), cli.ErrJobFailed),
			"failed", "job j failed: a shard's state was lost", "wololo client cancel --job j", cli.ExitJobFailed, false},
		{"left behind", &Summary{JobID: "j"}, cli.WithHint(errors.New("upload broken"), "resume it with X"),
			"unknown", "upload broken", "resume it with X", cli.ExitError, false},
		{"created, no hint of its own", &Summary{JobID: "j"}, errors.New("stuck"),
			"unknown", "stuck", "`wololo client status --job j` shows it", cli.ExitError, false},
		{"refused before it existed", nil, cli.Mark(errors.New(`job "j" was created with another matches.csv`), cli.ErrRefused),
			"unknown", "created with another", "`wololo client cancel --job j`", cli.ExitRefused, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			err := writeSubmitJSON(context.Background(), &b, SubmitOptions{JobID: "j", Server: "gw:1"}, c.sum, c.err)
			if err != c.err || cli.ExitCode(err) != c.wantExit {
				t.Fatalf("returned %v (exit %d), want the error itself (exit %d)", err, cli.ExitCode(err), c.wantExit)
			}
			var r SubmitReport
			if err := json.Unmarshal(b.Bytes(), &r); err != nil || strings.Count(b.String(), "\n") != 1 {
				t.Fatalf("not one JSON object (%v): %q", err, b.String())
			}
			if r.JobID != "j" || r.State != c.state || !strings.Contains(r.Error, c.error) || !strings.Contains(r.Hint, c.hint) {
				t.Errorf("job_id %q state %q error %q hint %q; want j, %q, %q, a hint with %q", r.JobID, r.State, r.Error, r.Hint, c.state, c.error, c.hint)
			}
		})
	}
}
