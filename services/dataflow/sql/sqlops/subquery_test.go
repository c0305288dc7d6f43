package sqlops_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// TestEpochsExprSubqueries runs sqlgen's queries with subqueries of
// expressions (Options.ExprSubqueries) as standing jobs on one task and
// on 1, 2 and 3 shards: EXISTS and scalar subqueries (a cross product
// with a one-row aggregate that changes) give every version the batch
// answer over the epochs so far; a mark join (x [NOT] IN (SELECT ...)
// as a value) is refused by CheckStanding, naming it.
func TestEpochsExprSubqueries(t *testing.T) {
	runs := 120
	if testing.Short() {
		runs = 40
	}
	maintained, refused := 0, 0
	for seed := range uint64(runs) {
		c := sqlgen.GenerateWith(seed, sqlgen.Options{ExprSubqueries: true})
		if !c.ExprSubquery {
			continue
		}
		tables := caseTables(t, c)
		texts := map[string]string{"s": strings.ToValidUTF8(c.Query, "?")}
		j := newJob(t, texts, []string{"s"}, tables)
		shards := int(seed % 4)
		if err := incr.Check(j.roots["s"]); err != nil {
			p := planOf(t, j.texts, j.names, tables, shards)
			if err := sqlops.CheckStanding(p); !errors.Is(err, incr.ErrUnsupported) || !strings.Contains(err.Error(), "IN (SELECT ...)") {
				t.Fatalf("seed %d: %s: CheckStanding = %v, want the mark join refused", seed, c.Query, err)
			}
			refused++
			continue
		}
		r := rand.New(rand.NewPCG(seed, 46))
		checkEpochs(t, fmt.Sprintf("seed %d", seed), j, tables, splitEpochs(r, tables, 1+r.IntN(6)), shards)
		maintained++
	}
	t.Logf("%d standing jobs of EXISTS or scalar subqueries checked, %d mark joins refused", maintained, refused)
	if maintained < runs/10 || refused < runs/10 {
		t.Errorf("too few to test them")
	}
}
