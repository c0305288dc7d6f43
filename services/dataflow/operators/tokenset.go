package operators

import "math/rand/v2"

// tokenSet is a set of match tokens for lookups that mostly miss: a joiner
// keeps the few matches that qualify (a few percent of them) and looks up
// every player row. Before the table is probed, a filter of one bit per
// hash, about 32 bits per token and so small enough to stay in the CPU's
// cache, answers most misses without touching the table's memory.
type tokenSet struct {
	table *flatTable[struct{}]
	bits  []uint64 // the filter; len is a power of two
	seed  uint64   // the filter's hash seed (the table has its own)
}

const (
	// filterMinWords is the smallest filter (4096 bits).
	filterMinWords = 64
	// filterBitsPerToken is how many filter bits each token gets before
	// the filter doubles: a miss then passes it about 3% of the time.
	filterBitsPerToken = 32
)

func newTokenSet(hint int) *tokenSet {
	s := &tokenSet{table: newFlatTable[struct{}](hint), seed: rand.Uint64()}
	words := filterMinWords
	for words*64 < hint*filterBitsPerToken {
		words *= 2
	}
	s.bits = make([]uint64, words)
	return s
}

func (s *tokenSet) bit(token []byte) (word int, mask uint64) {
	h := hashToken(s.seed, token)
	i := h & uint64(len(s.bits)*64-1)
	return int(i >> 6), 1 << (i & 63)
}

// add puts a token in the set.
func (s *tokenSet) add(token []byte) {
	if _, existed := s.table.slot(token); existed {
		return
	}
	if s.table.len()*filterBitsPerToken > len(s.bits)*64 {
		s.grow()
		return
	}
	w, m := s.bit(token)
	s.bits[w] |= m
}

// grow doubles the filter and sets the bit of every token again.
func (s *tokenSet) grow() {
	s.bits = make([]uint64, 2*len(s.bits))
	s.table.each(func(token []byte, _ *struct{}) {
		w, m := s.bit(token)
		s.bits[w] |= m
	})
}

// has reports whether a token is in the set.
func (s *tokenSet) has(token []byte) bool {
	if w, m := s.bit(token); s.bits[w]&m == 0 {
		return false
	}
	_, ok := s.table.find(token)
	return ok
}

func (s *tokenSet) len() int { return s.table.len() }

func (s *tokenSet) each(fn func(token []byte)) {
	s.table.each(func(token []byte, _ *struct{}) { fn(token) })
}
