package incr_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// TestOuterJoinsRefused: a standing query of an outer join is refused
// by Check and New, naming the join, never answered with a NULL-padded
// row that a later epoch's match should have retracted; sqlgen's random
// joins are refused exactly when they are outer, and the inner ones are
// maintained exactly.
func TestOuterJoinsRefused(t *testing.T) {
	runs := 300
	if testing.Short() {
		runs = 100
	}
	outer := func(c sqlgen.Case, _ *plan.Node) bool {
		return strings.Contains(c.Query, "LEFT ") || strings.Contains(c.Query, "RIGHT ") || strings.Contains(c.Query, "FULL ")
	}
	refused, maintained := refusedOrMaintained(t, runs, sqlgen.Options{Joins: true}, outer, " JOIN", 44)
	t.Logf("%d outer joins refused, %d inner joins maintained, of %d seeds", refused, maintained, runs)
	if refused < runs/10 || maintained < runs/40 {
		t.Errorf("%d refused, %d maintained: too few to test them", refused, maintained)
	}
}

// refusedOrMaintained runs the seeds' cases of o (each query as Compile
// makes it for an even seed, rewritten for an odd one): those refused
// says are refused by Check and New, with an error naming want; the
// others that hold a join are maintained exactly over random epochs of
// the PCG stream. It returns how many of each; a seed of no join does
// not count.
func refusedOrMaintained(t *testing.T, runs int, o sqlgen.Options, refused func(sqlgen.Case, *plan.Node) bool, want string, stream uint64) (int, int) {
	t.Helper()
	nRefused, maintained := 0, 0
	for seed := range uint64(runs) {
		c := sqlgen.GenerateWith(seed, o)
		tables, cat := sqlgenTables(t, c)
		root, err := sql.Compile(c.Query, cat)
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, c.Query, err)
		}
		if seed%2 == 1 {
			root = rewrite.Optimize(root)
		}
		err = incr.Check(root)
		if refused(c, root) {
			if !errors.Is(err, incr.ErrUnsupported) || !strings.Contains(err.Error(), want) {
				t.Fatalf("seed %d: %s: Check = %v, want it refused naming %q", seed, c.Query, err, want)
			}
			if _, err := incr.New(root); !errors.Is(err, incr.ErrUnsupported) {
				t.Fatalf("seed %d: %s: New = %v, want it refused", seed, c.Query, err)
			}
			nRefused++
			continue
		}
		if err != nil {
			if !errors.Is(err, incr.ErrUnsupported) {
				t.Fatalf("seed %d: %s: %v", seed, c.Query, err)
			}
			continue
		}
		if strings.Contains(c.Query, " JOIN ") || hasJoin(root) {
			maintained++
		}
		r := rand.New(rand.NewPCG(seed, stream))
		runEpochs(t, fmt.Sprintf("seed %d: %s", seed, c.Query), root, epochs(r, tables, 1+r.IntN(6)))
	}
	return nRefused, maintained
}

// hasJoin reports whether n has a join.
func hasJoin(n *plan.Node) bool {
	if n.Op == plan.Join {
		return true
	}
	for _, in := range n.Input {
		if hasJoin(in) {
			return true
		}
	}
	return false
}
