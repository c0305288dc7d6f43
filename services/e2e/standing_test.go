package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/client"
	sqlflags "github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/roles/node"
)

// standingEpochs is how many epochs TestStandingJobThroughTheCLI makes:
// the submit's and three appends.
const standingEpochs = 4

// splitEpochs cuts a CSV file into n parts of about as many lines, each
// with the header row, into dir (NAME.K.csv, K from 1), and writes each
// prefix of them as one file (NAME.upto.K.csv): what a batch job over
// epochs 1..K reads. The bytes are the file's, lines kept whole.
func splitEpochs(t *testing.T, path, dir string, n int) (parts, prefixes []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header, body, _ := bytes.Cut(data, []byte("\n"))
	lines := bytes.SplitAfter(body, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	name := strings.TrimSuffix(filepath.Base(path), ".csv")
	prefix := append(slices.Clone(header), '\n')
	for k := 1; k <= n; k++ {
		part := append(slices.Clone(header), '\n')
		for _, l := range lines[(k-1)*len(lines)/n : k*len(lines)/n] {
			part = append(part, l...)
			prefix = append(prefix, l...)
		}
		p, q := filepath.Join(dir, fmt.Sprintf("%s.%d.csv", name, k)), filepath.Join(dir, fmt.Sprintf("%s.upto.%d.csv", name, k))
		if err := os.WriteFile(p, part, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(q, prefix, 0o644); err != nil {
			t.Fatal(err)
		}
		parts, prefixes = append(parts, p), append(prefixes, q)
	}
	return parts, prefixes
}

// rowCounts reads a result file's rows (fields joined) and their counts,
// the header left out.
func rowCounts(t *testing.T, data []byte) map[string]int64 {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range recs[1:] {
		out[strings.Join(r, "\x00")]++
	}
	return out
}

// TestStandingJobThroughTheCLI: a standing job as a user runs it with
// the CLI: `submit --standing` (epoch 1), three `append`s, `watch
// --answers` from the start, `results --epoch 2`, `close`, `results`.
// Every version, written by the submit and each append, equals the SQL
// engine's answer (sqlops.Answer) over the rows of its epochs so far; the
// changes watched add up to each version; the final results are the last
// version.
func TestStandingJobThroughTheCLI(t *testing.T) {
	t.Skip("needs the epoch runtime (integration)")
	d := testDatasets(t)[1]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 2})
	gateway := []string{"--server", c.GatewayAddr(), "--tls-dir", clientDir(t, c, "client"), "--name", "client"}
	dir := t.TempDir()
	matches, matchesUpTo := splitEpochs(t, d.matches, dir, standingEpochs)
	players, playersUpTo := splitEpochs(t, d.players, dir, standingEpochs)
	queries := sqlflags.DefaultQueries()
	want := make([]map[string][]byte, standingEpochs+1) // by epoch, from 1
	for k := 1; k <= standingEpochs; k++ {
		want[k] = answerOn(t, map[string]string{"matches": matchesUpTo[k-1], "match_players": playersUpTo[k-1]}, queries)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := client.Run(ctx, append(args, gateway...), &stdout, &stderr); err != nil {
			t.Fatalf("client %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String()
	}
	check := func(what, out string, k int) {
		t.Helper()
		for _, q := range queries {
			got, err := os.ReadFile(filepath.Join(out, q.Name+".csv"))
			if err != nil || !bytes.Equal(got, want[k][q.Name]) {
				t.Errorf("%s: %s.csv is not the answer over epochs 1..%d (%v)\n got: %.300q\nwant: %.300q", what, q.Name, k, err, got, want[k][q.Name])
			}
		}
	}

	out := t.TempDir()
	run("submit", "--standing", "--quiet", "--job", "standing", "--matches", matches[0], "--players", players[0], "--out", out)
	check("submit --standing", out, 1)
	watched := make(chan string, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		err := client.Run(ctx, append([]string{"watch", "--answers", "--job", "standing"}, gateway...), &stdout, &stderr)
		if err != nil {
			stdout.WriteString("error: " + err.Error())
		}
		watched <- stdout.String()
	}()
	for k := 2; k <= standingEpochs; k++ {
		out := t.TempDir()
		run("append", "--quiet", "--job", "standing", "--matches", matches[k-1], "--players", players[k-1], "--out", out)
		check(fmt.Sprintf("append %d", k), out, k)
	}
	out = t.TempDir()
	run("results", "--job", "standing", "--epoch", "2", "--out", out)
	check("results --epoch 2", out, 2)
	run("close", "--job", "standing")
	out = t.TempDir()
	run("results", "--job", "standing", "--out", out, "--keep")
	check("results after close", out, standingEpochs)

	// The changes watched, added up epoch by epoch, are each version.
	lines := strings.Split(strings.TrimSpace(<-watched), "\n")
	if lines[0] != "epoch query diff row" {
		t.Fatalf("watch --answers: %q", lines)
	}
	sums := map[string]map[string]int64{}
	byEpoch := map[int][]string{}
	for _, l := range lines[1:] {
		f := strings.SplitN(l, " ", 4)
		k, err := strconv.Atoi(f[0])
		if len(f) != 4 || err != nil {
			t.Fatalf("watch --answers line %q", l)
		}
		byEpoch[k] = append(byEpoch[k], l)
	}
	for k := 1; k <= standingEpochs; k++ {
		for _, l := range byEpoch[k] {
			f := strings.SplitN(l, " ", 4)
			diff, _ := strconv.ParseInt(f[2], 10, 64)
			row, err := csv.NewReader(strings.NewReader(f[3])).Read()
			if err != nil {
				t.Fatalf("watch --answers line %q: %v", l, err)
			}
			if sums[f[1]] == nil {
				sums[f[1]] = map[string]int64{}
			}
			key := strings.Join(row, "\x00")
			if sums[f[1]][key] += diff; sums[f[1]][key] == 0 {
				delete(sums[f[1]], key)
			}
		}
		for _, q := range queries {
			if got, w := sums[q.Name], rowCounts(t, want[k][q.Name]); fmt.Sprint(got) != fmt.Sprint(w) {
				t.Errorf("epoch %d, %s: the changes watched add up to %v; want %v", k, q.Name, got, w)
			}
		}
	}
}
