package incr_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
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
	refused, maintained := 0, 0
	for seed := range uint64(runs) {
		c := sqlgen.GenerateWith(seed, sqlgen.Options{Joins: true})
		tables, cat := sqlgenTables(t, c)
		root, err := sql.Compile(c.Query, cat)
		if err != nil {
			t.Fatalf("seed %d: %s: %v", seed, c.Query, err)
		}
		if seed%2 == 1 {
			root = rewrite.Optimize(root)
		}
		outer := strings.Contains(c.Query, "LEFT ") || strings.Contains(c.Query, "RIGHT ") || strings.Contains(c.Query, "FULL ")
		err = incr.Check(root)
		if outer {
			if !errors.Is(err, incr.ErrUnsupported) || !strings.Contains(err.Error(), " JOIN") {
				t.Fatalf("seed %d: %s: Check = %v, want an outer join refused", seed, c.Query, err)
			}
			if _, err := incr.New(root); !errors.Is(err, incr.ErrUnsupported) {
				t.Fatalf("seed %d: %s: New = %v, want it refused", seed, c.Query, err)
			}
			refused++
			continue
		}
		if err != nil {
			if !errors.Is(err, incr.ErrUnsupported) {
				t.Fatalf("seed %d: %s: %v", seed, c.Query, err)
			}
			continue
		}
		if strings.Contains(c.Query, " JOIN ") {
			maintained++
		}
		r := rand.New(rand.NewPCG(seed, 44))
		runEpochs(t, fmt.Sprintf("seed %d: %s", seed, c.Query), root, epochs(r, tables, 1+r.IntN(6)))
	}
	t.Logf("%d outer joins refused, %d inner joins maintained, of %d seeds", refused, maintained, runs)
	if refused < runs/10 || maintained < runs/40 {
		t.Errorf("%d refused, %d maintained: too few to test them", refused, maintained)
	}
}
