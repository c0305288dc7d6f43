package exec_test

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// TestAggregationSplits: an aggregation's groups split in two (Keep of
// some, AppendStateOf the others, restored elsewhere), each part given
// the rest of the input of its own groups, make between them the groups
// and values of the aggregation given it all; the kept part stays in its
// (shared) table, its other keys there too; a second split of the kept
// part splits again. The same with the kept part's table compacted after
// each split (CompactTable: an aggregation alone in its table), which
// then holds the kept groups' keys alone.
func TestAggregationSplits(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(map[bool]string{false: "shared table", true: "compacted table"}[compact], func(t *testing.T) { testAggregationSplits(t, compact) })
	}
}

func testAggregationSplits(t *testing.T, compact bool) {
	in := batchOf(t,
		column{plan.Text, []string{"a", "b", "a", "", "c", "b", "c", "d", "e", "d"}},
		column{plan.Number, []string{"1523.0", "-0.50", "123456789012345678901234.5", "7", "", "2.000", "-98765432109876543210.25", "3", "4", "5"}},
		column{plan.Text, []string{"x", "y", "", "z", "w", "v", "u", "t", "s", "r"}},
	)
	aggs := []*plan.Agg{
		{Func: plan.CountStar},
		{Func: plan.Sum, Arg: ref(1, plan.Number)},
		{Func: plan.Avg, Arg: ref(1, plan.Number)},
		{Func: plan.Max, Arg: ref(1, plan.Number)},
		{Func: plan.Min, Arg: ref(2, plan.Text)},
		{Func: plan.Max, Arg: ref(2, plan.Text)},
	}
	keys := []*plan.Expr{ref(0, plan.Text)}
	whole := exec.NewAggregation(exec.NewKeyTable(), keys, aggs)
	if err := whole.Add(in); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, line := range strings.Split(whole.Result().String(), "\n") {
		want[line] = line != ""
	}
	// Rows 0..5 first; then the groups of keys a, c and "" (groups 0, 2,
	// 3) go; then the kept part splits again (d goes); then rows 6.. .
	first := in.Rows([]int32{0, 1, 2, 3, 4, 5})
	table := exec.NewKeyTable()
	a := exec.NewAggregation(table, keys, aggs)
	if err := a.Add(first); err != nil {
		t.Fatal(err)
	}
	out := a.AppendStateOf(nil, []int32{0, 2, 3})
	a = a.Keep([]int32{1})
	compacted(t, compact, table, a)
	if err := a.Add(in.Rows([]int32{7})); err != nil { // d: a new group, 1
		t.Fatal(err)
	}
	out2 := a.AppendStateOf(nil, []int32{1})
	a = a.Keep([]int32{0})
	compacted(t, compact, table, a)
	if err := a.Add(in.Rows([]int32{8})); err != nil { // e
		t.Fatal(err)
	}
	gone := exec.NewAggregation(exec.NewKeyTable(), keys, aggs)
	if err := gone.RestoreState(out); err != nil {
		t.Fatal(err)
	}
	if err := gone.Add(in.Rows([]int32{6})); err != nil { // c
		t.Fatal(err)
	}
	gone2 := exec.NewAggregation(exec.NewKeyTable(), keys, aggs)
	if err := gone2.RestoreState(out2); err != nil {
		t.Fatal(err)
	}
	if err := gone2.Add(in.Rows([]int32{9})); err != nil { // d
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, part := range []*exec.Aggregation{a, gone, gone2} {
		for _, line := range strings.Split(part.Result().String(), "\n") {
			if line == "" {
				continue
			}
			if got[line] {
				t.Errorf("%q twice", line)
			}
			got[line] = true
		}
	}
	if len(got) != len(want)-1 {
		t.Errorf("%d groups, want %d", len(got), len(want))
	}
	for line, ok := range want {
		if ok && !got[line] {
			t.Errorf("missing %q; got %v", line, got)
		}
	}
	if a.Groups() != 2 {
		t.Errorf("kept %d groups, want 2 (b, e)", a.Groups())
	}
}

// compacted compacts a's table when compact says to, and checks that it
// then holds a's groups' keys alone.
func compacted(t *testing.T, compact bool, table *exec.KeyTable, a *exec.Aggregation) {
	t.Helper()
	if !compact {
		return
	}
	before := a.Result().String()
	a.CompactTable()
	if table.Len() != a.Groups() {
		t.Errorf("the compacted table holds %d keys, want the %d groups'", table.Len(), a.Groups())
	}
	if after := a.Result().String(); after != before {
		t.Errorf("compacting the table changed the groups: %q, was %q", after, before)
	}
}
