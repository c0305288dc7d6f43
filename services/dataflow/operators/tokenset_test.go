package operators

import (
	"fmt"
	"testing"
)

// TestTokenSetAgreesWithAMap: through the filter's growth, every token
// added is found and no other is, and misses mostly stop at the filter.
func TestTokenSetAgreesWithAMap(t *testing.T) {
	s := newTokenSet(0)
	model := map[string]bool{}
	for i := 0; i < 20000; i++ {
		tok := fmt.Sprintf("tok%07d", i*7)
		s.add([]byte(tok))
		s.add([]byte(tok)) // twice: still one
		model[tok] = true
		if i%997 == 0 {
			for j := 0; j <= i*7+7; j += 331 {
				probe := fmt.Sprintf("tok%07d", j)
				if got := s.has([]byte(probe)); got != model[probe] {
					t.Fatalf("after %d adds: has(%s) = %v, want %v", i+1, probe, got, model[probe])
				}
			}
		}
	}
	if s.len() != len(model) {
		t.Fatalf("len %d, want %d", s.len(), len(model))
	}
	passed := 0
	for i := 0; i < 100000; i++ {
		if w, m := s.bit([]byte(fmt.Sprintf("miss%d", i))); s.bits[w]&m != 0 {
			passed++
		}
	}
	if passed > 10000 {
		t.Errorf("%d of 100000 misses passed the filter; want about 3%%", passed)
	}
	n := 0
	s.each(func(tok []byte) {
		if !model[string(tok)] {
			t.Fatalf("each gave %q, never added", tok)
		}
		n++
	})
	if n != len(model) {
		t.Fatalf("each gave %d tokens, want %d", n, len(model))
	}
}
