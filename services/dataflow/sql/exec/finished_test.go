package exec

import (
	"bytes"
	"fmt"
	"testing"
)

// TestDoneKeysRestoreByKey: done keys are a bit per slot, and their
// state names the keys: restored into a table that holds other keys
// first (a task's shared table, its operators' keys put back in another
// order), the same keys are done, at their new slots, and the state
// written again is the same bytes; a slot of no key (-1) is never done.
func TestDoneKeysRestoreByKey(t *testing.T) {
	table := NewKeyTable()
	var slots []int32
	for i := range 1000 {
		slots = append(slots, table.slot(fmt.Appendf(nil, "match-%d", i)))
	}
	d := NewDoneKeys(table)
	for i, s := range slots {
		if i%3 == 0 {
			d.Add(s)
			d.Add(s) // twice: once
		}
	}
	if d.Len() != 334 || d.Has(-1) || !d.Has(slots[999]) || d.Has(slots[998]) {
		t.Fatalf("%d done, -1 done %v, 999 done %v, 998 done %v", d.Len(), d.Has(-1), d.Has(slots[999]), d.Has(slots[998]))
	}
	state := d.AppendState(nil)
	other := NewKeyTable()
	for i := range 500 {
		other.slot(fmt.Appendf(nil, "another-%d", i))
	}
	for i := 999; i >= 0; i -= 7 {
		other.slot(fmt.Appendf(nil, "match-%d", i))
	}
	back := NewDoneKeys(other)
	if err := back.RestoreState(state); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		s, ok := other.lookup(fmt.Appendf(nil, "match-%d", i))
		if want := i%3 == 0; !ok && want || ok && back.Has(s) != want {
			t.Fatalf("match-%d: in the table %v, done %v, want done %v", i, ok, ok && back.Has(s), want)
		}
	}
	same := NewDoneKeys(table)
	if err := same.RestoreState(state); err != nil {
		t.Fatal(err)
	}
	if again := same.AppendState(nil); !bytes.Equal(again, state) {
		t.Fatal("restored into its own table, it writes another state")
	}
	if err := NewDoneKeys(NewKeyTable()).RestoreState(append(d.AppendState(nil)[:0:0], 2, 1, 'a', 1, 'a')); err == nil {
		t.Fatal("a key done twice restored")
	}
}
