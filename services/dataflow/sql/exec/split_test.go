package exec_test

import (
	"fmt"
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

// TestKeepRenumbersItsGroupsInTheirTable: after Keep, the keys of the
// groups kept find their new numbers (their order in ids), the keys of
// the groups let go and another operator's keys in the shared table
// find none, a key let go comes back as a new group after the kept
// ones, and a new key after it: with one text key (whose groups keep
// their slots, keySlots) and with two keys (whose slots are read from the
// view), each after a Keep of a table holding keys of its own past the
// groups' last (the view is renumbered where it is, not cut at the last
// group kept).
func TestKeepRenumbersItsGroupsInTheirTable(t *testing.T) {
	for _, width := range []int{1, 2} {
		t.Run(fmt.Sprint(width, " keys"), func(t *testing.T) {
			in := batchOf(t,
				column{plan.Text, []string{"a", "b", "c", "d", "e", "f", "c", "g"}},
				column{plan.Number, []string{"1", "2", "3", "4", "5", "6", "3", "7"}},
			)
			keys := []*plan.Expr{ref(0, plan.Text), ref(1, plan.Number)}[:width]
			table := exec.NewKeyTable()
			a := exec.NewAggregation(table, keys, []*plan.Agg{{Func: plan.CountStar}})
			if err := a.Add(in.Rows([]int32{0, 1, 2, 3, 4, 5})); err != nil { // groups a..f: 0..5
				t.Fatal(err)
			}
			other := batchOf(t, column{plan.Text, []string{"x", "y"}}, column{plan.Number, []string{"8", "9"}})
			table.Slots(other.Cols[:width], other.N, nil, nil) // another operator's keys, after the groups'
			a = a.Keep([]int32{4, 1, 3})                       // e, b, d: 0, 1, 2
			slotsOf := func(b *exec.Batch) []int32 {
				modes := make([]exec.KeyMode, b.N)
				for i := range modes {
					modes[i] = exec.FindKey
				}
				return table.Slots(b.Cols[:width], b.N, modes, nil)
			}
			if got, want := fmt.Sprint(a.GroupsOf(slotsOf(in.Rows([]int32{0, 1, 2, 3, 4, 5})))), "[-1 1 -1 2 0 -1]"; got != want {
				t.Errorf("groups of a..f after Keep: %s, want %s", got, want)
			}
			if got := fmt.Sprint(a.GroupsOf(slotsOf(other))); got != "[-1 -1]" {
				t.Errorf("groups of the other keys: %s, want [-1 -1]", got)
			}
			if err := a.Add(in.Rows([]int32{6, 7})); err != nil { // c again, then g
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(a.GroupsOf(slotsOf(in.Rows([]int32{2, 7, 4})))), "[3 4 0]"; got != want {
				t.Errorf("groups of c, g and e: %s, want %s", got, want)
			}
			want := []string{"e,1,", "b,1,", "d,1,", "c,1,", "g,1,"}
			if width == 2 {
				want = []string{"e,5,1,", "b,2,1,", "d,4,1,", "c,3,1,", "g,7,1,"}
			}
			if got := a.Result().String(); got != strings.Join(want, "\n")+"\n" {
				t.Errorf("result:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
		})
	}
}

// TestResultRangeOfMakesTheColumnsRead: ResultRangeOf makes the columns
// read marks as ResultRange does, the others NULL of their types.
func TestResultRangeOfMakesTheColumnsRead(t *testing.T) {
	in := batchOf(t, column{plan.Text, []string{"a", "b", "a"}}, column{plan.Number, []string{"1", "2", "5"}})
	a := exec.NewAggregation(exec.NewKeyTable(), []*plan.Expr{ref(0, plan.Text)}, []*plan.Agg{{Func: plan.CountStar}, {Func: plan.Max, Arg: ref(1, plan.Number)}})
	if err := a.Add(in); err != nil {
		t.Fatal(err)
	}
	whole := a.ResultRange(0, 2)
	part := a.ResultRangeOf(0, 2, []bool{false, true, false}, []plan.Type{plan.Text, plan.Number, plan.Number})
	if got, want := part.String(), "NULL,2,NULL,\nNULL,1,NULL,\n"; got != want {
		t.Errorf("columns 1 of\n%s: \n%s, want\n%s", whole, got, want)
	}
	if part.Cols[0].Type != plan.Text || part.Cols[2].Type != plan.Number {
		t.Errorf("types %s %s, want text number", part.Cols[0].Type, part.Cols[2].Type)
	}
	if got, want := a.ResultRangeOf(0, 2, nil, nil).String(), whole.String(); got != want {
		t.Errorf("every column: %s, want %s", got, want)
	}
}
