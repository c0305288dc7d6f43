package sqlops

import (
	"fmt"
	"slices"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/spill"
)

// textBatch is a batch of text columns, cols[c][i] row i's value of c.
func textBatch(cols ...[]string) *exec.Batch {
	b := &exec.Batch{N: len(cols[0])}
	for _, col := range cols {
		v := &exec.Vec{Type: plan.Text, N: len(col), Ends: make([]uint32, len(col))}
		for i, s := range col {
			v.Data = append(v.Data, s...)
			v.Ends[i] = uint32(len(v.Data))
		}
		b.Cols = append(b.Cols, v)
	}
	return b
}

// keyed is n rows: key k<i> (i from 0), and a value naming the side and
// the row.
func keyed(side string, from, n int) *exec.Batch {
	keys, vals := make([]string, n), make([]string, n)
	for i := range n {
		keys[i], vals[i] = fmt.Sprintf("k%d", (from+i)%300), fmt.Sprintf("%s%d", side, from+i)
	}
	return textBatch(keys, vals)
}

// TestJoinSpillsAfterItsRightInputEnded: an inner join whose right input
// has ended can still move its partitions to disk (its left rows are
// probed as they come then, and the task's other operators grow); the
// left rows of a spilled partition that come after are probed at its
// end against all its right rows. Its rows are the unspilled join's.
// A right join cannot (it would carry which right rows have matched).
func TestJoinSpillsAfterItsRightInputEnded(t *testing.T) {
	cols := []plan.Column{{Name: "k", Type: plan.Text}, {Name: "v", Type: plan.Text}}
	key := &plan.Expr{Kind: plan.ColRef, Col: 0, Type: plan.Text}
	newJ := func(typ plan.JoinType) *join {
		table := exec.NewKeyTable()
		n := &plan.Node{JoinType: typ, LeftKey: key, RightKey: key}
		jo := newTypedJoin(n, cols, exec.NewJoin(table, key, key, cols), cols)
		jo.id, jo.table = 1, table
		return jo
	}
	run := func(jo *join, space *spill.Space) (rows []string, spilled bool) {
		out := func(b *exec.Batch) {
			for i := range b.N {
				var r string
				for _, v := range b.Cols {
					r += string(v.Text(i)) + ","
				}
				rows = append(rows, r)
			}
		}
		for from := 0; from < 600; from += 200 {
			if err := jo.Apply(1, keyed("r", from, 200), out); err != nil {
				t.Fatal(err)
			}
		}
		if err := jo.EndInput(1, out); err != nil {
			t.Fatal(err)
		}
		if err := jo.Apply(0, keyed("l", 0, 400), out); err != nil {
			t.Fatal(err)
		}
		if space != nil {
			var err error
			if spilled, err = jo.spill(space); err != nil {
				t.Fatal(err)
			}
		}
		if err := jo.Apply(0, keyed("l", 400, 500), out); err != nil {
			t.Fatal(err)
		}
		if err := jo.Finish(out); err != nil {
			t.Fatal(err)
		}
		slices.Sort(rows)
		return rows, spilled
	}
	want, _ := run(newJ(plan.JoinInner), nil)
	if len(want) != 900*2 {
		t.Fatalf("the unspilled join made %d rows, want %d", len(want), 900*2)
	}
	space := spill.NewSpace(t.TempDir(), "job", 1<<30)
	defer space.Close()
	got, spilled := run(newJ(plan.JoinInner), space)
	if !spilled {
		t.Fatal("an inner join whose right input has ended did not spill")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("spilled after the right input's end: %d rows, the unspilled join's %d", len(got), len(want))
	}
	if _, spilled := run(newJ(plan.JoinRight), space); spilled {
		t.Fatal("a right join spilled after its right input's end")
	}
}
