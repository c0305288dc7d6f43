package exec

import (
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
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
