package exec_test

import (
	"fmt"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// TestRowsGathersText: Batch.Rows takes each row's text, in runs of
// consecutive rows and out of order, repeated, NULL and empty alike.
func TestRowsGathersText(t *testing.T) {
	vb := exec.NewVecBuilder(plan.Text, 10)
	for i := range 10 {
		if i == 4 {
			vb.Null()
			continue
		}
		text := fmt.Appendf(nil, "v%d", i*i)
		if i == 7 {
			text = nil
		}
		if err := vb.Text(text); err != nil {
			t.Fatal(err)
		}
	}
	b := &exec.Batch{N: 10, Cols: []*exec.Vec{vb.Vec()}}
	rows := []int32{0, 1, 2, 5, 6, 7, 3, 3, 9, 4, 8}
	got := b.Rows(rows)
	for k, r := range rows {
		v, w := got.Cols[0], b.Cols[0]
		if v.IsNull(k) != w.IsNull(int(r)) || string(v.Text(k)) != string(w.Text(int(r))) {
			t.Errorf("row %d (of %d): %q, want %q", k, r, v.Text(k), w.Text(int(r)))
		}
	}
}
