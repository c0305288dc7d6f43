package exec

// FindGroups is the group of each row of b, as Result numbers its rows
// (0, 1, ... in the order the groups' keys were first added), -1 where
// the row's key has no group yet; it adds nothing. Without keys, every
// row's group is 0 once a row was added. The incremental engine
// (services/dataflow/sql/incr) reads the rows of the groups an epoch's
// rows touch before it adds them, to emit their change.
func (a *Aggregation) FindGroups(b *Batch) ([]int32, error) {
	ids := make([]int32, b.N)
	if len(a.keys) == 0 {
		for i := range ids {
			ids[i] = min(a.g.n, 1) - 1
		}
		return ids, nil
	}
	keys := make([]*Vec, len(a.keys))
	for i, k := range a.keys {
		v, err := eval(k, b)
		if err != nil {
			return nil, err
		}
		keys[i] = v
	}
	modes := make([]KeyMode, b.N)
	for i := range modes {
		modes[i] = FindKey
	}
	for i, s := range a.g.v.t.Slots(keys, b.N, modes, nil) {
		ids[i] = a.g.v.get(s)
	}
	return ids, nil
}

// ResultRows is the rows of Result of the groups ids (each below
// Groups), in their order: the groups an epoch changed, however
// scattered, made in one batch.
func (a *Aggregation) ResultRows(ids []int32) *Batch {
	out := &Batch{N: len(ids)}
	for _, k := range a.g.keys {
		out.Cols = append(out.Cols, gather(k.v, ids))
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
