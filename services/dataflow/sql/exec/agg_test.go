package exec

import (
	"math"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// TestConditionalAggregatesShareTheirCondition: an aggregate of CASE WHEN
// c THEN x [ELSE k] END reads x under the condition c, and aggregates of
// one condition share it; any other argument is read as it is.
func TestConditionalAggregatesShareTheirCondition(t *testing.T) {
	col := func(i int, ty plan.Type) *plan.Expr { return &plan.Expr{Kind: plan.ColRef, Col: i, Type: ty} }
	num := func(v string) *plan.Expr { return &plan.Expr{Kind: plan.Const, Type: plan.Number, Value: []byte(v)} }
	when := func(c, x *plan.Expr, els ...*plan.Expr) *plan.Expr {
		return &plan.Expr{Kind: plan.Case, Type: x.Type, Args: append([]*plan.Expr{c, x}, els...)}
	}
	winner, rating := col(0, plan.Bool), col(1, plan.Number)
	loser := &plan.Expr{Kind: plan.Not, Type: plan.Bool, Args: []*plan.Expr{col(0, plan.Bool)}}
	aggs := []*plan.Agg{
		{Func: plan.CountStar},
		{Func: plan.Count, Arg: when(winner, num("1"))},
		{Func: plan.Max, Arg: when(col(0, plan.Bool), rating)}, // the same condition, another Expr
		{Func: plan.Max, Arg: when(loser, rating)},
		{Func: plan.Sum, Arg: when(winner, num("1"), num("0"))},
		{Func: plan.Sum, Arg: when(winner, num("1"), rating)}, // ELSE not a constant
		{Func: plan.Count, Arg: rating},
	}
	a := NewAggregation(NewKeyTable(), nil, aggs)
	if len(a.conds) != 2 {
		t.Fatalf("conditions %v, want winner and NOT winner", a.conds)
	}
	wantCond := []int{-1, 0, 0, 1, 0, -1, -1}
	for i, ac := range a.accs {
		if ac.in.cond != wantCond[i] {
			t.Errorf("%s: condition #%d, want #%d", aggs[i], ac.in.cond, wantCond[i])
		}
	}
	if els := a.accs[4].in.els; els == nil || els.Nums[0].String() != "0" {
		t.Errorf("%s: ELSE %v, want 0", aggs[4], els)
	}
	if a.accs[1].in.els != nil || a.accs[5].in.arg != aggs[5].Arg {
		t.Errorf("count without ELSE or a sum of a non-constant ELSE read otherwise: %+v %+v", a.accs[1].in, a.accs[5].in)
	}
}

// TestExtendDoubles: extend keeps the values, zeroes the new ones, and
// at least doubles the capacity when it reallocates, so that n groups
// added one batch at a time reallocate O(log n) times.
func TestExtendDoubles(t *testing.T) {
	var s []int64
	reallocs := 0
	for n := 1; n <= 1<<20; n += 4096 {
		old := cap(s)
		s = extend(s, n)
		if cap(s) != old {
			reallocs++
			if old > 0 && cap(s) < 2*old {
				t.Fatalf("capacity %d -> %d", old, cap(s))
			}
		}
		if len(s) != n || s[n-1] != 0 {
			t.Fatalf("len %d (want %d), last %d", len(s), n, s[n-1])
		}
		s[n-1] = int64(n)
	}
	if s[1] != 0 || s[4096] != 4097 || reallocs > 16 {
		t.Errorf("s[1] %d s[4096] %d, %d reallocations", s[1], s[4096], reallocs)
	}
	if got := extend(s, 5); len(got) != len(s) {
		t.Errorf("extend to a shorter length: %d, want %d", len(got), len(s))
	}
}

// TestMinMaxOfLongNumbers: a minimum or maximum whose unscaled value is
// not an int64 is kept exactly, and replaced by a short one, in a
// snapshot too; equal values of two scales keep the larger scale.
func TestMinMaxOfLongNumbers(t *testing.T) {
	arg := &plan.Expr{Kind: plan.ColRef, Col: 0, Type: plan.Number}
	a := NewAggregation(NewKeyTable(), nil, []*plan.Agg{{Func: plan.Min, Arg: arg}, {Func: plan.Max, Arg: arg}})
	in := NewVecBuilder(plan.Number, 0)
	for _, v := range []string{"99999999999999999999999.5", "-99999999999999999999999", "7", "-99999999999999999999999.0", "99999999999999999999999.50"} {
		if err := in.Text([]byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	for _, rows := range [][]int32{{0}, {1, 2}, {3, 4}} {
		if err := a.Add((&Batch{N: 5, Cols: []*Vec{in.Vec()}}).Rows(rows)); err != nil {
			t.Fatal(err)
		}
	}
	check := func(a *Aggregation) {
		t.Helper()
		res := a.Result()
		if got := res.Cols[0].Nums[0].String() + " " + res.Cols[1].Nums[0].String(); got != "-99999999999999999999999.0 99999999999999999999999.50" {
			t.Errorf("min, max = %s", got)
		}
	}
	check(a)
	b := NewAggregation(NewKeyTable(), nil, []*plan.Agg{{Func: plan.Min, Arg: arg}, {Func: plan.Max, Arg: arg}})
	if err := b.RestoreState(a.AppendState(nil)); err != nil {
		t.Fatal(err)
	}
	check(b)
	// A minimum that was long and becomes short drops the long one.
	c := NewAggregation(NewKeyTable(), nil, []*plan.Agg{{Func: plan.Min, Arg: arg}})
	for _, rows := range [][]int32{{0}, {2}} {
		if err := c.Add((&Batch{N: 5, Cols: []*Vec{in.Vec()}}).Rows(rows)); err != nil {
			t.Fatal(err)
		}
		if got, want := len(c.accs[0].nums.big), 1-int(rows[0])/2; got != want {
			t.Errorf("%d long values kept, want %d", got, want)
		}
	}
	if got := c.Result().Cols[0].Nums[0].String(); got != "7" {
		t.Errorf("min = %s, want 7", got)
	}
}

// TestCountsPast32Bits: a count is exact past its low byte and past
// 2^32-1, counted up one by one, in a result made a few groups at a time
// and in a snapshot; counts set to any int64 read back as set.
func TestCountsPast32Bits(t *testing.T) {
	var c counts
	c.lo = extend(c.lo, 3)
	for i := range 70_000 {
		if got := c.get(1); got != int64(i) {
			t.Fatalf("after %d incs: %d", i, got)
		}
		c.inc(1)
	}
	if len(c.hi) != 1 || c.get(0) != 0 || c.get(2) != 0 {
		t.Errorf("70000 counted: hi %v, beside it %d, %d", c.hi, c.get(0), c.get(2))
	}
	for _, n := range []int64{0, 1, 255, 256, 257, 1<<32 - 1, 1 << 32, 5<<32 + 7, -1, -256, -1 << 40, math.MaxInt64, math.MinInt64} {
		c.set(1, n)
		if got := c.get(1); got != n || c.get(0) != 0 || c.get(2) != 0 {
			t.Errorf("set %d: get %d (beside it %d, %d)", n, got, c.get(0), c.get(2))
		}
	}
	keys := []*plan.Expr{{Kind: plan.ColRef, Col: 0, Type: plan.Text}}
	aggs := []*plan.Agg{{Func: plan.CountStar}}
	in := NewVecBuilder(plan.Text, 0)
	for _, k := range []string{"a", "b", "c", "b"} {
		if err := in.Text([]byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	a := NewAggregation(NewKeyTable(), keys, aggs)
	if err := a.Add((&Batch{N: 4, Cols: []*Vec{in.Vec()}}).Rows([]int32{0, 1, 2})); err != nil {
		t.Fatal(err)
	}
	a.accs[0].count.set(1, 1<<32-1)
	if err := a.Add((&Batch{N: 4, Cols: []*Vec{in.Vec()}}).Rows([]int32{3})); err != nil {
		t.Fatal(err)
	}
	check := func(a *Aggregation) {
		t.Helper()
		var got []string
		for g := range a.Groups() {
			got = append(got, a.ResultRange(g, g+1).Cols[1].Nums[0].String())
		}
		if s := strings.Join(got, " "); s != "1 4294967296 1" {
			t.Errorf("counts %s", s)
		}
	}
	check(a)
	b := NewAggregation(NewKeyTable(), keys, aggs)
	if err := b.RestoreState(a.AppendState(nil)); err != nil {
		t.Fatal(err)
	}
	check(b)
}

// TestDecsAddIsDecAdd: a group's sum kept in place (decs.add) is what
// Dec.Add makes of the same numbers, through int64 overflow both ways,
// scales that differ and numbers wider than an int64, and the group is
// back in place once its sum fits again.
func TestDecsAddIsDecAdd(t *testing.T) {
	num := func(s string) value.Dec {
		d, ok := value.ReadNumber([]byte(s))
		if !ok {
			t.Fatalf("not a number: %q", s)
		}
		return d
	}
	for _, seq := range [][]string{
		{"1", "2", "-3", "40"},
		{"9223372036854775807", "1", "-1", "-9223372036854775807"},
		{"-9223372036854775808", "-1", "1"},
		{"1.5", "2", "0.25", "-3.75"},
		{"123456789012345678901234567890", "-123456789012345678901234567890", "7"},
		{"0.1", "0.20", "9223372036854775.807", "1"},
	} {
		var d decs
		d.grow(3)
		want := value.Dec{}
		for _, s := range seq {
			d.add(1, num(s))
			want = want.Add(num(s))
			if got := d.get(1); got.Cmp(want) != 0 || got.Scale() != want.Scale() {
				t.Fatalf("%q: after %s, %s (scale %d), want %s (scale %d)", seq, s, got, got.Scale(), want, want.Scale())
			}
		}
		if d.get(0).Cmp(value.Dec{}) != 0 || d.get(2).Cmp(value.Dec{}) != 0 {
			t.Errorf("%q: the other groups moved: %s, %s", seq, d.get(0), d.get(2))
		}
		if _, scale, fits := want.Unscaled(); fits && scale <= math.MaxInt8 && (d.s[1] < 0 || len(d.big) != 0) {
			t.Errorf("%q: a sum that fits is kept apart (scale %d, %d apart)", seq, d.s[1], len(d.big))
		}
	}
}

// TestDecsKeepAScalePastAByteApart: a number whose scale does not fit
// decs' byte (a product's scale adds its factors') is kept apart, as a
// wide one, and read back as set; sums onto it are Dec.Add's.
func TestDecsKeepAScalePastAByteApart(t *testing.T) {
	var d decs
	d.grow(2)
	tiny := value.FromUnscaled(7, 200)
	d.set(1, tiny)
	if got := d.get(1); got.Cmp(tiny) != 0 || got.Scale() != 200 || d.s[1] != -1 || len(d.big) != 1 {
		t.Fatalf("set scale 200: %s (scale %d), s %d, %d apart", got, got.Scale(), d.s[1], len(d.big))
	}
	one := value.FromUnscaled(1, 0)
	d.add(1, one)
	if want := tiny.Add(one); d.get(1).Cmp(want) != 0 || d.get(1).Scale() != want.Scale() {
		t.Errorf("added 1: %s, want %s", d.get(1), want)
	}
	d.set(1, one)
	if d.s[1] != 0 || len(d.big) != 0 || d.get(0).Cmp(value.Dec{}) != 0 {
		t.Errorf("set back to 1: s %d, %d apart, group 0 %s", d.s[1], len(d.big), d.get(0))
	}
}
