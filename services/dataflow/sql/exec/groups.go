package exec

import "slices"

// Slots is the slot of each row of b's key in the aggregation's table,
// the key added when new: what AddSlots takes, and GroupsOf reads, so
// that the incremental engine (services/dataflow/sql/incr) looks a row's
// key up once to find the group it touches before it adds the row.
func (a *Aggregation) Slots(b *Batch) ([]int32, error) {
	keys, err := a.keyVecs(b)
	if err != nil {
		return nil, err
	}
	return a.g.v.t.Slots(keys, b.N, nil, nil), nil
}

// FindSlots is Slots without adding a key: -1 for a key the table has
// not.
func (a *Aggregation) FindSlots(b *Batch) ([]int32, error) {
	keys, err := a.keyVecs(b)
	if err != nil {
		return nil, err
	}
	modes := make([]KeyMode, b.N)
	for i := range modes {
		modes[i] = FindKey
	}
	return a.g.v.t.Slots(keys, b.N, modes, nil), nil
}

// keyVecs is the group key's columns over b.
func (a *Aggregation) keyVecs(b *Batch) ([]*Vec, error) {
	keys := make([]*Vec, len(a.keys))
	for i, k := range a.keys {
		v, err := eval(k, b)
		if err != nil {
			return nil, err
		}
		keys[i] = v
	}
	return keys, nil
}

// GroupsOf is the group of each slot, as Result numbers its rows (0, 1,
// ... in the order the groups' keys were first added), -1 for a key
// whose rows were not added yet.
func (a *Aggregation) GroupsOf(sl []int32) []int32 {
	ids := make([]int32, len(sl))
	for i, s := range sl {
		ids[i] = a.g.v.get(s)
	}
	return ids
}

// GroupSlots is the slot of each group's key in the aggregation's table,
// by group (Groups' numbering; none without keys): what drops groups
// (Keep) and must still know their keys names them by.
func (a *Aggregation) GroupSlots() []int32 {
	if a.g.inTable {
		return slices.Clone(a.g.keySlots[:a.g.n])
	}
	out := make([]int32, a.g.n)
	for s, g := range a.g.v.local {
		if g >= 0 {
			out[g] = int32(s)
		}
	}
	return out
}

// ResultRows is the rows of Result of the groups ids (each below
// Groups), in their order: the groups an epoch changed, however
// scattered, made in one batch.
func (a *Aggregation) ResultRows(ids []int32) *Batch {
	out := &Batch{N: len(ids)}
	for c := range a.g.keys {
		out.Cols = append(out.Cols, a.g.keyRows(c, ids))
	}
	for _, ac := range a.accs {
		out.Cols = append(out.Cols, ac.pick(ids).result(len(ids)))
	}
	return out
}

// pick is a's state of the groups ids alone, as its groups 0.. (window's
// of a list of groups): the per-group values copied.
func (a *acc) pick(ids []int32) *acc {
	n := int32(0)
	for _, g := range ids {
		n = max(n, g+1)
	}
	a.grow(int(n))
	w := *a
	w.count = counts{lo: pickAt(a.count.lo, ids), hi: pickMap(a.count.hi, ids)}
	w.sums = make([]decs, len(a.sums))
	for i, s := range a.sums {
		w.sums[i] = s.pick(ids)
	}
	w.has = pickAt(a.has, ids)
	w.nums, w.bestN = a.nums.pick(ids), pickAt(a.bestN, ids)
	return &w
}

// pick is d's numbers of the groups ids, as groups 0..
func (d decs) pick(ids []int32) decs {
	return decs{i: pickAt(d.i, ids), s: pickAt(d.s, ids), big: pickMap(d.big, ids)}
}

// pickAt is s at ids; nil when s is.
func pickAt[T any](s []T, ids []int32) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(ids))
	for k, g := range ids {
		out[k] = s[g]
	}
	return out
}

// pickMap is the entries of m of the groups ids, as groups 0..; nil
// when m is.
func pickMap[V any](m map[int32]V, ids []int32) map[int32]V {
	if m == nil {
		return nil
	}
	w := map[int32]V{}
	for k, g := range ids {
		if v, ok := m[g]; ok {
			w[int32(k)] = v
		}
	}
	return w
}

// AppendStateOf appends to dst the state of the groups ids alone (each
// below Groups, none twice), as AppendState appends that of an
// Aggregation holding just them, as its groups 0.. in the order of ids:
// what RestoreState reads into an empty Aggregation of the same keys and
// aggregates (sqlops: an aggregate's groups moved to disk).
func (a *Aggregation) AppendStateOf(dst []byte, ids []int32) []byte {
	return a.pick(ids, slots{t: a.g.v.t}).AppendState(dst)
}

// Keep is the Aggregation of the groups ids alone (each below Groups,
// none twice), as its groups 0.. in the order of ids, in a's table: what
// a becomes when its other groups move elsewhere. Their keys stay in the
// table (another operator may share it), their state goes: a's own is
// copied, a text minimum's or maximum's values too. a is not to be used
// after.
func (a *Aggregation) Keep(ids []int32) *Aggregation {
	// The view renumbered in place, at the slots of a's groups. It was
	// made again at each Keep, a walk of every slot of the table, and an
	// aggregate that lets its finished groups go does so every finishLag
	// groups (sqlops' dropFinished, q2's) while its table grows with the
	// input: the cost grew as the square of the input (at twice the full
	// dataset Keep took 8 times its CPU at the full dataset, and a tenth
	// of the page faults of the run). A group of one text key knows its
	// slot (keySlots); of other keys, GroupSlots still walks the view.
	// Nor is the view cut after the last group kept: the next new key's
	// slot is the table's last, which grew it back at once.
	renum := make([]int32, a.g.n)
	for g := range renum {
		renum[g] = -1
	}
	for k, g := range ids {
		renum[g] = int32(k)
	}
	for g, s := range a.GroupSlots() {
		a.g.v.local[s] = renum[g]
	}
	k := a.pick(ids, a.g.v)
	for _, ac := range k.accs {
		ac.compactBest()
	}
	return k
}

// CompactTable lets the keys of a's table go that none of its groups
// has (KeyTable.Compact): for an Aggregation that alone keys in its
// table, once Keep has let groups go. Its groups' slots are then 0.. in
// the groups' order.
func (a *Aggregation) CompactTable() {
	keep := make([]int32, a.g.n)
	for s, g := range a.g.v.local {
		if g >= 0 {
			keep[g] = int32(s)
		}
	}
	a.g.v.t.Compact(keep)
	a.g.v.local = make([]int32, len(keep))
	for g := range a.g.v.local {
		a.g.v.local[g] = int32(g)
	}
	if a.g.inTable {
		a.g.keySlots = slices.Clone(a.g.v.local)
	}
}

// pick is the Aggregation of the groups ids alone, as its groups 0..,
// viewing its table as v.
func (a *Aggregation) pick(ids []int32, v slots) *Aggregation {
	g := &groups{v: v, n: int32(len(ids)), inTable: a.g.inTable}
	for _, k := range a.g.keys {
		if g.inTable {
			g.keys = append(g.keys, newBuilder(k.v.Type, 0))
			continue
		}
		g.keys = append(g.keys, &builder{v: gather(k.v, ids)})
	}
	if g.inTable {
		g.keySlots = pickAt(a.g.keySlots, ids)
	}
	out := &Aggregation{keys: a.keys, g: g, conds: a.conds}
	for _, ac := range a.accs {
		out.accs = append(out.accs, ac.pick(ids))
	}
	return out
}

// compactBest copies the text or booleans of a's minima or maxima that
// its groups hold (best keeps every improvement, and pick's copy
// another's groups' too) into a Vec of their own.
func (a *acc) compactBest() {
	if a.best == nil {
		return
	}
	bl := newBuilder(a.best.Type, len(a.bestN))
	for g, b := range a.bestN {
		if b >= 0 {
			bl.from(a.best, int(b))
			a.bestN[g] = int32(bl.v.N - 1)
		}
	}
	a.best = bl.v
}

// KeyCols is the groups' keys, a column per key of the aggregation, a row
// per group (Groups' numbering; none without keys).
func (a *Aggregation) KeyCols() []*Vec {
	out := make([]*Vec, len(a.g.keys))
	for c := range a.g.keys {
		out[c] = a.g.keyRange(c, 0, int(a.g.n))
	}
	return out
}
