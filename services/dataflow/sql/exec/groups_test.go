package exec

import (
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// TestResultRowsAndGroupsOf: ResultRows of any groups, scattered and
// repeated, is those rows of Result, for every kind of state (counts,
// sums wider than an int64, minima of text and of numbers, STDDEV_SAMP);
// GroupsOf finds the groups of keys added and -1 for the others, and
// AddSlots of the slots adds the rows to their groups.
func TestResultRowsAndGroupsOf(t *testing.T) {
	col := func(i int, ty plan.Type) *plan.Expr { return &plan.Expr{Kind: plan.ColRef, Col: i, Type: ty} }
	key, num, txt := col(0, plan.Text), col(1, plan.Number), col(2, plan.Text)
	aggs := []*plan.Agg{
		{Func: plan.CountStar}, {Func: plan.Sum, Arg: num}, {Func: plan.Min, Arg: txt},
		{Func: plan.Max, Arg: num}, {Func: plan.Avg, Arg: num}, {Func: stddevSamp, Arg: num},
	}
	a := NewAggregation(NewKeyTable(), []*plan.Expr{key}, aggs)
	rows := func(vals ...[3]string) *Batch {
		b := &Batch{N: len(vals)}
		for c, ty := range []plan.Type{plan.Text, plan.Number, plan.Text} {
			bl := newBuilder(ty, len(vals))
			for _, v := range vals {
				st := ColumnStats{}
				bl.read([]byte(v[c]), false, &st)
			}
			b.Cols = append(b.Cols, bl.v)
		}
		return b
	}
	in := rows(
		[3]string{"a", "1", "x"}, [3]string{"b", "9223372036854775807", "y"}, [3]string{"c", "", ""},
		[3]string{"a", "2.50", "w"}, [3]string{"b", "9223372036854775807", "z"}, [3]string{"d", "-3", "v"},
	)
	if err := a.Add(in); err != nil {
		t.Fatal(err)
	}
	for _, ids := range [][]int32{{}, {0}, {3, 1}, {1, 0}, {2, 2, 0, 3}} {
		got, want := a.ResultRows(ids).String(), a.Result().Rows(ids).String()
		if got != want {
			t.Errorf("ResultRows(%v):\n%s\nwant\n%s", ids, got, want)
		}
	}
	more := rows([3]string{"b", "1", ""}, [3]string{"e", "2", ""}, [3]string{"a", "3", ""})
	sl, err := a.Slots(more)
	if err != nil {
		t.Fatal(err)
	}
	ids := a.GroupsOf(sl)
	if want := []int32{1, -1, 0}; len(ids) != 3 || ids[0] != want[0] || ids[1] != want[1] || ids[2] != want[2] {
		t.Errorf("GroupsOf %v, want %v", ids, want)
	}
	if a.Groups() != 4 {
		t.Errorf("Slots added a group: %d groups", a.Groups())
	}
	if err := a.AddSlots(more, sl); err != nil {
		t.Fatal(err)
	}
	got := a.ResultRows([]int32{4, 1})
	keysAndCounts := (&Batch{N: got.N, Cols: got.Cols[:2]}).String()
	if a.Groups() != 5 || keysAndCounts != "e,1,\nb,3,\n" {
		t.Errorf("after AddSlots: %d groups, %q", a.Groups(), keysAndCounts)
	}
}
