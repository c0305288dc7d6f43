package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/services/base/datagen"
)

// TestLogJSON runs the demo on a small dataset with --log-json at debug
// level, in memory and over gRPC: every log line on stderr is one JSON
// object (the progress lines are the only other lines there), and every
// line about a job names its job, stage and instance.
func TestLogJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole graph")
	}
	dir := t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: 2000, Seed: 1}, dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		flags []string
		lines []string // messages that must be there
	}{
		// The lines of a job's life, from the gateway and from the stages.
		{"grpc", []string{"--grpc"}, []string{"job created", "upload complete", "job started", "job finished at this stage", "job done"}},
		// The SQL runner's tables and end.
		{"in-memory", nil, []string{"table read", "job done"}},
	} {
		t.Run(c.name, func(t *testing.T) { checkLogJSON(t, dir, c.flags, c.lines) })
	}
}

func checkLogJSON(t *testing.T, dir string, flags, lines []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, append([]string{"--matches", filepath.Join(dir, "matches.csv"), "--players", filepath.Join(dir, "match_players.csv"),
		"--out", t.TempDir(), "--log-level", "debug", "--log-json"}, flags...), &stdout, &stderr)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	logs, jobLines := 0, 0
	seen := map[string]bool{}
	sc := bufio.NewScanner(&stderr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "{") {
			for _, level := range []string{"[TRACE]", "[DEBUG]", "[INFO]", "[WARN]", "[ERROR]"} {
				if strings.Contains(line, level) {
					t.Errorf("a log line not in JSON: %s", line)
				}
			}
			continue
		}
		logs++
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Errorf("not JSON (%v): %s", err, line)
			continue
		}
		for _, k := range []string{"@level", "@message", "@timestamp"} {
			if _, ok := obj[k]; !ok {
				t.Errorf("no %s: %s", k, line)
			}
		}
		if _, ok := obj["job"]; ok {
			jobLines++
			for _, k := range []string{"stage", "instance"} {
				if s, _ := obj[k].(string); s == "" {
					t.Errorf("a line about a job without %s: %s", k, line)
				}
			}
		}
		seen[obj["@message"].(string)] = true
	}
	for _, msg := range lines {
		if !seen[msg] {
			t.Errorf("no %q line", msg)
		}
	}
	if logs == 0 || jobLines == 0 {
		t.Fatalf("%d JSON log lines, %d about a job, at debug level:\n%s", logs, jobLines, stderr.String())
	}
}

// TestInterruptedDemoStops: a demo whose context is done (main's on
// Ctrl-C or SIGTERM) stops with the context's error, which main turns into
// exit 130, instead of running its SQL job to the end and exiting 0; the
// run's results are not written.
func TestInterruptedDemoStops(t *testing.T) {
	dir := t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: 2000, Seed: 1}, dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // interrupted as it starts
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err := Run(ctx, []string{"--matches", filepath.Join(dir, "matches.csv"), "--players", filepath.Join(dir, "match_players.csv"), "--out", out}, &stdout, &stderr)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the interrupted demo returned %v, want context.Canceled\n%s%s", err, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "q1.csv")); err == nil {
		t.Error("the interrupted demo wrote its results")
	}
}
