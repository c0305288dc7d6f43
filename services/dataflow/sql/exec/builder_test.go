package exec

import (
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// TestBuilderGrowsByDoubling: a value at a time, a builder's slices
// double when they grow (appendOne), where append grows a large slice by
// a quarter and copies it each time (an aggregate's groups' keys, built
// a group at a time).
func TestBuilderGrowsByDoubling(t *testing.T) {
	for _, typ := range []plan.Type{plan.Number, plan.Bool, plan.Text} {
		bl := newBuilder(typ, 0)
		grown, last := 0, -1
		for i := range 100_000 {
			switch {
			case i%3 == 0:
				bl.null()
			case typ == plan.Number:
				bl.num(value.Int(int64(i)))
			case typ == plan.Bool:
				bl.boolean(i%2 == 0)
			default:
				bl.text([]byte("x"))
			}
			if c := cap(bl.v.Nums) + cap(bl.v.Bools) + cap(bl.v.Ends) + cap(bl.v.Null); c != last {
				grown, last = grown+1, c
			}
		}
		if grown > 28 {
			t.Errorf("%s: 100,000 values a value at a time: its slices grew %d times, want at most 28 (doubling: 26 for numbers; by a quarter: 48)", typ, grown)
		}
	}
}
