package exec_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// TestCondsMatchEval: Conds of several conditions at once (conjuncts
// shared, constants on either side, numbers of mixed scales and wider
// than an int64, NULLs) finds the rows where each condition's eval
// (Project) is true, in order, and so does each condition alone.
func TestCondsMatchEval(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	nums := []string{"", "2", "2.0", "2.50", "-1", "1.499", "3", "123456789012345678901234", "0.0000000000000000000001"}
	texts := []string{"", "a", "b", "c", "ab"}
	bools := []string{"", "true", "false"}
	var csv strings.Builder
	csv.WriteString("t,n,b,d\n")
	for range 3 * exec.BatchRows / 2 {
		fmt.Fprintf(&csv, "%s,%s,%s,%d:00:%02d\n", texts[r.IntN(len(texts))], nums[r.IntN(len(nums))], bools[r.IntN(len(bools))], r.IntN(3), r.IntN(60))
	}
	wheres := []string{
		"t = 'a' and n > 2 and not b",
		"t = 'a' and n > 2",
		"n > 2 and t = 'a' and b",
		"n > 2 and t in ('a', 'c') and b",
		"2 < n and t <> ''",
		"n >= 1.5 and b is not null and t <> ''",
		"t >= 'a' and b is not null and n is null",
		"(n > 2 or b) and t > 'b' and n * 2 < 7",
		"n = 2.50 and duration_seconds(d) > 60",
		"n <= 123456789012345678901234 and t >= 'ab' and b is null",
		"not (n > 2 and b) and t < 'b'",
	}
	// Each condition types every column alike (the catalog has names only).
	const typing = " and (b is null or b or not b) and (n is null or n * 1 = n) and duration_seconds(d) >= 0"
	var conds []*plan.Expr
	var batches []*exec.Batch
	for _, w := range wheres {
		filter, bs := scanned(t, "select t, n, b, d from p where "+w+typing, csv.String(), plan.Filter)
		conds, batches = append(conds, filter.Cond), bs
	}
	all := exec.NewConds(conds)
	for bi, b := range batches {
		got, err := all.TrueRows(b)
		if err != nil {
			t.Fatal(err)
		}
		for k, cond := range conds {
			want := evalRows(t, cond, b)
			alone, err := exec.NewConds([]*plan.Expr{cond}).TrueRows(b)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got[k], want) || !slices.Equal(alone[0], want) {
				t.Errorf("batch %d, %s: rows %v, alone %v, want %v", bi, wheres[k], got[k], alone[0], want)
			}
		}
	}
}

// evalRows is the rows of b where cond's eval is true.
func evalRows(t *testing.T, cond *plan.Expr, b *exec.Batch) []int32 {
	t.Helper()
	p, err := exec.Project([]*plan.Expr{cond}, []*exec.Batch{b})
	if err != nil {
		t.Fatal(err)
	}
	v := p[0].Cols[0]
	rows := []int32{}
	for i := range v.N {
		if !v.IsNull(i) && v.Bools[i] {
			rows = append(rows, int32(i))
		}
	}
	return rows
}
