package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/datagen"
)

// TestEpochsAnswersAreTheBatchOnes: `wololo demo --epochs N` prints a
// line per version, and writes the same files as the demo run as one
// batch job.
func TestEpochsAnswersAreTheBatchOnes(t *testing.T) {
	dir := t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: 3000, Seed: 2}, dir); err != nil {
		t.Fatal(err)
	}
	in := []string{"--matches", filepath.Join(dir, "matches.csv"), "--players", filepath.Join(dir, "match_players.csv")}
	run := func(flags ...string) (string, string) {
		t.Helper()
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		if err := Run(context.Background(), append(append(in, "--out", out), flags...), &stdout, &stderr); err != nil {
			t.Fatalf("demo %v: %v\n%s", flags, err, stderr.String())
		}
		return out, stdout.String()
	}
	heap := filepath.Join(t.TempDir(), "heap.prof")
	batch, _ := run()
	for _, c := range []struct {
		flags []string
		lines []string
	}{
		{[]string{"--epochs", "4", "--memprofile", heap}, []string{"version 1: q1 ", "version 4: q1 ", "q4 5 rows", "; cpu "}},
		{[]string{"--epochs", "3", "--last-epoch-percent", "1"}, []string{"version 2: q1 ", "version 3: q1 ", "; cpu "}},
	} {
		standing, printed := run(c.flags...)
		for _, name := range queries.Names {
			want, err := os.ReadFile(filepath.Join(batch, name+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(standing, name+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%v: %s: the standing job's final answer is not the batch job's", c.flags, name)
			}
		}
		for _, line := range c.lines {
			if !strings.Contains(printed, line) {
				t.Errorf("%v: no %q in the output:\n%s", c.flags, line, printed)
			}
		}
	}
	if info, err := os.Stat(heap); err != nil || info.Size() == 0 {
		t.Errorf("--memprofile %s: %v (%v), want a heap profile", heap, err, info)
	}
	for _, flags := range [][]string{
		{"--epochs", "2", "--grpc"},
		{"--epochs", "1", "--last-epoch-percent", "1"},
		{"--epochs", "3", "--last-epoch-percent", "101"},
	} {
		var stderr bytes.Buffer
		if err := Run(context.Background(), append(in, flags...), &bytes.Buffer{}, &stderr); err == nil {
			t.Errorf("%v was not refused", flags)
		}
	}
}
