package incr

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// keptCols are TestKeptRows' columns: text of a few values (coded),
// text of a value per row (past maxWords: the texts), a number, a
// boolean.
var keptCols = []plan.Column{{Name: "t", Type: plan.Text}, {Name: "u", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}}

// keptRow is a row of keptCols and its weight, as text (NULL as "-").
func keptRow(b *exec.Batch, i int) string {
	var out string
	for _, v := range b.Cols {
		if v.IsNull(i) {
			out += "-,"
		} else {
			out += string(exec.AppendText(nil, v, i)) + ","
		}
	}
	return out
}

// TestKeptRows holds keptRows to a slice of rows per slot through random
// adds (NULLs, weights not 1 among them) and clears, so that it is
// compacted again and again; and after each step, to a snapshot of it
// read back: every slot's rows the same, the last added first.
func TestKeptRows(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const slots = 20
	k := newKeptRows(keptCols)
	k.grow(slots)
	want := make([][]string, slots)
	compacted := 0
	for step := range 3000 {
		if r.IntN(3) == 0 {
			s := int32(r.IntN(slots))
			before := k.rows()
			k.clear(s)
			want[s] = nil
			if k.rows() < before {
				compacted++
			}
		} else {
			n := 1 + r.IntN(8)
			b := &exec.Batch{N: n}
			tv := &exec.Vec{Type: plan.Text, N: n, Null: make([]bool, n)}
			uv := &exec.Vec{Type: plan.Text, N: n, Null: make([]bool, n)}
			nv := &exec.Vec{Type: plan.Number, N: n, Nums: make([]value.Dec, n)}
			bv := &exec.Vec{Type: plan.Bool, N: n, Bools: make([]bool, n)}
			ws := make([]int64, n)
			var rows, sl []int32
			for i := range n {
				tv.Data = fmt.Appendf(tv.Data, "civ%d", r.IntN(30))
				tv.Ends = append(tv.Ends, uint32(len(tv.Data)))
				uv.Data = fmt.Appendf(uv.Data, "match%d", step*10+i)
				uv.Ends = append(uv.Ends, uint32(len(uv.Data)))
				uv.Null[i] = r.IntN(10) == 0
				tv.Null[i] = r.IntN(10) == 0
				nv.Nums[i] = value.Int(int64(r.IntN(1000)))
				bv.Bools[i] = r.IntN(2) == 0
				ws[i] = 1
				if step > 1500 && r.IntN(20) == 0 {
					ws[i] = int64(r.IntN(5)) - 2
				}
				if r.IntN(3) > 0 { // the rest not kept
					rows, sl = append(rows, int32(i)), append(sl, int32(r.IntN(slots)))
				}
			}
			b.Cols = []*exec.Vec{tv, uv, nv, bv, weightVec(ws)}
			k.add(b, rows, sl)
			for j, i := range rows {
				want[sl[j]] = append(want[sl[j]], keptRow(b, int(i)))
			}
		}
		w := &snapcodec.Writer{}
		counts := &keyCounts{}
		counts.grow(slots)
		k.write(w, counts)
		back := newKeptRows(keptCols)
		rd := &snapcodec.Reader{B: w.B, Corrupt: ErrSnapshot}
		back.read(rd, counts)
		if err := rd.End(); err != nil {
			t.Fatalf("step %d: its snapshot read back: %v", step, err)
		}
		for _, got := range []*keptRows{k, back} {
			for s := range int32(slots) {
				ids := got.appendTo(nil, s)
				slices.Reverse(ids)
				if !slices.IsSorted(ids) {
					t.Fatalf("step %d: slot %d's rows %v are not the last added first", step, s, ids)
				}
				b := got.gather(ids)
				rows := make([]string, b.N)
				for i := range rows {
					rows[i] = keptRow(b, i)
				}
				if !slices.Equal(rows, want[s]) {
					t.Fatalf("step %d: slot %d holds %v, want %v", step, s, rows, want[s])
				}
			}
		}
	}
	if compacted < 10 {
		t.Fatalf("compacted %d times, want the dead rows moved out again and again", compacted)
	}
	if k.cols[0].words == nil || k.cols[1].words != nil {
		t.Fatalf("a column of %d values coded: %v, one of a value per row: %v; want coded and not", 30, k.cols[0].words != nil, k.cols[1].words != nil)
	}
}
