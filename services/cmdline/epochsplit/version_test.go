package epochsplit

import (
	"bytes"
	"testing"
	"time"
)

// TestLastCost reads back the cost of the last of CostLine's lines, among
// other lines.
func TestLastCost(t *testing.T) {
	var out bytes.Buffer
	out.WriteString("standing job: 2 appends, a version of each query after each\n")
	qs := []Query{{Name: "q1", Rows: 3, In: 3}, {Name: "q2", Rows: 1, In: 2, Out: 1}}
	CostLine(&out, 1, qs, 1500*time.Millisecond, 1200*time.Millisecond)
	CostLine(&out, 2, qs, 15*time.Millisecond+4*time.Nanosecond, 12*time.Millisecond)
	Line(&out, 3, qs) // no cost: not read
	out.WriteString("job demo: done\n")
	k, cpu, wall, ok := LastCost(out.Bytes())
	if !ok || k != 2 || cpu != 15*time.Millisecond || wall != 12*time.Millisecond {
		t.Fatalf("LastCost: version %d, cpu %v, wall %v, %v; want 2, 15ms, 12ms\n%s", k, cpu, wall, ok, out.String())
	}
	if _, _, _, ok := LastCost([]byte("version 1: q1 3 rows (+3 -0)\n")); ok {
		t.Fatal("LastCost found a cost in a line without one")
	}
}
