package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/roles/node"
)

// TestMalformedRecords runs the real binary: `client submit` of a players
// file of nothing but malformed records fails the job (exit 3) with a
// message naming the file, the counts, the limit and the first bad record,
// and writes the first 1000 of them to OUT/rejects.csv; a players file
// with a few bad rows is done, its four answers those of the reference on
// the same files, and rejects.csv lists each malformed record at its
// offset in the file; `demo` on the all-garbage file fails the same way.
func TestMalformedRecords(t *testing.T) {
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[0]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	tlsDir := clientDir(t, c, "client")
	dir := t.TempDir()

	players, err := os.ReadFile(d.players)
	if err != nil {
		t.Fatal(err)
	}
	header := players[:bytes.IndexByte(players, '\n')+1]
	garbage := filepath.Join(dir, "garbage_players.csv")
	if err := os.WriteFile(garbage, append(bytes.Clone(header), strings.Repeat("not;a;players;row\n", 1200)...), 0o644); err != nil {
		t.Fatal(err)
	}
	// A few bad rows in the good file, after lines 100, 2000 and 5000.
	bad := []string{"not,a,row\n", "x,\"bad\"quote,y,1\n", "just-one-field\n"}
	after := map[int]int{100: 0, 2000: 1, 5000: 2} // line → bad row
	var fewBad []byte
	var inserted []int64
	for i, line := range bytes.SplitAfter(players, []byte("\n")) {
		fewBad = append(fewBad, line...)
		if b, ok := after[i]; ok {
			inserted = append(inserted, int64(len(fewBad)))
			fewBad = append(fewBad, bad[b]...)
		}
	}
	few := filepath.Join(dir, "few_bad_players.csv")
	if err := os.WriteFile(few, fewBad, 0o644); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("%q still running after 2 minutes:\n%s", args, out)
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	submit := func(players, out string) []string {
		return []string{"client", "submit", "--server", c.GatewayAddr(), "--tls-dir", tlsDir, "--matches", d.matches, "--players", players, "--out", out}
	}
	firstAt := len(header)
	wantMsg := fmt.Sprintf(`match_players.csv: 1,200 of 1,200 records malformed (100%%), more than --max-malformed 10%%; first at byte %d (field-count): "not;a;players;row\n"`, firstAt)

	out := t.TempDir()
	text, code := run(submit(garbage, out)...)
	if code != cli.ExitJobFailed || !strings.Contains(text, wantMsg) || !strings.Contains(text, "the first 1000 malformed records are listed in "+filepath.Join(out, "rejects.csv")) {
		t.Fatalf("submit of an all-garbage players file: exit %d, want %d, with %s and where they are listed:\n%s", code, cli.ExitJobFailed, wantMsg, text)
	}
	rows := readRejects(t, out)
	if len(rows) != schema.MaxRejectsListed {
		t.Fatalf("rejects.csv of the all-garbage file lists %d records, want the first %d", len(rows), schema.MaxRejectsListed)
	}
	for i, r := range rows {
		if want := []string{"match_players.csv", strconv.Itoa(firstAt + 18*i), "field-count", "not;a;players;row"}; strings.Join(r, "|") != strings.Join(want, "|") {
			t.Fatalf("rejects.csv line %d: %q, want %q", i+2, r, want)
		}
	}

	out = t.TempDir()
	if text, code := run(submit(few, out)...); code != 0 {
		t.Fatalf("submit of a players file with a few bad rows: exit %d:\n%s", code, text)
	}
	want, err := reference.EvaluateFiles(d.matches, few)
	if err != nil {
		t.Fatal(err)
	}
	compareOutputs(t, &dataset{name: "few-bad", matches: d.matches, players: few, want: want}, out)
	rows = readRejects(t, out)
	if int64(len(rows)) != want.Report.Matches.Malformed+want.Report.Players.Malformed {
		t.Errorf("rejects.csv lists %d records; the reference skips %d and %d", len(rows), want.Report.Matches.Malformed, want.Report.Players.Malformed)
	}
	files := map[string][]byte{"matches.csv": must(os.ReadFile(d.matches)), "match_players.csv": fewBad}
	found := 0
	for _, r := range rows {
		off, err := strconv.Atoi(r[1])
		data := files[r[0]]
		if err != nil || off >= len(data) || !bytes.HasPrefix(data[off:], []byte(r[3])) {
			t.Errorf("rejects.csv: %q is not what the file holds at that offset", r)
			continue
		}
		for i, at := range inserted {
			if r[0] == "match_players.csv" && int64(off) == at && r[3] == strings.TrimSuffix(bad[i], "\n") {
				found++
			}
		}
	}
	if found != len(bad) {
		t.Errorf("rejects.csv lists %d of the %d bad rows at %v:\n%q", found, len(bad), inserted, rows)
	}

	text, code = run("demo", "--matches", d.matches, "--players", garbage, "--out", t.TempDir())
	if code != cli.ExitJobFailed || !strings.Contains(text, wantMsg) {
		t.Fatalf("demo on an all-garbage players file: exit %d, want %d with %s:\n%s", code, cli.ExitJobFailed, wantMsg, text)
	}
}

// readRejects reads OUT/rejects.csv, header checked and left out.
func readRejects(t *testing.T, out string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(out, "rejects.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != "file,offset,reason,first_bytes" {
		t.Fatalf("rejects.csv header: %q", rows)
	}
	return rows[1:]
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
