package plan_test

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// TestJoinTypeJSON: a plan of an older version, whose join has no type,
// decodes as an inner join and renders as it did; an outer join's type
// and a key of several columns round-trip, and show in String.
func TestJoinTypeJSON(t *testing.T) {
	old := `{"op":"join","input":[{"op":"scan","output":[{"name":"x","type":"text"}],"table":"a"},{"op":"scan","output":[{"name":"y","type":"text"}],"table":"b"}],"output":[{"name":"x","type":"text"},{"name":"y","type":"text"}],"left_key":{"kind":"col","type":"text","name":"x"},"right_key":{"kind":"col","type":"text","name":"y"}}`
	n, err := plan.Decode([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if n.JoinType != "" || n.JoinType.Outer() || !strings.HasPrefix(n.String(), "join on x#0 = y#0 ->") {
		t.Errorf("old plan: type %q, %s", n.JoinType, n)
	}
	if b, err := plan.Encode(n); err != nil || string(b) != old {
		t.Errorf("old plan re-encoded: %s, %v", b, err)
	}
	key := func(names ...string) *plan.Expr {
		k := &plan.Expr{Kind: plan.Call, Fn: plan.FnKey, Type: plan.Text}
		for i, name := range names {
			k.Args = append(k.Args, &plan.Expr{Kind: plan.ColRef, Type: plan.Text, Col: i, Name: name})
		}
		return k
	}
	for _, jt := range []plan.JoinType{plan.JoinLeft, plan.JoinRight, plan.JoinFull} {
		n.JoinType, n.LeftKey, n.RightKey = jt, key("x", "x"), key("y", "y")
		b, err := plan.Encode(n)
		if err != nil {
			t.Fatal(err)
		}
		back, err := plan.Decode(b)
		if err != nil || back.JoinType != jt || back.String() != n.String() {
			t.Fatalf("%s: %s read back as %v, %v", jt, b, back, err)
		}
		if want := "join " + string(jt) + " on KEY(x#0, x#1) = KEY(y#0, y#1) ->"; !strings.HasPrefix(n.String(), want) {
			t.Errorf("%s", n)
		}
	}
	if !plan.JoinLeft.KeepsLeft() || plan.JoinLeft.KeepsRight() || !plan.JoinRight.KeepsRight() || plan.JoinRight.KeepsLeft() ||
		!plan.JoinFull.KeepsLeft() || !plan.JoinFull.KeepsRight() || plan.JoinInner.Outer() {
		t.Error("the join types keep the wrong unmatched rows")
	}
}

// TestJoinTypeMirrored: swapping a join's inputs swaps which unmatched
// rows it keeps.
func TestJoinTypeMirrored(t *testing.T) {
	for t0, want := range map[plan.JoinType]plan.JoinType{plan.JoinInner: plan.JoinInner, "": plan.JoinInner, plan.JoinLeft: plan.JoinRight, plan.JoinRight: plan.JoinLeft, plan.JoinFull: plan.JoinFull} {
		if got := t0.Mirrored(); got != want {
			t.Errorf("%q.Mirrored() = %q, want %q", t0, got, want)
		}
	}
}
