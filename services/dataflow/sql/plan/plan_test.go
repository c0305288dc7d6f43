package plan

import (
	"slices"
	"strings"
	"testing"
)

// chain is ((((x + 1) + 1) ...) > 1, d additions deep, with a CASE, a
// call and an IN list at the bottom.
func chain(d int) *Expr {
	col := &Expr{Kind: ColRef, Col: 3, Name: "rating", Type: Number}
	one := &Expr{Kind: Const, Value: []byte("1"), Type: Number}
	e := &Expr{Kind: Call, Fn: FnPercent, Args: []*Expr{col, &Expr{Kind: Case, Args: []*Expr{
		{Kind: In, Args: []*Expr{col, one, one}}, one, {Kind: Neg, Args: []*Expr{col}}}}}}
	for range d {
		e = &Expr{Kind: Arith, Fn: "+", Args: []*Expr{e, one}}
	}
	return &Expr{Kind: Cmp, Fn: ">", Args: []*Expr{e, one}}
}

func TestExprString(t *testing.T) {
	text := &Expr{Kind: Const, Type: Text, Value: []byte("it's")}
	null := &Expr{Kind: Const, Null: true}
	e := &Expr{Kind: And, Args: []*Expr{
		{Kind: Not, Args: []*Expr{{Kind: IsNull, Fn: "not", Args: []*Expr{text}}}},
		{Kind: Or, Args: []*Expr{{Kind: IsNull, Args: []*Expr{null}}, chain(2)}},
	}}
	want := "(NOT 'it''s' IS NOT NULL AND (NULL IS NULL OR (((PERCENT(rating#3, CASE WHEN rating#3 IN (1, 1) THEN 1 ELSE -rating#3 END) + 1) + 1) > 1)))"
	if got := e.String(); got != want {
		t.Errorf("String:\n got %s\nwant %s", got, want)
	}
	if got := (*Expr)(nil).String(); got != "<nil>" {
		t.Errorf("nil: %s", got)
	}
	agg := &Agg{Func: Sum, Arg: chain(0)}
	if got := agg.String(); got != "sum((PERCENT(rating#3, CASE WHEN rating#3 IN (1, 1) THEN 1 ELSE -rating#3 END) > 1))" {
		t.Errorf("Agg.String: %s", got)
	}
}

// TestStringIsLinear: String writes the whole tree into one growing
// buffer, so it allocates about log(length) times whatever the depth; a
// rendering that concatenates its children's strings allocates at every
// level (and copies the text below each level again: quadratic bytes).
func TestStringIsLinear(t *testing.T) {
	for _, d := range []int{1000, 2000} {
		e := chain(d)
		n := &Node{Op: Filter, Cond: e, Input: []*Node{{Op: Scan, Table: "t"}}}
		if a := testing.AllocsPerRun(5, func() { _ = e.String() }); a > 40 {
			t.Errorf("Expr.String %d deep: %.0f allocations", d, a)
		}
		if a := testing.AllocsPerRun(5, func() { _ = n.String() }); a > 80 {
			t.Errorf("Node.String of a filter %d deep: %.0f allocations", d, a)
		}
		if !strings.HasSuffix(n.String(), "scan t -> ()\n") {
			t.Errorf("Node.String:\n%s", n)
		}
	}
}

// BenchmarkStringDeep renders an expression 2000 deep.
func BenchmarkStringDeep(b *testing.B) {
	e := chain(2000)
	for b.Loop() {
		_ = e.String()
	}
}

// TestDurationColumnOfAnOlderPlan: a plan of an older version typed a
// duration column "duration"; it decodes as a number read by the
// duration rule, and encodes again in the form of this one.
func TestDurationColumnOfAnOlderPlan(t *testing.T) {
	old := []byte(`{"op":"scan","table":"matches","output":[{"name":"duration","type":"duration"},{"name":"token","type":"text"}]}`)
	n, err := Decode(old)
	if err != nil {
		t.Fatal(err)
	}
	want := []Column{{Name: "duration", Type: Number, Read: ReadDuration}, {Name: "token", Type: Text}}
	if !slices.Equal(n.Output, want) {
		t.Fatalf("decoded %+v, want %+v", n.Output, want)
	}
	b, err := Encode(n)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); !strings.Contains(got, `{"name":"duration","type":"number","read":"duration"}`) {
		t.Errorf("encoded %s", got)
	}
	if got := n.String(); got != "scan matches -> (duration duration, token text)\n" {
		t.Errorf("String() = %q", got)
	}
}
