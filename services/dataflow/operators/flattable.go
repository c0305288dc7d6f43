package operators

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
)

// flatTable maps tokens (byte strings of any length) to values of type V.
// It holds the per-match state of the grouper and the joiners, which at full
// scale is millions of entries, and is built for that:
//
//   - No pointers per entry. The entries are one flat slice of structs (a
//     32-bit hash, where the token lies in a shared append-only byte arena,
//     and the value), so with a pointer-free V the whole table is two
//     pointer-free allocations that the garbage collector never scans.
//   - One probe per row. slot returns a pointer to the value, inserting a
//     zero one if the token is new, so a read-modify-write of a match's
//     state costs one lookup where a Go map costs a get and a put.
//
// It is an open-addressing table with linear probing, doubled when three
// quarters full. Pointers returned by slot and find, and tokens passed by
// each, stay valid only until the next insertion.
type flatTable[V any] struct {
	entries []flatEntry[V]
	arena   []byte // every token inserted, back to back
	mask    uint32 // len(entries) - 1; len(entries) is a power of two
	count   int
	limit   int    // count at which the table doubles
	seed    uint64 // random per table: hashes differ between tables and runs
}

// flatEntry is one slot. hash 0 marks an empty slot (a token whose hash is
// 0 is stored as 1). A slot takes 16 bytes plus V; V comes first, since a
// zero-size field last would be padded.
type flatEntry[V any] struct {
	v    V
	hash uint32
	n    uint32 // the token's length
	off  uint64 // the token's offset in the arena
}

const (
	// flatMinSlots is the smallest table.
	flatMinSlots = 8
	// flatMaxSlots is the largest table: slots are indexed by the 32-bit
	// hash.
	flatMaxSlots = 1 << 32
	// flatTokenGuess is the token length a capacity hint reserves arena
	// for: real match tokens have 16 characters.
	flatTokenGuess = 16
)

// newFlatTable returns an empty table that holds hint entries before it
// first grows.
func newFlatTable[V any](hint int) *flatTable[V] {
	slots := flatMinSlots
	for flatLimit(slots) < hint && uint64(slots) < flatMaxSlots {
		slots *= 2
	}
	t := &flatTable[V]{seed: rand.Uint64(), arena: make([]byte, 0, max(hint, 0)*flatTokenGuess)}
	t.alloc(slots)
	return t
}

// flatLimit is the entry count at which a table of the given slots doubles:
// three quarters full.
func flatLimit(slots int) int { return slots - slots/4 }

// alloc replaces the entries with slots empty ones.
func (t *flatTable[V]) alloc(slots int) {
	t.entries = make([]flatEntry[V], slots)
	t.mask = uint32(slots - 1)
	t.limit = flatLimit(slots)
}

// len returns the number of entries.
func (t *flatTable[V]) len() int { return t.count }

// hash returns the token's 32-bit slot hash, never 0.
func (t *flatTable[V]) hash(token []byte) uint32 {
	h := uint32(hashToken(t.seed, token))
	if h == 0 {
		h = 1
	}
	return h
}

// token returns an entry's token, capped so that appending to it copies.
func (t *flatTable[V]) token(e *flatEntry[V]) []byte {
	end := e.off + uint64(e.n)
	return t.arena[e.off:end:end]
}

// probe returns the slot holding token, or else the empty slot where the
// probe for it ended.
func (t *flatTable[V]) probe(h uint32, token []byte) (i uint32, found bool) {
	for i = h & t.mask; ; i = (i + 1) & t.mask {
		e := &t.entries[i]
		if e.hash == 0 {
			return i, false
		}
		if e.hash == h && int(e.n) == len(token) && bytes.Equal(t.token(e), token) {
			return i, true
		}
	}
}

// find returns a pointer to token's value, or false if token is absent.
func (t *flatTable[V]) find(token []byte) (*V, bool) {
	i, found := t.probe(t.hash(token), token)
	if !found {
		return nil, false
	}
	return &t.entries[i].v, true
}

// slot returns a pointer to token's value and whether token was already
// there; a new token is inserted with the zero value.
func (t *flatTable[V]) slot(token []byte) (*V, bool) {
	h := t.hash(token)
	i, found := t.probe(h, token)
	if found {
		return &t.entries[i].v, true
	}
	if t.count >= t.limit {
		t.grow()
		i = t.empty(h)
	}
	t.insert(i, h, token)
	return &t.entries[i].v, false
}

// insert stores a new token in the empty slot i.
func (t *flatTable[V]) insert(i, h uint32, token []byte) {
	if uint64(len(token)) > 1<<32-1 {
		panic("flatTable: token longer than 4 GiB")
	}
	t.entries[i] = flatEntry[V]{hash: h, n: uint32(len(token)), off: uint64(len(t.arena))}
	t.arena = append(t.arena, token...)
	t.count++
}

// empty returns the first empty slot of hash h's probe sequence.
func (t *flatTable[V]) empty(h uint32) uint32 {
	i := h & t.mask
	for t.entries[i].hash != 0 {
		i = (i + 1) & t.mask
	}
	return i
}

// grow doubles the slots and moves every entry to its place in the new
// ones, by its stored hash: the arena is not read. The arena is doubled
// with them, so that it grows once per doubling rather than by append's
// smaller steps, each a copy left for the collector.
func (t *flatTable[V]) grow() {
	if uint64(len(t.entries)) >= flatMaxSlots {
		panic("flatTable: more than 2^32 slots")
	}
	old := t.entries
	t.alloc(2 * len(old))
	for i := range old {
		if old[i].hash != 0 {
			t.entries[t.empty(old[i].hash)] = old[i]
		}
	}
	if cap(t.arena) < 2*len(t.arena) {
		t.arena = append(make([]byte, 0, 2*len(t.arena)), t.arena...)
	}
}

// each calls fn for every entry, in no particular order. fn must not insert.
func (t *flatTable[V]) each(fn func(token []byte, v *V)) {
	for i := range t.entries {
		if e := &t.entries[i]; e.hash != 0 {
			fn(t.token(e), &e.v)
		}
	}
}

// eachSlot calls fn for every entry with its hash and its token's place in
// the arena (t.arena[off:off+n]), in slot order: unlike each, it reads
// neither the arena nor anything else at random. fn must not insert.
func (t *flatTable[V]) eachSlot(fn func(h uint32, off uint64, n uint32, v *V)) {
	for i := range t.entries {
		if e := &t.entries[i]; e.hash != 0 {
			fn(e.hash, e.off, e.n, &e.v)
		}
	}
}

// flatTableOf returns a table of the given seed and arena that holds hint
// entries before it first grows, for place to fill: how a snapshot that
// kept a table's seed, arena and slots (eachSlot) is read back without
// hashing or reading a token again.
func flatTableOf[V any](seed uint64, arena []byte, hint int) *flatTable[V] {
	t := newFlatTable[V](hint)
	t.seed, t.arena = seed, append(t.arena[:0], arena...)
	return t
}

// place inserts the entry of hash h whose token is t.arena[off:off+n],
// which must not be in the table yet, and returns its value; false if h
// is not a hash or the token lies outside the arena.
func (t *flatTable[V]) place(h uint32, off uint64, n uint32) (*V, bool) {
	if h == 0 || off > uint64(len(t.arena)) || uint64(n) > uint64(len(t.arena))-off {
		return nil, false
	}
	if t.count >= t.limit {
		t.grow()
	}
	i := t.empty(h)
	t.entries[i] = flatEntry[V]{hash: h, n: n, off: off}
	t.count++
	return &t.entries[i].v, true
}

// Multipliers of hashToken: odd, with bits spread over the whole word.
const (
	hashMulLen  = 0x9e3779b97f4a7c15
	hashMulWord = 0xd6e8feb86659fd93
	hashMulLast = 0xa0761d6478bd642f
)

// hashToken hashes a token under a seed: each 8-byte word is mixed into the
// state by a folded 64×64→128-bit multiply (the high and low halves XORed),
// the last 1 to 8 bytes through tailWord. The length enters first, so
// tokens that tailWord reads alike but differ in length hash apart. A final
// xor-shift-multiply spreads the whole word over the low bits, which are
// the ones a table's mask keeps: without it, about one seed in forty made
// tokens of a structured kind (decimal numbers, a long common prefix)
// cluster, three to ten times the probes of a uniform hash
// (TestFlatTableProbesStayShort, now over many seeds). It is not
// cryptographic; the random seed only keeps inputs from being built to
// collide without knowing it.
func hashToken(seed uint64, token []byte) uint64 {
	h := seed ^ uint64(len(token))*hashMulLen
	for ; len(token) > 8; token = token[8:] {
		h = foldMul(h^binary.LittleEndian.Uint64(token), hashMulWord)
	}
	h = foldMul(h^tailWord(token), hashMulLast)
	h ^= h >> 32
	h *= hashMulLen
	return h ^ h>>29
}

// foldMul multiplies a and b into 128 bits and XORs the halves.
func foldMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// tailWord packs the last 0 to 8 bytes of a token into a word: every byte
// is read, so for one length distinct tails give distinct words.
func tailWord(b []byte) uint64 {
	switch n := len(b); {
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b))<<32 | uint64(binary.LittleEndian.Uint32(b[n-4:]))
	case n > 0:
		return uint64(b[0])<<16 | uint64(b[n/2])<<8 | uint64(b[n-1])
	}
	return 0
}
