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
// end against all its right rows. Its rows are the unspilled join's. A
// right join too: its partitions take which right rows have matched, and
// the right rows no left row matched, before the spill or after, come
// out unmatched once (keys k0..k99 are matched before the spill, k100..
// k199 after, k200..k299 never).
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
	run := func(jo *join, space *spill.Space, before, after *exec.Batch) (rows []string, spilled bool) {
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
		if err := jo.Apply(0, before, out); err != nil {
			t.Fatal(err)
		}
		if space != nil {
			var err error
			if spilled, err = jo.spill(space); err != nil {
				t.Fatal(err)
			}
		}
		if err := jo.Apply(0, after, out); err != nil {
			t.Fatal(err)
		}
		if err := jo.Finish(out); err != nil {
			t.Fatal(err)
		}
		slices.Sort(rows)
		return rows, spilled
	}
	space := spill.NewSpace(t.TempDir(), "job", 1<<30)
	defer space.Close()
	for _, c := range []struct {
		typ           plan.JoinType
		before, after *exec.Batch
		rows          int
	}{
		{plan.JoinInner, keyed("l", 0, 400), keyed("l", 400, 500), 900 * 2},
		// 200 left rows of 2 right rows each, and 100 keys' right rows
		// unmatched.
		{plan.JoinRight, keyed("l", 0, 100), keyed("l", 100, 100), 200*2 + 100*2},
	} {
		want, _ := run(newJ(c.typ), nil, c.before, c.after)
		if len(want) != c.rows {
			t.Fatalf("%s: the unspilled join made %d rows, want %d", c.typ, len(want), c.rows)
		}
		got, spilled := run(newJ(c.typ), space, c.before, c.after)
		if !spilled {
			t.Fatalf("a %s join whose right input has ended did not spill", c.typ)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: spilled after the right input's end: %d rows, the unspilled join's %d", c.typ, len(got), len(want))
		}
	}
}

// TestSpillLargestMovesHalf: a spill marks the largest partitions still
// in memory until about half of what they hold is out, one at least, and
// none when they hold nothing.
func TestSpillLargestMovesHalf(t *testing.T) {
	even := func(n int64) (s [spillParts]int64) {
		for p := range s {
			s[p] = n
		}
		return s
	}
	var largest [spillParts]int64
	largest[7], largest[3] = 100, 50
	for _, c := range []struct {
		name string
		out  [spillParts]bool
		size [spillParts]int64
		want []int // partitions marked
	}{
		{"half", [spillParts]bool{}, even(10), []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
		{"of what is still in", [spillParts]bool{0: true, 1: true, 2: true, 3: true}, even(10), []int{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}},
		{"the largest first, one at least", [spillParts]bool{}, largest, []int{7}},
		{"nothing held", [spillParts]bool{}, even(0), nil},
	} {
		out := c.out
		marked := spillLargest(&out, &c.size)
		if !slices.Equal(marked, c.want) {
			t.Errorf("%s: marked %v, want %v", c.name, marked, c.want)
		}
		for _, p := range marked {
			if c.out[p] || !out[p] {
				t.Errorf("%s: partition %d marked wrong (out before %v, after %v)", c.name, p, c.out[p], out[p])
			}
		}
	}
}
