package incr

import (
	"errors"
	"fmt"

	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// A snapshot is the engine's state at an epoch boundary (after a
// Commit): a version number, the epochs committed, then each operator's
// state in the order New builds them (the plan's nodes depth first),
// then the answer's (topOp). An operator writes its fields as snapcodec
// varints and flags; the state of exec's structures it holds (key
// tables, an exec.Join's rows, an Aggregation, a Distinct) is exec's own
// AppendState, and rows it stores are exec.AppendRowsState's, each as a
// byte string. What is derived from the plan (columns, keys, LIMIT) is
// not written: Restore is given the plan.

// snapshotVersion is the first number of a snapshot.
const snapshotVersion = 4 // 2: an aggregate's open epoch (folding); 3: a semi-join's rows without their text key; 4: an aggregate's finished groups, a semi-join's rows in chunks

// ErrSnapshot is what Restore's error wraps when the bytes are not a
// snapshot of this version of the plan's engine.
var ErrSnapshot = errors.New("standing query snapshot is corrupt")

// Snapshot appends the engine's whole state to dst. It is taken between
// epochs (rows appended since the last Commit are an error): Restore of
// the plan and these bytes is an engine that gives, epoch after epoch,
// the changes and answers this one gives.
func (e *Engine) Snapshot(dst []byte) ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	for _, s := range e.order {
		if len(s.pending) > 0 {
			return nil, fmt.Errorf("snapshot: rows of %s appended since the last commit", s.n.Table)
		}
	}
	w := &snapcodec.Writer{B: dst}
	w.Uvarint(snapshotVersion)
	w.Varint(e.epoch)
	e.below.walk(func(o op) { writeOp(w, o) })
	e.top.write(w)
	return w.B, nil
}

// Restore returns the engine of the plan (as New's) in the state a
// Snapshot of it wrote; an error wrapping ErrSnapshot when the bytes are
// not one (garbage, truncated, another plan's).
func Restore(root *plan.Node, state []byte) (*Engine, error) {
	e, err := New(root)
	if err != nil {
		return nil, err
	}
	r := &snapcodec.Reader{B: state, Corrupt: ErrSnapshot}
	if v := r.Uvarint(); r.Err == nil && v != snapshotVersion {
		r.Fail(fmt.Errorf("%w: version %d, want %d", ErrSnapshot, v, snapshotVersion))
	}
	e.epoch = r.Varint()
	e.below.walk(func(o op) { readOp(r, o) })
	e.top.read(r)
	if err := r.End(); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	return e, nil
}

// walk calls f on the subtree's operators, depth first, each before its
// inputs.
func (n *node) walk(f func(op)) {
	f(n.op)
	for _, in := range n.inputs {
		in.walk(f)
	}
}

func writeOp(w *snapcodec.Writer, o op) {
	switch o := o.(type) {
	case *scanOp:
		for _, st := range o.stats {
			w.Varint(st.Missing)
			w.Varint(st.Invalid)
		}
	case *joinOp:
		w.AppendState(func(dst []byte) []byte { return exec.AppendRowsState(dst, o.right.Right()) })
		w.AppendState(func(dst []byte) []byte { return exec.AppendRowsState(dst, o.left.Right()) })
	case *semiOp:
		if !o.shared {
			w.AppendState(o.keys.AppendState)
		}
		o.grow(o.keys.Len()) // a key another operator of a shared table added since
		o.rows.write(w, &o.count)
	case *aggOp:
		w.Bool(o.first)
		if o.fin != nil && o.fin.own {
			w.AppendState(o.keys.AppendState) // the dropped groups' keys are not the aggregation's
		}
		w.AppendState(o.agg.AppendState)
		writeFlags(w, o.shown)
		o.ep.write(w, o.resultColumns())
		if o.fin != nil {
			o.fin.write(w)
		}
	case *regroupOp:
		w.Bool(o.first)
		w.AppendState(o.keys.AppendState)
		for _, rs := range o.rows {
			writeRefs(w, rs)
		}
		o.st.write(w)
	case *distinctOp:
		if o.grow != nil {
			w.AppendState(o.grow.AppendState)
		} else {
			o.counted.write(w)
		}
	case subTop:
		o.t.write(w)
	}
}

func readOp(r *snapcodec.Reader, o op) {
	if r.Err != nil {
		return
	}
	switch o := o.(type) {
	case *scanOp:
		for i := range o.stats {
			o.stats[i].Missing = r.Varint()
			o.stats[i].Invalid = r.Varint()
		}
	case *joinOp:
		readJoin(r, o.right, o.nr)
		readJoin(r, o.left, o.nl)
	case *semiOp:
		if !o.shared {
			readState(r, o.keys.RestoreState)
		}
		n := o.keys.Len()
		if r.Err != nil || n > len(r.B) {
			r.Fail(nil)
			return
		}
		o.count.grow(n)
		o.mark = make([]bool, n)
		o.rows.read(r, &o.count)
	case *aggOp:
		o.first = r.Bool()
		if o.fin != nil && o.fin.own {
			readState(r, o.keys.RestoreState)
		}
		readState(r, o.agg.RestoreState)
		o.mark = make([]bool, o.agg.Groups())
		o.shown = readFlags(r)
		if o.having == nil && len(o.shown) > 0 || len(o.shown) > o.agg.Groups() {
			r.Fail(nil)
		}
		o.ep.read(r, o)
		if o.fin != nil && r.Err == nil {
			o.fin.read(r, o.agg.Groups(), o.keys.Len())
		}
	case *regroupOp:
		o.first = r.Bool()
		readState(r, o.keys.RestoreState)
		n := o.keys.Len()
		if r.Err != nil || n > len(r.B) {
			r.Fail(nil)
			return
		}
		o.rows = make([][]ref, n)
		for s := range n {
			o.rows[s] = readRefs(r)
		}
		o.st.read(r, withWeight(o.in))
		o.st.check(r, o.rows...)
	case *distinctOp:
		if o.grow != nil {
			readState(r, o.grow.RestoreState)
		} else {
			o.counted.read(r)
		}
	case subTop:
		o.t.read(r)
	}
}

// readState reads a byte string of exec's state into restore.
func readState(r *snapcodec.Reader, restore func([]byte) error) {
	b := r.Bytes()
	if r.Err != nil {
		return
	}
	if err := restore(b); err != nil {
		r.Fail(fmt.Errorf("%w: %v", ErrSnapshot, err))
	}
}

// readRows reads a byte string of exec.AppendRowsState's rows of cols.
func readRows(r *snapcodec.Reader, cols []plan.Column) *exec.Batch {
	var b *exec.Batch
	readState(r, func(s []byte) (err error) {
		b, err = exec.RestoreRowsState(s, cols)
		return err
	})
	return b
}

// readJoin adds the right rows of the join (of n columns and a weight)
// it held.
func readJoin(r *snapcodec.Reader, j *exec.Join, n int) {
	cols := make([]plan.Column, n+1)
	for i, v := range j.Right().Cols {
		cols[i] = plan.Column{Type: v.Type}
	}
	cols[n] = weightCol
	b := readRows(r, cols)
	if r.Err != nil {
		return
	}
	if err := checkWeights(b); err != nil {
		r.Fail(fmt.Errorf("%w: %v", ErrSnapshot, err))
		return
	}
	if err := j.AddRight(b); err != nil {
		r.Fail(fmt.Errorf("%w: %v", ErrSnapshot, err))
	}
}

// checkWeights refuses a batch whose weight column (its last) is not
// whole int64s, which weights would panic on.
func checkWeights(b *exec.Batch) error {
	if len(b.Cols) == 0 {
		return fmt.Errorf("rows without a weight")
	}
	v := b.Cols[len(b.Cols)-1]
	for i := range b.N {
		if v.IsNull(i) {
			return fmt.Errorf("a NULL weight")
		}
		if _, s, ok := v.Nums[i].Unscaled(); !ok || s != 0 {
			return fmt.Errorf("weight %s is not a whole int64", v.Nums[i])
		}
	}
	return nil
}

func writeRefs(w *snapcodec.Writer, rs []ref) {
	w.Uvarint(uint64(len(rs)))
	for _, x := range rs {
		w.Uvarint(uint64(x.b))
		w.Uvarint(uint64(x.r))
	}
}

func readRefs(r *snapcodec.Reader) []ref {
	n := r.Count(2)
	if n == 0 {
		return nil
	}
	rs := make([]ref, n)
	for i := range rs {
		rs[i] = ref{b: readInt32(r), r: readInt32(r)}
	}
	return rs
}

func readInt32(r *snapcodec.Reader) int32 {
	v := r.Uvarint()
	if v > 1<<31-1 {
		r.Fail(nil)
		return 0
	}
	return int32(v)
}

func writeFlags(w *snapcodec.Writer, fs []bool) {
	w.Uvarint(uint64(len(fs)))
	for _, f := range fs {
		w.Bool(f)
	}
}

func readFlags(r *snapcodec.Reader) []bool {
	n := r.Count(1)
	if n == 0 {
		return nil
	}
	fs := make([]bool, n)
	for i := range fs {
		fs[i] = r.Bool()
	}
	return fs
}

// write writes the live rows in their order, with their weights, in
// chunks of keptChunk rows (each gathered, written and let go: a
// snapshot of millions of kept rows holds no copy of them whole), then
// for each slot its count (of counts) and its rows' places among them
// (a row's place is its rank among the live rows).
func (k *keptRows) write(w *snapcodec.Writer, counts *keyCounts) {
	w.Uvarint(uint64(k.live))
	ids := make([]int32, 0, min(k.live, keptChunk))
	for id := range int32(k.rows()) {
		if k.isDead(id) {
			continue
		}
		if ids = append(ids, id); len(ids) == keptChunk {
			w.AppendState(func(dst []byte) []byte { return exec.AppendRowsState(dst, k.gather(ids)) })
			ids = ids[:0]
		}
	}
	if len(ids) > 0 {
		w.AppendState(func(dst []byte) []byte { return exec.AppendRowsState(dst, k.gather(ids)) })
	}
	rank := k.ranks()
	var list []int32
	for s := range int32(counts.slots) {
		w.Varint(counts.get(s))
		list = k.appendTo(list[:0], s)
		w.Uvarint(uint64(len(list)))
		for _, id := range list {
			w.Uvarint(uint64(rank.of(id, k.dead)))
		}
	}
}

// keptChunk is the most kept rows a snapshot gathers at once.
const keptChunk = 1 << 16

// read reads write's state into k, empty, and counts, of the slots
// there are; bytes that cannot be its fail r (a row in no list or in two).
func (k *keptRows) read(r *snapcodec.Reader, counts *keyCounts) {
	cols := make([]plan.Column, len(k.cols), len(k.cols)+1)
	for c := range k.cols {
		cols[c] = plan.Column{Type: k.cols[c].v.Type}
	}
	cols = append(cols, weightCol)
	n := r.Count(1)
	var chunks []*exec.Batch
	for got := 0; got < n && r.Err == nil; {
		b := readRows(r, cols)
		if r.Err != nil {
			return
		}
		if b.N == 0 || got+b.N > n || b.N > keptChunk {
			r.Fail(nil)
			return
		}
		if err := checkWeights(b); err != nil {
			r.Fail(fmt.Errorf("%w: %v", ErrSnapshot, err))
			return
		}
		chunks = append(chunks, b)
		got += b.N
	}
	slot := make([]int32, n) // per row: its slot, +1
	for s := range counts.slots {
		c := r.Varint()
		if c < 0 && counts.grows {
			r.Fail(nil)
			return
		}
		counts.add(int32(s), c)
		for range r.Count(1) {
			i := readInt32(r)
			if r.Err != nil || int(i) >= n || slot[i] != 0 {
				r.Fail(nil)
				return
			}
			slot[i] = int32(s) + 1
		}
	}
	for i := range slot {
		if slot[i] == 0 {
			r.Fail(nil)
			return
		}
		slot[i]--
	}
	k.grow(counts.slots)
	from := 0
	for _, b := range chunks {
		rows := make([]int32, b.N)
		for i := range rows {
			rows[i] = int32(i)
		}
		k.add(b, rows, slot[from:from+b.N])
		from += b.N
	}
}

// write writes the stored batches (nil ones as a flag), each with its
// weight column, and each one's live rows.
func (s *store) write(w *snapcodec.Writer) {
	w.Uvarint(uint64(len(s.batches)))
	for i, b := range s.batches {
		w.Bool(b != nil)
		if b != nil {
			w.Varint(int64(s.live[i]))
			w.AppendState(func(dst []byte) []byte { return exec.AppendRowsState(dst, s.weighted(i)) })
		}
	}
}

func (s *store) read(r *snapcodec.Reader, cols []plan.Column) {
	n := r.Count(1)
	*s = store{batches: make([]*exec.Batch, n), weights: make([][]int64, n), live: make([]int32, n)}
	for i := range n {
		if !r.Bool() {
			continue
		}
		live := r.Varint()
		b := readRows(r, cols)
		if r.Err != nil {
			return
		}
		if live <= 0 || live > int64(b.N) {
			r.Fail(nil)
			return
		}
		if err := checkWeights(b); err != nil {
			r.Fail(fmt.Errorf("%w: %v", ErrSnapshot, err))
			return
		}
		s.put(i, b, int(live))
	}
}

// check fails r when a ref is not a stored row.
func (s *store) check(r *snapcodec.Reader, refs ...[]ref) {
	for _, rs := range refs {
		for _, x := range rs {
			if r.Err != nil {
				return
			}
			if int(x.b) >= len(s.batches) || s.batches[x.b] == nil || int(x.r) >= s.batches[x.b].N {
				r.Fail(nil)
			}
		}
	}
}

// write writes the set's entries (their keys, counts and rows; a freed
// entry's key is empty), its free entries and its stored rows.
func (s *rowSet) write(w *snapcodec.Writer) {
	w.Uvarint(uint64(len(s.keys)))
	for e, k := range s.keys {
		w.Bytes([]byte(k))
		w.Varint(s.counts[e])
		w.Uvarint(uint64(s.refs[e].b))
		w.Uvarint(uint64(s.refs[e].r))
	}
	w.Uvarint(uint64(len(s.free)))
	for _, e := range s.free {
		w.Uvarint(uint64(e))
	}
	w.Varint(s.total)
	s.st.write(w)
}

func (s *rowSet) read(r *snapcodec.Reader) {
	n := r.Count(4)
	s.index = map[string]int32{}
	s.keys, s.counts, s.refs = make([]string, n), make([]int64, n), make([]ref, n)
	for e := range n {
		s.keys[e] = string(r.Bytes())
		s.counts[e] = r.Varint()
		s.refs[e] = ref{b: readInt32(r), r: readInt32(r)}
	}
	free := map[int32]bool{}
	s.free = make([]int32, r.Count(1))
	for i := range s.free {
		e := readInt32(r)
		if int(e) >= n || free[e] {
			r.Fail(nil)
			return
		}
		free[e], s.free[i] = true, e
	}
	s.total = r.Varint()
	s.st.read(r, withWeight(s.cols))
	if r.Err != nil {
		return
	}
	var live []ref
	for e, k := range s.keys {
		if free[int32(e)] {
			continue
		}
		if _, dup := s.index[k]; dup {
			r.Fail(nil)
			return
		}
		s.index[k] = int32(e)
		s.keyLen += int64(len(k))
		live = append(live, s.refs[e])
	}
	s.st.check(r, live)
}

// write writes the answer's state: its first epoch's flag, its rows and
// the last version's rendering.
func (t *topOp) write(w *snapcodec.Writer) {
	w.Bool(t.first)
	t.set.write(w)
	w.AppendState(func(dst []byte) []byte { return exec.AppendRowsState(dst, t.shown) })
}

func (t *topOp) read(r *snapcodec.Reader) {
	if r.Err != nil {
		return
	}
	t.first = r.Bool()
	t.set.read(r)
	if b := readRows(r, t.root.Output); r.Err == nil {
		t.shown = b
	}
	t.cache, t.lines = nil, nil
}
