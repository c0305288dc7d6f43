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
