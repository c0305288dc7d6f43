package e2e

import (
	"fmt"
	"regexp"
	"strconv"
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
	d := testDatasets(t)[0]
	printed := localRunVersions(t, d, "--epochs", "3")
	if !strings.Contains(printed, "standing job: 3 appends") {
		t.Errorf("no header line in the output:\n%s", printed)
	}
	if strings.Contains(printed, "version 4:") {
		t.Errorf("more versions than appends:\n%s", printed)
	}
}

// TestLocalRunEpochEvery: `wololo local run --epoch-every D` uploads the
// files once as a standing job that the gateway cuts into an epoch every
// D of input; every version is printed as it comes out, the last one's
// rows are the final answers', and the results are the batch job's.
func TestLocalRunEpochEvery(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a local cluster")
	}
	d := testDatasets(t)[0]
	printed := localRunVersions(t, d, "--epoch-every", "20ms")
	if !strings.Contains(printed, "standing job: 1 append") {
		t.Errorf("no header line in the output:\n%s", printed)
	}
}

// versionLine is a line `local run` prints per version.
var versionLine = regexp.MustCompile(`(?m)^version (\d+): (.*); out at (\S+)$`)

// localRunVersions runs `wololo local run` on d with the flags of a
// standing job, checks its results (the reference's), that it printed
// versions 1..N in order, each with when it came out, N's rows being the
// final answers', and the first version's time; it returns stdout.
func localRunVersions(t *testing.T, d *dataset, flags ...string) string {
	t.Helper()
	bin := testkit.WololoBinary(t)
	out := t.TempDir()
	args := append([]string{"local", "run", "--free-ports", "--log-level", "warn"}, flags...)
	r := runFor(t, 3*time.Minute, bin, append(args, "--matches", d.matches, "--players", d.players, "--out", out)...)
	if r.code != 0 {
		t.Fatalf("local run %s: exit %d after %s:\n%s", strings.Join(flags, " "), r.code, r.took, r.output())
	}
	compareOutputs(t, d, out)
	printed := r.stdout
	lines := versionLine.FindAllStringSubmatch(printed, -1)
	if len(lines) == 0 {
		t.Fatalf("no version line in the output:\n%s", printed)
	}
	var last time.Duration
	for i, l := range lines {
		if l[1] != strconv.Itoa(i+1) {
			t.Errorf("version line %d is version %s:\n%s", i+1, l[1], printed)
		}
		if !strings.HasPrefix(l[2], queries.Names[0]+" ") {
			t.Errorf("version %s does not begin with %s: %s", l[1], queries.Names[0], l[2])
		}
		at, err := time.ParseDuration(l[3])
		if err != nil || at < last {
			t.Errorf("version %s out at %q, after %s: %v", l[1], l[3], last, err)
		}
		last = at
	}
	if want := fmt.Sprintf("first version out %s after the upload began; %d versions", lines[0][3], len(lines)); !strings.Contains(printed, want) {
		t.Errorf("no %q in the output:\n%s", want, printed)
	}
	// The last version's rows are the final answer's.
	final := lines[len(lines)-1][2]
	for name, want := range d.want.Files() {
		q := strings.TrimSuffix(name, ".csv")
		rows := strings.Count(string(want), "\n") - 1
		if !strings.Contains(final, fmt.Sprintf("%s %d rows (+", q, rows)) {
			t.Errorf("the last version does not give %s %d rows: %s", q, rows, final)
		}
	}
	return printed
}
