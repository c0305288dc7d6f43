package exec_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// column is a test batch's column: its type and its values' text, "" for
// NULL.
type column struct {
	t      plan.Type
	values []string
}

// batchOf builds a batch of the columns through VecBuilder.Text.
func batchOf(t testing.TB, cols ...column) *exec.Batch {
	t.Helper()
	b := &exec.Batch{N: len(cols[0].values)}
	for _, c := range cols {
		vb := exec.NewVecBuilder(c.t, len(c.values))
		for _, s := range c.values {
			if s == "" {
				vb.Null()
			} else if err := vb.Text([]byte(s)); err != nil {
				t.Fatal(err)
			}
		}
		b.Cols = append(b.Cols, vb.Vec())
	}
	return b
}

// ref is column c of type t of the input.
func ref(c int, t plan.Type) *plan.Expr {
	return &plan.Expr{Kind: plan.ColRef, Type: t, Col: c, Name: fmt.Sprint("c", c)}
}

// TestAggregationStateRoundTrips: an aggregation's result made a few
// groups at a time is its result; restored from its state it has the
// same groups and values, scales and wide numbers included, and
// writes the same state again; a state cut short or with a byte more is
// refused.
func TestAggregationStateRoundTrips(t *testing.T) {
	in := batchOf(t,
		column{plan.Text, []string{"a", "b", "a", "", "c", "b", "c"}},
		column{plan.Bool, []string{"true", "false", "true", "", "false", "false", "false"}},
		column{plan.Number, []string{"1523.0", "-0.50", "123456789012345678901234.5", "7", "", "2.000", "-98765432109876543210.25"}},
		column{plan.Text, []string{"x", "y", "", "z", "w", "v", "u"}},
	)
	aggs := []*plan.Agg{
		{Func: plan.CountStar},
		{Func: plan.Count, Arg: ref(2, plan.Number)},
		{Func: plan.Sum, Arg: ref(2, plan.Number)},
		{Func: plan.Avg, Arg: ref(2, plan.Number)},
		{Func: plan.Max, Arg: ref(2, plan.Number)},
		{Func: plan.Min, Arg: ref(3, plan.Text)},
		{Func: plan.Max, Arg: ref(1, plan.Bool)},
		{Func: "stddev_samp", Arg: ref(2, plan.Number)}, // two running sums
	}
	keys := []*plan.Expr{ref(0, plan.Text), ref(1, plan.Bool)}
	a := exec.NewAggregation(exec.NewKeyTable(), keys, aggs)
	if err := a.Add(in); err != nil {
		t.Fatal(err)
	}
	for _, rows := range []int{1, 2, 4} {
		var got string
		for from := 0; from < a.Groups(); from += rows {
			got += a.ResultRange(from, min(from+rows, a.Groups())).String()
		}
		if want := a.Result().String(); got != want {
			t.Errorf("result %d groups at a time:\n%s\nwant:\n%s", rows, got, want)
		}
	}
	state := a.AppendState(nil)
	back := exec.NewAggregation(exec.NewKeyTable(), keys, aggs)
	if err := back.RestoreState(state); err != nil {
		t.Fatal(err)
	}
	if got, want := back.Result().String(), a.Result().String(); got != want {
		t.Errorf("restored:\n%s\nwant:\n%s", got, want)
	}
	if again := back.AppendState(nil); !bytes.Equal(again, state) {
		t.Errorf("restored state writes %q, was %q", again, state)
	}
	for i := range len(state) {
		if err := exec.NewAggregation(exec.NewKeyTable(), keys, aggs).RestoreState(state[:i]); err == nil {
			t.Errorf("restored %q, cut at %d", state[:i], i)
		}
	}
	if err := exec.NewAggregation(exec.NewKeyTable(), keys, aggs).RestoreState(append(state, 0)); err == nil {
		t.Error("restored a state with a byte after its end")
	}
}

// BenchmarkAggregationState writes and restores the state of q2's shape
// of aggregation: a text key (a match token), counts and maxima of
// ratings, 100k groups.
func BenchmarkAggregationState(b *testing.B) {
	const groups = 100_000
	tokens, winners, ratings := make([]string, 0, 2*groups), make([]string, 0, 2*groups), make([]string, 0, 2*groups)
	for i := range 2 * groups {
		tokens = append(tokens, fmt.Sprintf("%016x", (i%groups)*2654435761))
		winners = append(winners, fmt.Sprint(i%2 == 0))
		ratings = append(ratings, fmt.Sprintf("%d.0", 900+i%1500))
	}
	in := batchOf(b, column{plan.Text, tokens}, column{plan.Bool, winners}, column{plan.Number, ratings})
	aggs := []*plan.Agg{
		{Func: plan.CountStar},
		{Func: plan.Count, Arg: ref(2, plan.Number)},
		{Func: plan.Max, Arg: ref(2, plan.Number)},
		{Func: plan.Min, Arg: ref(2, plan.Number)},
	}
	keys := []*plan.Expr{ref(0, plan.Text)}
	a := exec.NewAggregation(exec.NewKeyTable(), keys, aggs)
	if err := a.Add(in); err != nil {
		b.Fatal(err)
	}
	var state []byte
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			state = a.AppendState(state[:0])
		}
		b.ReportMetric(float64(len(state))/groups, "bytes/group")
	})
	b.Run("restore", func(b *testing.B) {
		for b.Loop() {
			if err := exec.NewAggregation(exec.NewKeyTable(), keys, aggs).RestoreState(state); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestRowsAndKeysStateRoundTrip: rows written by AppendRowsState read
// back equal (NULLs, scales, wide numbers), a key table's keys come back
// in their slots, and every truncation of either is an error.
func TestRowsAndKeysStateRoundTrip(t *testing.T) {
	b := batchOf(t,
		column{plan.Text, []string{"a", "", "ccc", "a"}},
		column{plan.Number, []string{"1.50", "", "-3", "123456789012345678901234567890.5"}},
		column{plan.Bool, []string{"true", "false", "", "true"}},
	)
	cols := []plan.Column{{Name: "s", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}}
	state := exec.AppendRowsState(nil, b)
	got, err := exec.RestoreRowsState(state, cols)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != b.String() {
		t.Fatalf("rows read back %s, want %s", got, b)
	}
	for n := range len(state) {
		if _, err := exec.RestoreRowsState(state[:n], cols); err == nil {
			t.Fatalf("%d of %d bytes of rows read", n, len(state))
		}
	}
	kt := exec.NewKeyTable()
	want := kt.Slots(b.Cols[:1], b.N, nil, nil)
	keys := kt.AppendState(nil)
	again := exec.NewKeyTable()
	if err := again.RestoreState(keys); err != nil {
		t.Fatal(err)
	}
	if got := again.Slots(b.Cols[:1], b.N, nil, nil); fmt.Sprint(got) != fmt.Sprint(want) || again.Len() != kt.Len() {
		t.Fatalf("slots after restore %v, want %v", got, want)
	}
	if !bytes.Equal(again.AppendState(nil), keys) {
		t.Fatal("a restored table writes other bytes")
	}
	for n := range len(keys) {
		if err := exec.NewKeyTable().RestoreState(keys[:n]); err == nil {
			t.Fatalf("%d of %d bytes of keys read", n, len(keys))
		}
	}
}
