package exec

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// restoreRows is a batch of n rows of a text, a number and a boolean
// column, every value distinct but the boolean's, some NULL, over n
// groups of each column.
func restoreRows(n int) *Batch {
	s, d, f := newBuilder(plan.Text, n), newBuilder(plan.Number, n), newBuilder(plan.Bool, n)
	for i := range n {
		if i%97 == 5 {
			s.null()
			d.null()
		} else {
			s.text(fmt.Appendf(nil, "key-%d", i))
			d.num(value.FromUnscaled(int64(i), 1))
		}
		f.boolean(i%3 == 0)
	}
	return &Batch{N: n, Cols: []*Vec{s.v, d.v, f.v}}
}

// TestRestoreMakesItsSlicesAtOnce: an aggregation and a key set restored
// from their state hold what was written, and every slice of one value a
// group (a key column's values, or a text key's slots, a minimum's or
// maximum's text, the groups' view of their table) was made at its size at once from the
// count the state starts with, not grown by doubling: its capacity is
// that of a slice made for as many values (make's, or slices.Grow's at
// the allocator's size class), where doubling would leave up to twice
// that.
func TestRestoreMakesItsSlicesAtOnce(t *testing.T) {
	col := func(i int, ty plan.Type) *plan.Expr { return &plan.Expr{Kind: plan.ColRef, Col: i, Type: ty} }
	cases := []struct {
		name string
		keys []*plan.Expr
		aggs []*plan.Agg
	}{
		{"a text key, its minimum text", []*plan.Expr{col(0, plan.Text)}, []*plan.Agg{{Func: plan.CountStar}, {Func: plan.Min, Arg: col(0, plan.Text)}}},
		{"a number key, its maximum and sum", []*plan.Expr{col(1, plan.Number)}, []*plan.Agg{{Func: plan.Max, Arg: col(1, plan.Number)}, {Func: plan.Sum, Arg: col(1, plan.Number)}}},
		{"text, number and boolean keys", []*plan.Expr{col(0, plan.Text), col(1, plan.Number), col(2, plan.Bool)}, []*plan.Agg{{Func: plan.Count, Arg: col(1, plan.Number)}}},
	}
	for _, n := range []int{1, 1000, 70_001} {
		in := restoreRows(n)
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s, %d rows", c.name, n), func(t *testing.T) {
				a := NewAggregation(NewKeyTable(), c.keys, c.aggs)
				if err := a.Add(in); err != nil {
					t.Fatal(err)
				}
				state := a.AppendState(nil)
				back := NewAggregation(NewKeyTable(), c.keys, c.aggs)
				if err := back.RestoreState(state); err != nil {
					t.Fatal(err)
				}
				if got, want := back.Result().String(), a.Result().String(); got != want {
					t.Fatalf("restored %d groups differ", back.Groups())
				}
				groups := back.Groups()
				if back.g.inTable { // a text key's values are the table's
					if got, want := cap(back.g.keySlots), made[int32](groups); got != want || back.g.keys[0].v.N != 0 {
						t.Errorf("the key's slots: room for %d, for %d groups (%d made at once); %d values held besides", got, groups, want, back.g.keys[0].v.N)
					}
				}
				for i, k := range back.g.keys {
					if back.g.inTable {
						break
					}
					if got, want := valuesCap(k.v), atOnce(k.v.Type, groups); got != want {
						t.Errorf("key %d: room for %d values, for %d groups (%d made at once)", i, got, groups, want)
					}
				}
				for i, ac := range back.accs {
					if ac.best == nil {
						continue
					}
					if got, want := valuesCap(ac.best), atOnce(ac.best.Type, groups); got != want && got != groups {
						t.Errorf("aggregate %d: room for %d best values, for %d groups (%d made at once)", i, got, groups, want)
					}
				}
				if l, keys := back.g.v.local, back.g.v.t.Len(); cap(l) != made[int32](keys) {
					t.Errorf("the groups' view: room for %d slots, of a table of %d (%d made at once)", cap(l), keys, made[int32](keys))
				}
			})
		}
		t.Run(fmt.Sprintf("a key set, %d rows", n), func(t *testing.T) {
			s := NewKeySet(NewKeyTable())
			s.Add(in)
			state := s.AppendState(nil)
			shared := NewKeyTable() // a table another operator holds keys in
			for i := range 300 {
				shared.slot(fmt.Appendf(nil, "other-%d", i))
			}
			back := NewKeySet(shared)
			if err := back.RestoreState(state); err != nil {
				t.Fatal(err)
			}
			if again := back.AppendState(nil); !bytes.Equal(again, state) {
				t.Fatal("the restored set writes another state")
			}
			if o := back.order; cap(o) != made[int32](len(o)) {
				t.Errorf("the set's order: room for %d slots, for %d keys (%d made at once)", cap(o), len(o), made[int32](len(o)))
			}
		})
	}
}

// made is the capacity of a slice of n values of T made at once.
func made[T any](n int) int { return cap(slices.Grow([]T(nil), n)) }

// atOnce is valuesCap of a Vec of type ty whose values' slice was made
// at once for n values.
func atOnce(ty plan.Type, n int) int {
	switch ty {
	case plan.Text:
		return made[uint32](n)
	case plan.Number:
		return made[value.Dec](n)
	default:
		return made[bool](n)
	}
}

// valuesCap is the room v has for values: of its ends, numbers or
// booleans, by its type.
func valuesCap(v *Vec) int {
	switch v.Type {
	case plan.Text:
		return cap(v.Ends)
	case plan.Number:
		return cap(v.Nums)
	default:
		return cap(v.Bools)
	}
}
