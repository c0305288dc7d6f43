package exec

import (
	"bytes"
	"hash/maphash"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// KeyTable is a hash table of keys (appendKey's bytes) giving each key a
// slot: the one table that the keyed operators of a task keyed by the
// same key share (the physical plan's Tables; today's MatchTable for the
// four default queries). Each operator keeps its own state per slot in
// arrays beside it (see slots), so a key is stored and hashed into one
// table whatever the number of operators keyed by it.
//
// It is open addressing over one arena: the keys' bytes are appended to
// arena (slot s's is arena[ends[s-1]:ends[s]]), and index, a power of two
// long, holds at each position a slot + 1 (0: empty) with its hash's top
// bits beside it, probed linearly. A key costs its bytes and about 20
// bytes of index and offsets, and no allocation of its own.
type KeyTable struct {
	seed  maphash.Seed
	index []entry
	arena []byte
	ends  []int
}

// entry is a position of the index: a slot + 1 (0: empty), and the top
// 32 bits of its key's hash, compared before the key's bytes.
type entry struct {
	slot int32
	hash uint32
}

// NewKeyTable returns an empty table.
func NewKeyTable() *KeyTable {
	return &KeyTable{seed: maphash.MakeSeed(), index: make([]entry, 64)}
}

// Len is the number of keys.
func (t *KeyTable) Len() int { return len(t.ends) }

// key is slot s's key.
func (t *KeyTable) key(s int32) []byte {
	start := 0
	if s > 0 {
		start = t.ends[s-1]
	}
	return t.arena[start:t.ends[s]]
}

// find returns key's hash and the position of the index that holds it,
// or the empty one where it would go.
func (t *KeyTable) find(key []byte) (uint64, int) {
	h := maphash.Bytes(t.seed, key)
	mask := len(t.index) - 1
	top := uint32(h >> 32)
	for i := int(h) & mask; ; i = (i + 1) & mask {
		e := t.index[i]
		if e.slot == 0 || e.hash == top && bytes.Equal(t.key(e.slot-1), key) {
			return h, i
		}
	}
}

// slot returns key's slot, adding the key when it is new.
func (t *KeyTable) slot(key []byte) int32 {
	h, i := t.find(key)
	if e := t.index[i]; e.slot != 0 {
		return e.slot - 1
	}
	s := int32(len(t.ends))
	t.arena = append(t.arena, key...)
	t.ends = append(t.ends, len(t.arena))
	t.index[i] = entry{slot: s + 1, hash: uint32(h >> 32)}
	if 4*len(t.ends) >= 3*len(t.index) { // at most three quarters full
		t.grow()
	}
	return s
}

// grow doubles the index and places every key again.
func (t *KeyTable) grow() {
	index := make([]entry, 2*len(t.index))
	mask := len(index) - 1
	for s := range int32(len(t.ends)) {
		h := maphash.Bytes(t.seed, t.key(s))
		i := int(h) & mask
		for index[i].slot != 0 {
			i = (i + 1) & mask
		}
		index[i] = entry{slot: s + 1, hash: uint32(h >> 32)}
	}
	t.index = index
}

// lookup returns key's slot, if it has one.
func (t *KeyTable) lookup(key []byte) (int32, bool) {
	_, i := t.find(key)
	if e := t.index[i]; e.slot != 0 {
		return e.slot - 1, true
	}
	return 0, false
}

// slots is one operator's view of a shared KeyTable: per slot, the
// operator's own index for that key (a group, a row list), or -1 when it
// has none yet.
type slots struct {
	t     *KeyTable
	local []int32
}

// get returns the operator's index of slot s, or -1.
func (v *slots) get(s int32) int32 {
	if int(s) >= len(v.local) {
		return -1
	}
	return v.local[s]
}

// set gives slot s the operator's index i.
func (v *slots) set(s, i int32) {
	for int(s) >= len(v.local) {
		v.local = append(v.local, -1)
	}
	v.local[s] = i
}

// rowKey appends the key of row i over the key columns.
func rowKey(dst []byte, keys []*Vec, i int) []byte {
	for _, kv := range keys {
		dst = appendKey(dst, kv, i)
	}
	return dst
}

// KeySet is the build side of a semi-join: the distinct non-NULL values
// of column 0 of its right input, as slots of a (shared) KeyTable.
type KeySet struct {
	v   slots
	n   int32
	key []byte
}

// NewKeySet returns an empty set in table t.
func NewKeySet(t *KeyTable) *KeySet { return &KeySet{v: slots{t: t}} }

// Add adds the values of column 0 of b.
func (s *KeySet) Add(b *Batch) {
	for i := range b.N {
		if b.Cols[0].IsNull(i) {
			continue
		}
		s.key = appendKey(s.key[:0], b.Cols[0], i)
		if sl := s.v.t.slot(s.key); s.v.get(sl) < 0 {
			s.v.set(sl, s.n)
			s.n++
		}
	}
}

// has reports whether key is in the set.
func (s *KeySet) has(key []byte) bool {
	sl, ok := s.v.t.lookup(key)
	return ok && s.v.get(sl) >= 0
}

// Keep returns the rows of b whose key (over b) is in the set: each row
// once, however many times its key was added; nil when none is.
func (s *KeySet) Keep(key *plan.Expr, b *Batch) (*Batch, error) {
	kv, err := eval(key, b)
	if err != nil {
		return nil, err
	}
	rows := make([]int32, 0, b.N)
	for i := range b.N {
		if kv.IsNull(i) {
			continue
		}
		s.key = appendKey(s.key[:0], kv, i)
		if s.has(s.key) {
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
	right             []*builder // the right rows, by column
	rows              [][]int32  // per the operator's index of a key: its right rows
	n                 int
	key               []byte
}

// NewJoin returns an empty join in table t of right rows of rightCols.
func NewJoin(t *KeyTable, leftKey, rightKey *plan.Expr, rightCols []plan.Column) *Join {
	j := &Join{leftKey: leftKey, rightKey: rightKey, v: slots{t: t}}
	for _, c := range rightCols {
		j.right = append(j.right, newBuilder(valueType(c.Type), 0))
	}
	return j
}

// AddRight adds right rows.
func (j *Join) AddRight(b *Batch) error {
	rk, err := eval(j.rightKey, b)
	if err != nil {
		return err
	}
	for i := range b.N {
		for c, bl := range j.right {
			bl.from(b.Cols[c], i)
		}
		if !rk.IsNull(i) {
			j.key = appendKey(j.key[:0], rk, i)
			sl := j.v.t.slot(j.key)
			id := j.v.get(sl)
			if id < 0 {
				id = int32(len(j.rows))
				j.v.set(sl, id)
				j.rows = append(j.rows, nil)
			}
			j.rows[id] = append(j.rows[id], int32(j.n))
		}
		j.n++
	}
	return nil
}

// Right is every right row added, in order.
func (j *Join) Right() *Batch {
	b := &Batch{N: j.n}
	for _, bl := range j.right {
		b.Cols = append(b.Cols, bl.v)
	}
	return b
}

// Probe returns the rows of b joined with the right rows of their key,
// the left columns then the right; nil when none matches.
func (j *Join) Probe(b *Batch) (*Batch, error) {
	lk, err := eval(j.leftKey, b)
	if err != nil {
		return nil, err
	}
	var lrows, rrows []int32
	for i := range b.N {
		if lk.IsNull(i) {
			continue
		}
		j.key = appendKey(j.key[:0], lk, i)
		sl, ok := j.v.t.lookup(j.key)
		if !ok || j.v.get(sl) < 0 {
			continue
		}
		for _, r := range j.rows[j.v.get(sl)] {
			lrows, rrows = append(lrows, int32(i)), append(rrows, r)
		}
	}
	if len(lrows) == 0 {
		return nil, nil
	}
	nb := &Batch{N: len(lrows)}
	nb.Cols = append(gatherBatch(b, lrows).Cols, gatherBatch(j.Right(), rrows).Cols...)
	return nb, nil
}
