package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/services/cmdline/cli"
)

// TestAllGarbageFails: the demo on a players file of nothing but
// malformed records fails as a job would (cli.ErrJobFailed, exit 3), with
// the gateway's message, in memory and over gRPC; a limit of 1 lets it
// through, and the malformed records are then listed in OUT/rejects.csv.
func TestAllGarbageFails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole graph")
	}
	dir := t.TempDir()
	matches, players := filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv")
	m := "token,ladder,mirror,average_rating,map,server,duration\na,RM_1v1,False,1200,arabia,ukwest,0:20:00\n"
	p := "match,rating,civ,winner\n" + strings.Repeat("not;a;players;row\n", 40)
	if err := os.WriteFile(matches, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(players, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = `match_players.csv: 40 of 40 records malformed (100%), more than --max-malformed 10%; first at byte 24 (field-count): "not;a;players;row\n"`
	for _, flags := range [][]string{nil, {"--grpc"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		args := append([]string{"--matches", matches, "--players", players, "--out", out}, flags...)
		err := Run(ctx, args, &stdout, &stderr)
		if !errors.Is(err, cli.ErrJobFailed) || !strings.Contains(err.Error(), want) {
			t.Fatalf("demo %v: %v, want the job failed with %s\n%s", flags, err, want, stderr.String())
		}
		stdout.Reset()
		if err := Run(ctx, append(args, "--max-malformed", "1"), &stdout, &stderr); err != nil {
			t.Fatalf("demo %v --max-malformed 1: %v\n%s", flags, err, stderr.String())
		}
		rejects, err := os.ReadFile(filepath.Join(out, "rejects.csv"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(rejects), "\n"), "\n")
		if len(lines) != 41 || lines[0] != "file,offset,reason,first_bytes" || lines[1] != "match_players.csv,24,field-count,not;a;players;row" ||
			lines[40] != "match_players.csv,726,field-count,not;a;players;row" {
			t.Errorf("demo %v: rejects.csv has %d lines: %q ... %q", flags, len(lines), lines[:2], lines[len(lines)-1])
		}
		if !strings.Contains(stdout.String(), "listed in "+filepath.Join(out, "rejects.csv")) {
			t.Errorf("demo %v: the summary does not name rejects.csv:\n%s", flags, stdout.String())
		}
	}
	if err := Run(context.Background(), []string{"--matches", matches, "--players", players, "--max-malformed", "2"}, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, cli.ErrUsage) {
		t.Errorf("--max-malformed 2: %v, want a usage error", err)
	}
}
