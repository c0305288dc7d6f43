package operators

// tokenMap is what the grouper and the joiners kept their state in before
// flatTable, kept here as BenchmarkTokenTable's baseline.

// shortKeyLen is the longest token kept in a pointer-free map key. Real
// match tokens have 16 characters.
const shortKeyLen = 23

// shortKey holds a token of up to shortKeyLen bytes and its length. Maps
// keyed by it hold no pointers, so the garbage collector never scans them:
// at full scale the grouper keeps millions of matches, and string keys made
// the collector the largest cost of the whole pipeline.
type shortKey [shortKeyLen + 1]byte

func makeShortKey(token []byte) (shortKey, bool) {
	var k shortKey
	if len(token) > shortKeyLen {
		return k, false
	}
	copy(k[:], token)
	k[shortKeyLen] = byte(len(token))
	return k, true
}

// tokenMap maps match tokens to values: short tokens in a pointer-free map,
// longer ones in an ordinary one.
type tokenMap[V any] struct {
	short map[shortKey]V
	long  map[string]V
}

func newTokenMap[V any]() *tokenMap[V] {
	return &tokenMap[V]{short: map[shortKey]V{}, long: map[string]V{}}
}

// get returns a pointer-free copy of the value, and whether it exists.
func (m *tokenMap[V]) get(token []byte) (V, bool) {
	if k, ok := makeShortKey(token); ok {
		v, found := m.short[k]
		return v, found
	}
	v, found := m.long[string(token)]
	return v, found
}

func (m *tokenMap[V]) put(token []byte, v V) {
	if k, ok := makeShortKey(token); ok {
		m.short[k] = v
		return
	}
	m.long[string(token)] = v
}
