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
	batch, _ := run()
	standing, printed := run("--epochs", "4")
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
			t.Errorf("%s: the standing job's final answer is not the batch job's", name)
		}
	}
	for _, line := range []string{"version 1: q1 ", "version 4: q1 ", "q4 5 rows"} {
		if !strings.Contains(printed, line) {
			t.Errorf("no %q in the output:\n%s", line, printed)
		}
	}
	var stderr bytes.Buffer
	if err := Run(context.Background(), append(in, "--epochs", "2", "--grpc"), &bytes.Buffer{}, &stderr); err == nil {
		t.Error("--epochs with --grpc was not refused")
	}
}
