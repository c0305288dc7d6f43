package exec

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/bits"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// KeyTable is a hash table of keys (appendKey's bytes) giving each key a
// slot: the one table that the keyed operators of a task keyed by the
// same key share (the physical plan's Tables; today's MatchTable for the
// four default queries). Each operator keeps its own state per slot in
// arrays beside it (see slots), so a key is stored and hashed into one
// table whatever the number of operators keyed by it; and where those
// operators read one batch (a channel's, in sqlops), the batch's keys
// are looked up once for all of them (Slots), each operator given the
// slots with its rows.
//
// It is open addressing over one arena: the keys' bytes are appended to
// arena (slot s's ends where ends[s] says, and starts where slot s-1's
// ends, or at the next of the arena's blocks: keyArena), and index, a
// power of two long, holds at each position a slot + 1 (0: empty) and,
// in the same 4 bytes, the bits of its key's hash that follow those
// naming its home (the position its linear probe starts at), compared
// before the key's bytes. A key costs its bytes and about 11 bytes of
// index and offsets, and no allocation of its own. Entries of 8 bytes (a
// slot, and 32 bits of hash from which the index doubled without reading
// a key) held 33 of a shard's 119 MB of state when the demo's q2 first
// spilled, at twice the full dataset; with entries of 4 it does not
// spill there, and that run takes 13% less time. The price: when the
// index doubles, its keys are hashed again (resize).
//
// A key that is one text value is hashed over the text alone (see
// hashKey), so that a column of text is looked up straight from its
// Vec's bytes, without its keys being written out first.
type KeyTable struct {
	seed  maphash.Seed
	index []entry
	shift uint8 // 32 - log2(len(index)): home's shift
	// slotMask is an entry's bits of its slot + 1: len(index) - 1.
	slotMask uint32
	arena    keyArena
	ends     []uint32 // per slot, where its key ends in arena (at most maxArena)
	// rowKeys, keyEnds and hashes are Slots' scratch: the rows' keys one
	// after the other (keyEnds: where each ends), the rows' hashes.
	rowKeys []byte
	keyEnds []int
	hashes  []uint64
	from    []int // touch's: per hash, where its probe may start
	sink    int32 // what touch read, kept so that its loads are made
	looked  int   // the keys Slots has looked up (Lookups)
}

// entry is a position of the index: 0 when empty, else a slot + 1 in its
// low bits (KeyTable.slotMask: as many as name a position of the index;
// a slot + 1 is less than the positions) and, above them, the bits of the
// key's hash that follow those naming its home (tag).
type entry uint32

// maxArena is the most bytes of keys a table holds: its ends are
// uint32s, half the memory of ints (12 MB less for the 3.1M match
// tokens of the full dataset, held by a standing job's table).
const maxArena = math.MaxUint32

// NewKeyTable returns an empty table.
func NewKeyTable() *KeyTable {
	return &KeyTable{seed: maphash.MakeSeed(), index: make([]entry, 64), shift: 32 - 6, slotMask: 64 - 1}
}

// home is the position of the index where the probe for a key of hash h
// starts: the top bits of the entry's hash.
func (t *KeyTable) home(h uint64) int { return int(uint32(h>>32) >> t.shift) }

// tag is the bits of an entry of a key of hash h above its slot: the
// bits of h's top 32 after those naming its home.
func (t *KeyTable) tag(h uint64) uint32 { return uint32(h>>32) << (32 - t.shift) }

// slotAt is the slot + 1 at position i of the index (0: empty).
func (t *KeyTable) slotAt(i int) int32 { return int32(uint32(t.index[i]) & t.slotMask) }

// Len is the number of keys.
func (t *KeyTable) Len() int { return len(t.ends) }

// meanKey is the mean bytes of a key (0 when there is none).
func (t *KeyTable) meanKey() int {
	if len(t.ends) == 0 {
		return 0
	}
	return int(t.arena.end) / len(t.ends)
}

// Lookups is how many keys Slots has looked up or added: a row's key
// counts once however many operators then read its slot.
func (t *KeyTable) Lookups() int { return t.looked }

// key is slot s's key.
func (t *KeyTable) key(s int32) []byte {
	prev := uint32(0)
	if s > 0 {
		prev = t.ends[s-1]
	}
	return t.arena.key(prev, t.ends[s])
}

// KeyText returns the text of slot s's key when it is one text value
// (the key of a table keyed by one text column), and whether it is: what
// keeps rows by such a key need not keep the key's text again.
func (t *KeyTable) KeyText(s int32) ([]byte, bool) { return textBody(t.key(s)) }

// textBody returns the text of a key that is one text value (appendKey's
// 1, the text's length as a uvarint, the text), and whether it is one.
func textBody(key []byte) ([]byte, bool) {
	if len(key) < 2 || key[0] != 1 {
		return nil, false
	}
	n, w := binary.Uvarint(key[1:])
	if w <= 0 || n != uint64(len(key)-1-w) {
		return nil, false
	}
	return key[1+w:], true
}

// hashKey is key's hash: that of its text when it is one text value,
// else of its bytes. Either way equal keys hash alike.
func (t *KeyTable) hashKey(key []byte) uint64 {
	if body, ok := textBody(key); ok {
		return maphash.Bytes(t.seed, body)
	}
	return maphash.Bytes(t.seed, key)
}

// find returns the position of the index that holds key, of hash h, or
// the empty one where it would go.
func (t *KeyTable) find(h uint64, key []byte) int { return t.findFrom(h, t.home(h), key) }

// findFrom is find with the probe starting at position from, its home or
// a later one of its probe before which none holds it (touch's).
func (t *KeyTable) findFrom(h uint64, from int, key []byte) int {
	mask, top := len(t.index)-1, t.tag(h)
	for i := from; ; i = (i + 1) & mask {
		e := uint32(t.index[i])
		if s := int32(e & t.slotMask); s == 0 || e&^t.slotMask == top && bytes.Equal(t.key(s-1), key) {
			return i
		}
	}
}

// findText is find of the key that is one text value, text (its
// uvarint length is lenBytes), compared without the key being written;
// its probe starts at position from, its home or a later one of its
// probe before which none holds it (touch's).
func (t *KeyTable) findText(h uint64, from int, text, lenBytes []byte) int {
	mask, top := len(t.index)-1, t.tag(h)
	want := 1 + len(lenBytes) + len(text)
	for i := from; ; i = (i + 1) & mask {
		e := uint32(t.index[i])
		s := int32(e & t.slotMask)
		if s == 0 {
			return i
		}
		if e&^t.slotMask != top {
			continue
		}
		if k := t.key(s - 1); len(k) == want && k[0] == 1 && bytes.Equal(k[1:1+len(lenBytes)], lenBytes) && bytes.Equal(k[1+len(lenBytes):], text) {
			return i
		}
	}
}

// slot returns key's slot, adding the key when it is new.
func (t *KeyTable) slot(key []byte) int32 {
	h := t.hashKey(key)
	i := t.find(h, key)
	if s := t.slotAt(i); s != 0 {
		return s - 1
	}
	t.addKey(key)
	return t.added(i, h)
}

// addKey appends key to the arena, to be given a slot (added).
func (t *KeyTable) addKey(key []byte) {
	copy(t.arena.add(len(key)), key)
}

// appendKeys is append(dst, p...) for a table's ends: their capacity
// doubles while they are small (tableQuarter values), then grows as
// append grows a large slice, by about a quarter. A table lives as long
// as its job and only grows, so what its room past its keys costs is
// paid the whole job (and counts against the job's state, which spills
// past its share), where the copies a quarter makes more than a doubling
// are 4 of each value in all, once.
func appendKeys[T any](dst []T, p ...T) []T {
	if cap(dst) < tableQuarter {
		return appendDoubling(dst, p...)
	}
	return append(dst, p...)
}

// tableQuarter is the capacity from which a table's ends grow by a
// quarter.
const tableQuarter = 1 << 20

// added gives the key just appended to the arena the next slot, at
// position i of the index (its hash h), and returns the slot.
func (t *KeyTable) added(i int, h uint64) int32 {
	s := int32(len(t.ends))
	t.ends = appendKeys(t.ends, t.arena.end)
	t.index[i] = entry(t.tag(h) | uint32(s+1))
	if 4*len(t.ends) >= 3*len(t.index) { // at most three quarters full
		t.grow()
	}
	return s
}

// reserve makes room for n more keys, so that adding them grows nothing
// on the way (the arena's blocks never move): a restore adds a
// snapshot's keys at once, and the index doubled some twenty times for
// 1.5M keys, placing every entry again each time; here it is placed
// once.
func (t *KeyTable) reserve(n int) {
	size := len(t.index)
	for 4*(len(t.ends)+n) >= 3*size {
		size *= 2
	}
	if size > len(t.index) {
		t.resize(size)
	}
	t.ends = slices.Grow(t.ends, n)
}

// Compact keeps the keys of slots keep alone (each a slot of the table,
// none twice), as slots 0.. in keep's order, and lets the others' memory
// go: what an operator that alone keys in the table does when it moves
// the others' state elsewhere (an aggregate's spilled groups). Any other
// slot number held of the table names another key after it.
func (t *KeyTable) Compact(keep []int32) {
	old := *t
	empty := NewKeyTable()
	t.arena, t.ends, t.index, t.shift, t.slotMask = keyArena{}, nil, empty.index, empty.shift, empty.slotMask
	t.reserve(len(keep))
	for _, s := range keep {
		key := old.key(s)
		h := t.hashKey(key)
		i := t.find(h, key)
		t.addKey(key)
		t.added(i, h)
	}
}

// grow doubles the index.
func (t *KeyTable) grow() { t.resize(2 * len(t.index)) }

// resize makes the index size long (a larger power of two, at most
// 2^31: an entry keeps a bit of tag) and places every key again, at its
// home from its hash (more bits of it), hashed again from its bytes (the
// arena read in order). The keys are placed in the order of their homes'
// top bits (a counting sort of the slots), so that the index is written
// nearly in order: placed in the order of the slots, each was a write
// at random in an index larger than the caches, and adding two million
// keys took 150 ns a key, against 87 when the index held the hashes.
func (t *KeyTable) resize(size int) {
	if size > 1<<31 {
		panic("exec: a key table of more than 2^31 positions")
	}
	t.index = nil // its entries are made again from the keys
	hs := make([]uint32, len(t.ends))
	prev := uint32(0)
	for s, end := range t.ends {
		hs[s] = uint32(t.hashKey(t.arena.key(prev, end)) >> 32)
		prev = end
	}
	t.index = make([]entry, size)
	t.shift = uint8(33 - bits.Len(uint(size)))
	t.slotMask = uint32(size - 1)
	by := min(32-t.shift, resizeBuckets) // the bits of the home the slots are sorted by
	at := make([]int32, 1<<by+1)
	for _, h := range hs {
		at[h>>(32-by)+1]++
	}
	for b := range 1 << by {
		at[b+1] += at[b]
	}
	order := make([]int32, len(hs))
	for s, h := range hs {
		b := h >> (32 - by)
		order[at[b]] = int32(s)
		at[b]++
	}
	mask := int(t.slotMask)
	for _, s := range order {
		h := hs[s]
		i := int(h >> t.shift)
		for t.index[i] != 0 {
			i = (i + 1) & mask
		}
		t.index[i] = entry(h<<(32-t.shift) | uint32(s+1))
	}
}

// resizeBuckets is the most top bits of the homes that resize sorts the
// keys by: 4,096 runs of nearby positions.
const resizeBuckets = 12

// lookup returns key's slot, if it has one.
func (t *KeyTable) lookup(key []byte) (int32, bool) {
	i := t.find(t.hashKey(key), key)
	if s := t.slotAt(i); s != 0 {
		return s - 1, true
	}
	return 0, false
}

// KeyMode is what Slots does with a row's key.
type KeyMode uint8

const (
	// SkipKey leaves the row alone: its slot is -1.
	SkipKey KeyMode = iota
	// FindKey looks the key up: its slot, or -1 when it has none.
	FindKey
	// AddKey looks the key up, adding it when it is new: its slot.
	AddKey
)

// Slots returns the slot of the key (rowKey's) of each of the n rows of
// the key columns, in dst's memory: each row's as mode says (nil: every
// key added). It is the one lookup of a row that every operator keyed by
// the table then reads (each its own state at the slot), and what their
// own Add, Keep and Probe do first.
func (t *KeyTable) Slots(keys []*Vec, n int, mode []KeyMode, dst []int32) []int32 {
	dst = slices.Grow(dst[:0], n)[:n]
	t.looked += n
	for _, m := range mode {
		if m == SkipKey {
			t.looked--
		}
	}
	if len(keys) == 1 && keys[0].Type == plan.Text {
		t.textSlots(keys[0], mode, dst)
		return dst
	}
	t.keysSlots(keys, mode, dst)
	return dst
}

// keysSlots is Slots of keys written out (rowKey's: of several columns,
// or of one that is not text), as textSlots looks up a text column's:
// every row's key written and hashed first, in one loop, then each row's
// position (probeRows). One row at a time, each probe waited on its
// position, then on its key, and the aggregates of several keys spent
// most of their time so (the analyst queries' groups by match and team,
// by civ and rating, ...).
func (t *KeyTable) keysSlots(keys []*Vec, mode []KeyMode, dst []int32) {
	n := len(dst)
	t.rowKeys = t.rowKeys[:0]
	t.keyEnds = slices.Grow(t.keyEnds[:0], n)[:n]
	t.hashes = slices.Grow(t.hashes[:0], n)[:n]
	start := 0
	for i := range n {
		if mode == nil || mode[i] != SkipKey {
			t.rowKeys = rowKey(t.rowKeys, keys, i)
		}
		t.keyEnds[i] = len(t.rowKeys)
		t.hashes[i] = t.hashKey(t.rowKeys[start:])
		start = len(t.rowKeys)
	}
	key := func(i int) []byte {
		start := 0
		if i > 0 {
			start = t.keyEnds[i-1]
		}
		return t.rowKeys[start:t.keyEnds[i]]
	}
	t.probeRows(mode, dst,
		func(i int, h uint64, from int) int { return t.findFrom(h, from, key(i)) },
		func(i int) { t.addKey(key(i)) })
}

// touchRows is how many rows' keys probeRows touches before it probes
// for them: few enough that what touch fetched is still in the caches
// when the probes read it.
const touchRows = 64

// textSlots is Slots of one text column, its keys read from v's bytes:
// every row's hash first, in one loop, then each row's position
// (probeRows).
func (t *KeyTable) textSlots(v *Vec, mode []KeyMode, dst []int32) {
	n := len(dst)
	t.hashes = slices.Grow(t.hashes[:0], n)[:n]
	start := uint32(0)
	for i := range n {
		end := v.Ends[i]
		if v.IsNull(i) {
			t.hashes[i] = maphash.Bytes(t.seed, nullKey)
		} else {
			t.hashes[i] = maphash.Bytes(t.seed, v.Data[start:end])
		}
		start = end
	}
	var lenBytes [binary.MaxVarintLen64]byte
	// lenOf is a text's length as its key writes it (appendKey's).
	lenOf := func(text []byte) []byte { return lenBytes[:binary.PutUvarint(lenBytes[:], uint64(len(text)))] }
	t.probeRows(mode, dst,
		func(i int, h uint64, from int) int {
			if v.IsNull(i) {
				return t.findFrom(h, from, nullKey)
			}
			text := v.Text(i)
			return t.findText(h, from, text, lenOf(text))
		},
		func(i int) {
			if v.IsNull(i) {
				t.addKey(nullKey)
				return
			}
			text := v.Text(i)
			l := lenOf(text)
			b := t.arena.add(1 + len(l) + len(text))
			b[0] = 1
			copy(b[1+copy(b[1:], l):], text)
		})
}

// probeRows gives each row of a batch, whose keys' hashes are t.hashes,
// its slot in dst by its mode (AddKey for every row when mode is nil; -1
// for none), in blocks of touchRows rows touched first (touch): find(i,
// h, from) is the position of row i's key, its probe starting at from
// (touch's, or its home when the index has grown since), and add(i)
// appends its key to the arena, to be placed at the empty position find
// gave.
func (t *KeyTable) probeRows(mode []KeyMode, dst []int32, find func(i int, h uint64, from int) int, add func(i int)) {
	n := len(dst)
	touched := 0 // the index's length when touch ran
	for i, h := range t.hashes[:n] {
		if i%touchRows == 0 {
			t.touch(t.hashes[i:min(i+touchRows, n)])
			touched = len(t.index)
		}
		m := AddKey
		if mode != nil {
			m = mode[i]
		}
		dst[i] = -1
		if m == SkipKey {
			continue
		}
		from := t.home(h)
		if len(t.index) == touched { // not grown since: the positions hold
			from = t.from[i%touchRows]
		}
		p := find(i, h, from)
		if s := t.slotAt(p); s != 0 {
			dst[i] = s - 1
			continue
		}
		if m == AddKey {
			add(i)
			dst[i] = t.added(p, h)
		}
	}
}

// touch reads, for each hash, the index position it starts at; then
// finds the first position of its probe that is empty or has its hash
// (from: no position before it can hold the key, and none will, as a
// key only fills an empty one), and reads the key of the slot there:
// loads of one row that do not wait for another's, so that the memory
// of a table larger than the caches is fetched for many rows at once,
// not one row after the other as the probes that follow would (each
// waiting on its position, then on its key). What it reads is only kept
// in sink.
func (t *KeyTable) touch(hashes []uint64) {
	var sink int32
	for _, h := range hashes {
		sink ^= int32(t.index[t.home(h)])
	}
	mask, sm := len(t.index)-1, t.slotMask
	t.from = slices.Grow(t.from[:0], len(hashes))[:len(hashes)]
	for k, h := range hashes {
		top := t.tag(h)
		i := t.home(h)
		for e := uint32(t.index[i]); e&sm != 0 && e&^sm != top; e = uint32(t.index[i]) {
			i = (i + 1) & mask
		}
		t.from[k] = i
	}
	var at int
	for _, i := range t.from {
		if s := t.slotAt(i); s != 0 {
			at ^= int(t.ends[s-1])
		}
	}
	for _, i := range t.from {
		if s := t.slotAt(i); s != 0 {
			sink ^= int32(t.arena.lastByte(t.ends[s-1]))
		}
	}
	t.sink = sink ^ int32(at)
}

// nullKey is the key of a NULL (appendKey's).
var nullKey = []byte{0}

// slots is one operator's view of a shared KeyTable: per slot, the
// operator's own index for that key (a group, a row list), or -1 when it
// has none yet.
type slots struct {
	t     *KeyTable
	local []int32
}

// get returns the operator's index of slot s, or -1.
func (v *slots) get(s int32) int32 {
	if s < 0 || int(s) >= len(v.local) {
		return -1
	}
	return v.local[s]
}

// set gives slot s the operator's index i, the view grown at once to
// the table's room for keys (its ends' capacity) when s is past its end,
// so that it grows as the table does: grown by doubling, it had room for
// 2.3 times the table's keys, 20 of q2's 33 MB of state per shard when
// it first spilled at twice the full dataset.
func (v *slots) set(s, i int32) {
	if int(s) >= len(v.local) {
		local := make([]int32, max(int(s)+1, cap(v.t.ends)))
		copy(local, v.local)
		for k := len(v.local); k < len(local); k++ {
			local[k] = -1
		}
		v.local = local
	}
	v.local[s] = i
}

// slotBits is a set of slots of a table: a bit per slot, up to the
// largest in it.
type slotBits struct {
	bits []uint64
	n    int
}

// has reports whether slot s is in the set (s -1, no key: not).
func (b *slotBits) has(s int32) bool {
	return s >= 0 && int(s/64) < len(b.bits) && b.bits[s/64]&(1<<(s%64)) != 0
}

// add adds slot s, and reports whether it was not in the set.
func (b *slotBits) add(s int32) bool {
	if w := int(s/64) + 1; w > len(b.bits) {
		b.bits = append(b.bits, make([]uint64, w-len(b.bits))...)
	}
	if b.bits[s/64]&(1<<(s%64)) != 0 {
		return false
	}
	b.bits[s/64] |= 1 << (s % 64)
	b.n++
	return true
}

// slots is the set's slots, ascending.
func (b *slotBits) slots() []int32 {
	slots := make([]int32, 0, b.n)
	for i, w := range b.bits {
		for ; w != 0; w &= w - 1 {
			slots = append(slots, int32(i*64+bits.TrailingZeros64(w)))
		}
	}
	return slots
}

// bytes is about the memory of the bits.
func (b *slotBits) bytes() int64 { return 8 * int64(cap(b.bits)) }

// rowKey appends the key of row i over the key columns.
func rowKey(dst []byte, keys []*Vec, i int) []byte {
	for _, kv := range keys {
		dst = appendKey(dst, kv, i)
	}
	return dst
}

// keyModes is the mode of each row of key column v for Slots (nil: every
// key added): m, but SkipKey for a NULL, which matches nothing (a
// semi-join's, a join's key).
func keyModes(v *Vec, m KeyMode) []KeyMode {
	if v.Null == nil && m == AddKey {
		return nil
	}
	modes := make([]KeyMode, v.N)
	for i := range modes {
		if !v.IsNull(i) {
			modes[i] = m
		}
	}
	return modes
}

// KeySet is the build side of a semi-join: the distinct non-NULL values
// of column 0 of its right input, as slots of a (shared) KeyTable: a bit
// per slot of the table (slotBits), and its slots in the order they were
// added (its state's order). A set of a few of its table's keys costs
// little: q3's and q4's semi-joins hold the tokens of a few matches in
// the table of every match q2 groups by, where a view (slots) of 4 bytes
// per slot of the table cost them 12 MB each at twice the full dataset.
type KeySet struct {
	t     *KeyTable
	in    slotBits
	order []int32 // the slots, in the order added
	slots []int32 // scratch: the slots of a batch's keys
}

// NewKeySet returns an empty set in table t.
func NewKeySet(t *KeyTable) *KeySet { return &KeySet{t: t} }

// add adds slot sl's key, and reports whether it was not in the set.
func (s *KeySet) add(sl int32) bool {
	if !s.in.add(sl) {
		return false
	}
	s.order = append(s.order, sl)
	return true
}

// Add adds the values of column 0 of b.
func (s *KeySet) Add(b *Batch) { s.AddSlots(b, nil) }

// AddSlots is Add given the slots of column 0's values (Slots, every
// non-NULL one added; nil: looked up here).
func (s *KeySet) AddSlots(b *Batch, sl []int32) {
	kv := b.Cols[0]
	if sl == nil {
		s.slots = s.t.Slots(b.Cols[:1], b.N, keyModes(kv, AddKey), s.slots)
		sl = s.slots
	}
	for i := range b.N {
		if !kv.IsNull(i) {
			s.add(sl[i])
		}
	}
}

// Keep returns the rows of b whose key (over b) is in the set: each row
// once, however many times its key was added; nil when none is.
func (s *KeySet) Keep(key *plan.Expr, b *Batch) (*Batch, error) { return s.KeepSlots(key, b, nil) }

// KeepSlots is Keep given the slots of the rows' keys (Slots, each
// non-NULL one found or added; -1: not in the table; nil: looked up
// here).
func (s *KeySet) KeepSlots(key *plan.Expr, b *Batch, sl []int32) (*Batch, error) {
	kv, err := eval(key, b)
	if err != nil {
		return nil, err
	}
	if sl == nil {
		s.slots = s.t.Slots([]*Vec{kv}, b.N, keyModes(kv, FindKey), s.slots)
		sl = s.slots
	}
	rows := make([]int32, 0, b.N)
	for i := range b.N {
		if !kv.IsNull(i) && s.in.has(sl[i]) {
			rows = append(rows, int32(i))
		}
	}
	switch len(rows) {
	case 0:
		return nil, nil
	case b.N:
		return b, nil
	}
	return gatherBatch(b, rows), nil
}

// Join is the inner equi-join's state: the right rows, and per key (a
// slot of a shared KeyTable) the rows that have it. Rows with a NULL key
// match nothing.
type Join struct {
	leftKey, rightKey *plan.Expr
	v                 slots
	right             *rowChunks // the right rows
	// The right rows of each key, in the order added, as a list through
	// the rows: first and last per the operator's index of a key, next
	// per right row (-1: none), so that adding a row allocates nothing
	// per key.
	first, last, next []int32
	n                 int
	slots             []int32 // scratch: the slots of a batch's keys
	lrows, rrows      []int32 // scratch: ProbeChunks' pairs of a chunk
	outer             outer   // an outer join's (join.go)
	read              []bool  // the output columns read (SetRead; nil: all)
}

// NewJoin returns an empty join in table t of right rows of rightCols.
func NewJoin(t *KeyTable, leftKey, rightKey *plan.Expr, rightCols []plan.Column) *Join {
	return &Join{leftKey: leftKey, rightKey: rightKey, v: slots{t: t}, right: newRowChunks(rightCols)}
}

// AddRight adds right rows.
func (j *Join) AddRight(b *Batch) error { return j.AddRightSlots(b, nil) }

// AddRightSlots is AddRight given the slots of the rows' right keys
// (Slots, every non-NULL one added; nil: looked up here).
func (j *Join) AddRightSlots(b *Batch, sl []int32) error {
	nulls, err := j.keyNulls(j.rightKey, b, sl, AddKey)
	if err != nil {
		return err
	}
	if sl == nil {
		sl = j.slots
	}
	j.right.add(b)
	if len(j.next)+b.N > cap(j.next) {
		j.next = doubled(j.next, b.N) // as appendDoubling: append grows a large slice by a quarter, copied each time
	}
	for i := range b.N {
		r := int32(j.n)
		j.next = append(j.next, -1)
		j.n++
		if anyNullAt(nulls, i) {
			continue
		}
		id := j.v.get(sl[i])
		if id < 0 {
			id = int32(len(j.first))
			j.v.set(sl[i], id)
			j.first, j.last = appendDoubling(j.first, r), appendDoubling(j.last, r)
			continue
		}
		j.next[j.last[id]], j.last[id] = r, r
	}
	return nil
}

// keyNulls is, for the rows of b, the Vecs that say whose key (over b)
// is NULL (keyNulls'); and when sl is nil, the key's slots looked up in
// j.slots first, as mode says (a NULL skipped).
func (j *Join) keyNulls(key *plan.Expr, b *Batch, sl []int32, mode KeyMode) ([]*Vec, error) {
	if sl != nil {
		return keyNulls(key, b)
	}
	k, err := eval(key, b)
	if err != nil {
		return nil, err
	}
	j.slots = j.v.t.Slots([]*Vec{k}, b.N, keyModes(k, mode), j.slots)
	if k.Null == nil {
		return nil, nil
	}
	return []*Vec{k}, nil
}

// Right is every right row added, in order (a copy of them once they
// are more than a chunk's: rowChunks).
func (j *Join) Right() *Batch {
	b := j.right.batch()
	if k, ok := j.keyFromTable(); ok {
		b.Cols[k] = j.keyText(j.keySlots(), 0, j.n)
	}
	return b
}

// keyFromTable is the right rows' key column when it is one text column
// the join does not hold (SetRead): what reads the rows whole has each
// row's key's text from the table (keySlots, keyText).
func (j *Join) keyFromTable() (int, bool) {
	k := j.rightKey
	if k != nil && k.Kind == plan.ColRef && k.Type == plan.Text && j.right.skipped(k.Col) {
		return k.Col, true
	}
	return 0, false
}

// keySlots is the slot of each right row's key in the table, -1 for a
// row of none (a NULL key).
func (j *Join) keySlots() []int32 {
	slot := make([]int32, j.n)
	for r := range slot {
		slot[r] = -1
	}
	for s, id := range j.v.local {
		if id < 0 {
			continue
		}
		for r := j.first[id]; r >= 0; r = j.next[r] {
			slot[r] = int32(s)
		}
	}
	return slot
}

// keyText is the text of the keys of the right rows from to to, by
// their slots (keySlots), NULL for a row of none.
func (j *Join) keyText(slot []int32, from, to int) *Vec {
	bl := newBuilder(plan.Text, to-from)
	for _, s := range slot[from:to] {
		if s >= 0 {
			if t, ok := j.v.t.KeyText(s); ok {
				bl.text(t)
				continue
			}
		}
		bl.null()
	}
	return bl.v
}

// EachRight hands the right rows to f in order, a chunk of them at a
// time (Right's rows without their copy into one Batch).
func (j *Join) EachRight(f func(*Batch) error) error { return j.eachRight(false, f) }

// DrainRight hands the right rows to f in order, a chunk of them at a
// time, each chunk let go once f has it (a spill's: the rows it keeps go
// to a join of their own, and the join they leave holds none of them at
// the end but its keys' lists); the join is spent then, good for nothing
// more. The key column it does not hold comes from the table, as
// Right's.
func (j *Join) DrainRight(f func(*Batch) error) error { return j.eachRight(true, f) }

// eachRight is EachRight, or DrainRight when drain is set.
func (j *Join) eachRight(drain bool, f func(*Batch) error) error {
	var slot []int32
	k, fromTable := j.keyFromTable()
	if fromTable {
		slot = j.keySlots()
	}
	for i := range j.right.chunks {
		b := j.right.chunkBatch(i)
		if fromTable {
			from := i * chunkRows
			b.Cols[k] = j.keyText(slot, from, from+b.N)
		}
		if drain {
			j.right.chunks[i] = nil
		}
		if err := f(b); err != nil {
			return err
		}
	}
	return nil
}

// RightRows is how many right rows have been added.
func (j *Join) RightRows() int { return j.n }

// Probe returns the rows of b joined with the right rows of their key,
// the left columns then the right; nil when none matches.
func (j *Join) Probe(b *Batch) (*Batch, error) {
	var out *Batch
	err := j.ProbeChunks(b, nil, 0, func(nb *Batch) error {
		out = nb
		return nil
	})
	return out, err
}

// ProbeChunks is Probe given the slots of the rows' left keys (Slots,
// each non-NULL one found or added; -1: not in the table; nil: looked
// up here), its rows handed to emit in the order Probe makes them, at
// most chunk rows at a time (0: all at once), each chunk made only when
// the one before it has been taken. A join's output is not bounded by
// its input (a key shared by n left and m right rows makes n*m rows):
// so it is never made whole, and emit's error (a budget spent) stops it
// between two chunks.
func (j *Join) ProbeChunks(b *Batch, sl []int32, chunk int, emit func(*Batch) error) error {
	nulls, err := j.keyNulls(j.leftKey, b, sl, FindKey)
	if err != nil {
		return err
	}
	if sl == nil {
		sl = j.slots
	}
	lrows, rrows := j.lrows[:0], j.rrows[:0]
	defer func() { j.lrows, j.rrows = lrows[:0], rrows[:0] }() // their memory for the next batch
	flush := func() error {
		if len(lrows) == 0 {
			return nil
		}
		nb := j.gatherLeft(b, lrows)
		nb.Cols = append(nb.Cols, j.gatherRight(rrows).Cols...)
		lrows, rrows = lrows[:0], rrows[:0] // gathered: the chunk holds copies
		return emit(nb)
	}
	for i := range b.N {
		id := int32(-1)
		if !anyNullAt(nulls, i) {
			id = j.v.get(sl[i])
		}
		if id < 0 {
			if j.outer.left { // the left row alone, the right columns NULL
				lrows, rrows = append(lrows, int32(i)), append(rrows, -1)
				if chunk > 0 && len(lrows) == chunk {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			continue
		}
		for r := j.first[id]; r >= 0; r = j.next[r] {
			j.outer.matched(r)
			lrows, rrows = append(lrows, int32(i)), append(rrows, r)
			if chunk > 0 && len(lrows) == chunk {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}
