package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
)

// TestLocalRunGroupByACase: issue 38's query (bandQuery) runs in `wololo
// local run`, the durable cluster of processes, and answers as the
// engine's in-process runner does (which tools/duckdb's
// TestBandQueryAgainstDuckDB holds to DuckDB's answer): in such a
// deployment it once hung, its channel's name refused by the receivers.
func TestLocalRunGroupByACase(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a local cluster")
	}
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[0]
	out := t.TempDir()
	r := runFor(t, 3*time.Minute, bin, "local", "run", "--free-ports", "--log-level", "warn", "--query", bandQuery.Name+"="+bandQueryFile,
		"--matches", d.matches, "--players", d.players, "--out", out)
	if r.code != 0 {
		t.Fatalf("local run: exit %d after %s:\n%s", r.code, r.took, r.output())
	}
	got, err := os.ReadFile(filepath.Join(out, bandQuery.Name+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := inProcess(t, d, []sqljob.Query{bandQuery})[bandQuery.Name]
	if !bytes.Equal(got, want) {
		t.Errorf("bands.csv of local run differs\n got: %q\nwant: %q", got, want)
	}
	if n := bytes.Count(want, []byte("\n")); n != 5 {
		t.Errorf("the expected answer %q has %d lines, want a header and 4 bands: the dataset does not exercise the query", want, n)
	}
}
