package exec

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
