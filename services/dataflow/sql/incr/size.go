package incr

import (
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// The sizes of what the operators keep between epochs, for a job's
// budget (Op.Bytes): about the bytes of memory, as exec's Bytes count its
// structures, added up from what each holds; the few fixed bytes of each
// structure are not counted.

// opBytes is about the memory o's state takes.
func opBytes(o op) int64 {
	switch o := o.(type) {
	case *scanOp:
		return zsetBytes(o.pending)
	case *joinOp:
		return o.right.Bytes() + o.left.Bytes() + o.tables[0].Bytes() + o.tables[1].Bytes()
	case *semiOp:
		return o.keys.Bytes() + o.count.bytes() + int64(cap(o.mark)) + o.rows.bytes()
	case *aggOp:
		return o.agg.Bytes() + o.keys.Bytes() + int64(cap(o.shown)+cap(o.mark)) + 4*int64(cap(o.ep.ids)) + zsetBytes(o.ep.was) + o.fin.bytes()
	case *regroupOp:
		return o.keys.Bytes() + 24*int64(cap(o.rows)) + o.st.bytes()
	case *distinctOp:
		if o.grow != nil {
			return o.grow.Bytes() + o.keys.Bytes()
		}
		return o.counted.bytes()
	case subTop:
		return o.t.set.bytes() + zsetBytes(zset{o.t.shown})
	}
	return 0
}

// snapshotSize is about the bytes writeOp writes of o: what a snapshot
// makes room for at once. Where it is not estimated apart, it is the
// memory o's state takes; a semi-join's kept rows and an aggregate's
// groups are written in fewer bytes than they take (a kept row's text
// a dictionary's code in memory, a group's accumulators in arrays grown
// by doubling), and at full scale a snapshot made room for twice the
// bytes it wrote.
func snapshotSize(o op) int64 {
	switch o := o.(type) {
	case *semiOp:
		n := 2*int64(o.count.slots) + o.rows.snapshotSize()
		if !o.shared {
			n += int64(o.keys.StateSize())
		}
		return n
	case *aggOp:
		n := int64(o.agg.StateSize()+len(o.shown)) + 4*int64(len(o.ep.ids)) + zsetBytes(o.ep.was)
		if o.fin != nil {
			n += o.fin.Done().Bytes()/4 + int64(len(o.fin.Flags())) // the done slots' gaps, about 64 a word at most
			if o.fin.own {
				n += int64(o.keys.StateSize())
			}
		}
		return n
	case *distinctOp:
		if o.grow != nil {
			return int64(o.grow.StateSize())
		}
	}
	return opBytes(o)
}

// snapshotSize is about the bytes write writes: per live row its values
// (a text its bytes and two, a number five, a boolean two), its weight
// (three) and its place (four).
func (k *keptRows) snapshotSize() int64 {
	row := int64(3 + 4)
	for _, c := range k.cols {
		switch {
		case c.v.Type == plan.Text && c.words != nil && len(c.codes) > 0:
			var text int64
			for _, x := range c.codes[:min(len(c.codes), 1024)] { // a sample of the rows
				text += int64(len(c.words.texts[x]))
			}
			row += 2 + text/int64(min(len(c.codes), 1024))
		case c.v.Type == plan.Text && c.v.N > 0:
			row += 2 + int64(len(c.v.Data)/c.v.N)
		case c.v.Type == plan.Number:
			row += 5
		default:
			row += 2
		}
	}
	return 16 + row*int64(k.live)
}

// bytes is about the memory of the stored batches, kept as they come
// and go: a task adds its operators' up after every batch it is given.
func (s *store) bytes() int64 { return s.size }

// bytes is about the memory of the set: its entries, their keys (twice:
// the index's and the entry's string share their bytes, not their
// headers) and its stored rows.
func (s *rowSet) bytes() int64 {
	return s.st.bytes() + s.keyLen + int64(8*cap(s.counts)+8*cap(s.refs)+4*cap(s.free)+16*cap(s.keys)+48*len(s.index))
}

// storedBytes is about the memory of a stored batch: its values and its
// weights.
func storedBytes(b *exec.Batch, ws []int64) int64 { return batchBytes(b) + 8*int64(cap(ws)) }

// batchBytes is about the memory of b's values.
func batchBytes(b *exec.Batch) int64 {
	var n int64
	for _, v := range b.Cols {
		n += v.Bytes()
	}
	return n
}

func zsetBytes(z zset) int64 {
	var n int64
	for _, b := range z {
		if b != nil {
			n += batchBytes(b)
		}
	}
	return n
}
