package exec

// The sizes of what the keyed operators hold, for the budgets of a job
// (services/dataflow/sql/sqlops, Budget): about the bytes of memory each
// takes, read from the capacities of its slices in constant time, so that
// a task can add them up after every batch it is given. They count what
// grows with the data (the keys, the rows, the per-group state), not the
// few fixed bytes of each structure.

// decBytes is the bytes of one value.Dec in a slice (an int64, a scale
// and a pointer); the digits of a number too wide for an int64 are not
// counted (value bounds them).
const decBytes = 24

// Bytes is about the memory v's values take.
func (v *Vec) Bytes() int64 {
	if v == nil || isUnread(v) { // an unread Vec's memory is shared
		return 0
	}
	return int64(cap(v.Null) + cap(v.Data) + 4*cap(v.Ends) + decBytes*cap(v.Nums) + cap(v.Bools))
}

// Bytes is about the memory the table takes: its index, its keys' bytes
// and their offsets.
func (t *KeyTable) Bytes() int64 {
	return int64(4*cap(t.index)+4*cap(t.ends)) + t.arena.bytes()
}

// bytes is the memory of an operator's view of a table.
func (v *slots) bytes() int64 { return int64(4 * cap(v.local)) }

// Bytes is about the memory the set takes besides its table.
func (s *KeySet) Bytes() int64 { return s.in.bytes() + 4*int64(cap(s.order)) }

// Bytes is about the memory the distinct takes besides its table.
func (d *Distinct) Bytes() int64 { return d.set.Bytes() }

// Bytes is about the memory the join's right rows take besides its
// table: their values, and the lists of each key's rows.
func (j *Join) Bytes() int64 {
	return j.v.bytes() + 4*int64(cap(j.first)+cap(j.last)+cap(j.next)) + int64(cap(j.outer.hit)) + j.right.bytes()
}

// Bytes is about the memory the groups and their aggregates' state take
// besides their table.
func (a *Aggregation) Bytes() int64 {
	n := a.g.v.bytes() + 4*int64(cap(a.g.keySlots))
	for _, k := range a.g.keys {
		n += k.v.Bytes()
	}
	for _, ac := range a.accs {
		n += int64(cap(ac.count.lo)+cap(ac.has)+4*cap(ac.bestN)+mapBytes*len(ac.count.hi)) + ac.nums.bytes() + ac.best.Bytes()
		for _, s := range ac.sums {
			n += s.bytes()
		}
	}
	return n
}

// bytes is the memory of a number per group.
func (d *decs) bytes() int64 { return int64(8*cap(d.i)+cap(d.s)) + mapBytes*int64(len(d.big)) }

// mapBytes is about the bytes an entry of a small map of a group's
// state takes (count.hi, decs.big: the key, the value, the map's share).
const mapBytes = 48

// StateSize is about the bytes AppendState appends: each key's bytes
// and its length.
func (t *KeyTable) StateSize() int { return int(t.arena.end) + 2*len(t.ends) + 10 }
