package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/queries"
)

// TestLocalRunEpochs: `wololo local run --epochs 3` feeds the durable
// cluster a standing job in three appends through the client, prints a
// line per version with each query's rows and change, and writes the
// same results as a batch job over the whole files (the reference's).
func TestLocalRunEpochs(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a local cluster")
	}
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[0]
	out := t.TempDir()
	r := runFor(t, 3*time.Minute, bin, "local", "run", "--free-ports", "--log-level", "warn", "--epochs", "3",
		"--matches", d.matches, "--players", d.players, "--out", out)
	if r.code != 0 {
		t.Fatalf("local run --epochs 3: exit %d after %s:\n%s", r.code, r.took, r.output())
	}
	compareOutputs(t, d, out)
	printed := r.stdout
	if !strings.Contains(printed, "standing job: 3 appends") {
		t.Errorf("no header line in the output:\n%s", printed)
	}
	for k := 1; k <= 3; k++ {
		line := fmt.Sprintf("version %d: %s ", k, queries.Names[0])
		if !strings.Contains(printed, line) {
			t.Errorf("no %q in the output:\n%s", line, printed)
		}
	}
	if strings.Contains(printed, "version 4:") {
		t.Errorf("more versions than appends:\n%s", printed)
	}
	// The last version's rows are the final answer's.
	last := printed[strings.Index(printed, "version 3: "):]
	last = last[:strings.IndexByte(last, '\n')]
	for name, want := range d.want.Files() {
		q := strings.TrimSuffix(name, ".csv")
		rows := strings.Count(string(want), "\n") - 1
		if !strings.Contains(last, fmt.Sprintf("%s %d rows (+", q, rows)) {
			t.Errorf("version 3 does not give %s %d rows: %s", q, rows, last)
		}
	}
}
