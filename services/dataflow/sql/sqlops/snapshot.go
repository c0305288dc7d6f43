package sqlops

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// Snapshots (stage.Snapshotter): every operator with state writes it as
// a version byte, then its fields (varints, and byte strings after their
// length); rows it holds are ColumnBatches, as on the wire; the state of
// an aggregate or a distinct (exec's, values in binary) comes last, in
// place, without a length. Restore reads a snapshot into a fresh
// operator of the same plan operator, refusing one of another version, a
// corrupt one, and counts the rest of the snapshot cannot hold (a
// corrupt count allocates nothing large).

// snapshotVersion is the first byte of an operator's snapshot (2: values
// in binary, not text, in exec's states and in the ColumnBatches of rows
// held; an aggregate's and a distinct's state in place).
const snapshotVersion = 2

var errSnapshot = errors.New("snapshot is corrupt")

var (
	_ stage.Snapshotter = (*scan)(nil)
	_ stage.Snapshotter = (*buffered)(nil)
	_ stage.Snapshotter = (*semiJoin)(nil)
	_ stage.Snapshotter = (*join)(nil)
	_ stage.Snapshotter = (*aggregate)(nil)
	_ stage.Snapshotter = (*distinct)(nil)
	_ stage.Snapshotter = (*limit)(nil)
	_ stage.Snapshotter = (*rowNumber)(nil)
)

// ToRows is b as a ColumnBatch, built a column at a time: a text
// column's arena and offsets are the Vec's own (a Vec is not modified
// once built, and a NULL's text is empty in both), a number's or a
// boolean's text is written (exec.AppendText). A batch of no rows has no
// columns, as batch.ColumnBuilder writes it.
func ToRows(b *exec.Batch) *wololov1.RowBatch {
	cb := &wololov1.ColumnBatch{Rows: uint32(b.N)}
	if b.N > 0 {
		cb.Columns = make([]*wololov1.ValueColumn, len(b.Cols))
		for c, v := range b.Cols {
			cb.Columns[c] = valueColumn(v, b.N)
		}
	}
	rb := &wololov1.RowBatch{Rows: &wololov1.RowBatch_Columns{Columns: cb}}
	return rb
}

// ToRoutedRows is ToRows of a channel's batch, with the routes each row
// is for (nil: the channel's one route).
func ToRoutedRows(b *exec.Batch, routes []uint64) *wololov1.RowBatch {
	rb := ToRows(b)
	rb.GetColumns().Routes = routes
	return rb
}

// valueColumn is the first n values of v as a ValueColumn.
func valueColumn(v *exec.Vec, n int) *wololov1.ValueColumn {
	vc := &wololov1.ValueColumn{}
	if v.Null != nil && slices.Contains(v.Null[:n], true) {
		vc.Nulls = make([]byte, (n+7)/8)
		for i, null := range v.Null[:n] {
			if null {
				vc.Nulls[i/8] |= 1 << (i % 8)
			}
		}
	}
	if v.Type == plan.Text {
		vc.Text = &wololov1.TextColumn{Data: v.Data[:v.Ends[n-1]], Ends: v.Ends[:n]}
		return vc
	}
	width := 8 // a rating's text, "1523.0"
	if v.Type == plan.Bool {
		width = 5
	}
	tc := &wololov1.TextColumn{Data: make([]byte, 0, n*width), Ends: make([]uint32, n)}
	for i := range n {
		if !v.IsNull(i) {
			tc.Data = exec.AppendText(tc.Data, v, i)
		}
		tc.Ends[i] = uint32(len(tc.Data))
	}
	vc.Text = tc
	return vc
}

// FromRows reads a ColumnBatch of the given columns: a batch of another
// width, or whose values do not read as their columns' types, is refused.
// A text column of the result aliases rb's arena and offsets, which must
// not be modified afterwards.
func FromRows(rb *wololov1.RowBatch, cols []plan.Column) (*exec.Batch, error) {
	cb := rb.GetColumns()
	if cb == nil {
		return nil, fmt.Errorf("%w: not a column batch", batch.ErrBadBatch)
	}
	v, err := batch.ReadColumns(cb)
	if err != nil {
		return nil, err
	}
	// A batch of no rows is written with no columns (ColumnBuilder).
	if v.Width() != len(cols) && (v.Rows() != 0 || v.Width() != 0) {
		return nil, fmt.Errorf("%w: %d columns, want %d", batch.ErrBadBatch, v.Width(), len(cols))
	}
	n := v.Rows()
	out := &exec.Batch{N: n, Cols: make([]*exec.Vec, len(cols))}
	for c, col := range cols {
		if n == 0 {
			out.Cols[c] = exec.NewVecBuilder(col.Type, 0).Vec()
			continue
		}
		vc := cb.Columns[c]
		var null []bool
		if bits := vc.GetNulls(); len(bits) > 0 {
			null = make([]bool, n)
			for i := range null {
				null[i] = bits[i/8]&(1<<(i%8)) != 0
			}
		}
		if col.Type == plan.Text {
			out.Cols[c] = &exec.Vec{Type: plan.Text, N: n, Null: null, Data: vc.Text.GetData(), Ends: vc.Text.GetEnds()}
			continue
		}
		b := exec.NewVecBuilder(col.Type, n)
		for i := range n {
			t, ok := v.Value(c, i)
			if !ok {
				b.Null()
			} else if err := b.Text(t); err != nil {
				return nil, fmt.Errorf("%w: column %s: %v", batch.ErrBadBatch, col.Name, err)
			}
		}
		out.Cols[c] = b.Vec()
	}
	return out, nil
}

// snapWriter is snapcodec's Writer with this package's flags and rows.
type snapWriter struct{ snapcodec.Writer }

func (w *snapWriter) flag(v bool) {
	if v {
		w.Uvarint(1)
	} else {
		w.Uvarint(0)
	}
}

func (r *snapReader) flag() bool {
	switch r.Uvarint() {
	case 0:
		return false
	case 1:
		return true
	}
	r.Fail(nil)
	return false
}

func (w *snapWriter) rows(b *exec.Batch) error {
	p, err := proto.Marshal(ToRows(b))
	if err != nil {
		return fmt.Errorf("snapshot rows: %w", err)
	}
	w.Bytes(p)
	return nil
}

// snapReader reads what a snapWriter wrote; the first error sticks.
type snapReader struct{ snapcodec.Reader }

// newSnapReader reads state, failing with errSnapshot.
func newSnapReader(state []byte) *snapReader {
	return &snapReader{snapcodec.Reader{B: state, Corrupt: errSnapshot}}
}

func (r *snapReader) rows(cols []plan.Column) *exec.Batch {
	p := r.Bytes()
	if r.Err != nil {
		return nil
	}
	var rb wololov1.RowBatch
	if err := proto.Unmarshal(p, &rb); err != nil {
		r.Fail(fmt.Errorf("%w: %v", errSnapshot, err))
		return nil
	}
	b, err := FromRows(&rb, cols)
	if err != nil {
		r.Fail(fmt.Errorf("%w: %v", errSnapshot, err))
	}
	return b
}

// version reads the version byte of what's snapshot.
func (r *snapReader) version(what string) {
	if v := r.Uvarint(); r.Err == nil && v != snapshotVersion {
		r.Fail(fmt.Errorf("%s snapshot of version %d, want %d", what, v, snapshotVersion))
	}
}

func (r *snapReader) done(what string) error {
	if err := r.End(); err != nil {
		return fmt.Errorf("restore %s: %w", what, err)
	}
	return nil
}

func start(dst []byte) *snapWriter {
	w := &snapWriter{snapcodec.Writer{B: dst}}
	w.Uvarint(snapshotVersion)
	return w
}

// A scan's state is its counts of NULLs.
func (s *scan) AppendSnapshot(dst []byte) ([]byte, error) {
	w := start(dst)
	for _, st := range s.stats {
		w.Varint(st.Missing)
		w.Varint(st.Invalid)
	}
	return w.B, nil
}

func (s *scan) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("scan")
	for i := range s.stats {
		s.stats[i].Missing, s.stats[i].Invalid = r.Varint(), r.Varint()
	}
	return r.done("scan")
}

// A buffering operator's state is the rows it holds, per input.
func (o *buffered) AppendSnapshot(dst []byte) ([]byte, error) {
	w := start(dst)
	for _, in := range o.ins {
		w.Uvarint(uint64(len(in)))
		for _, b := range in {
			if err := w.rows(b); err != nil {
				return nil, err
			}
		}
	}
	return w.B, nil
}

func (o *buffered) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("buffered rows")
	for i := range o.ins {
		for range r.Count(1) {
			if b := r.rows(o.cols[i]); b != nil {
				o.ins[i] = append(o.ins[i], b)
			}
		}
	}
	return r.done("buffered rows")
}

// A semi-join's state is whether its right input has ended, its set of
// keys, then its left rows held.
func (s *semiJoin) AppendSnapshot(dst []byte) ([]byte, error) {
	w := start(dst)
	w.flag(s.rightDone)
	w.Bytes(s.set.AppendState(nil))
	return s.left.AppendSnapshot(w.B)
}

func (s *semiJoin) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("semi-join")
	s.rightDone = r.flag()
	if err := s.set.RestoreState(r.Bytes()); r.Err == nil && err != nil {
		return fmt.Errorf("restore semi-join: %w", err)
	}
	if r.Err != nil {
		return fmt.Errorf("restore semi-join: %w", r.Err)
	}
	return s.left.Restore(r.B)
}

// A join's state is whether its right input has ended, its right rows,
// then its left rows held.
func (j *join) AppendSnapshot(dst []byte) ([]byte, error) {
	w := start(dst)
	w.flag(j.rightDone)
	if err := w.rows(j.j.Right()); err != nil {
		return nil, err
	}
	return j.left.AppendSnapshot(w.B)
}

func (j *join) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("join")
	j.rightDone = r.flag()
	right := r.rows(j.right)
	if r.Err != nil {
		return fmt.Errorf("restore join: %w", r.Err)
	}
	if err := j.j.AddRight(right); err != nil {
		return fmt.Errorf("restore join: %w", err)
	}
	return j.left.Restore(r.B)
}

// An aggregate's state is its groups (exec.Aggregation's), appended in
// place: tens of megabytes at full scale, not copied.
func (a *aggregate) AppendSnapshot(dst []byte) ([]byte, error) {
	return a.agg.AppendState(start(dst).B), nil
}

func (a *aggregate) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("aggregate")
	if r.Err != nil {
		return fmt.Errorf("restore aggregate: %w", r.Err)
	}
	if err := a.agg.RestoreState(r.B); err != nil {
		return fmt.Errorf("restore aggregate: %w", err)
	}
	return nil
}

// A distinct's state is the rows it has seen, appended in place.
func (d *distinct) AppendSnapshot(dst []byte) ([]byte, error) {
	return d.d.AppendState(start(dst).B), nil
}

func (d *distinct) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("distinct")
	if r.Err != nil {
		return fmt.Errorf("restore distinct: %w", r.Err)
	}
	if err := d.d.RestoreState(r.B); err != nil {
		return fmt.Errorf("restore distinct: %w", err)
	}
	return nil
}

// A limit's state is how many rows it may still pass.
func (l *limit) AppendSnapshot(dst []byte) ([]byte, error) {
	w := start(dst)
	w.Varint(l.n)
	return w.B, nil
}

func (l *limit) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("limit")
	l.n = r.Varint()
	return r.done("limit")
}

// A row number's state is the next number.
func (rn *rowNumber) AppendSnapshot(dst []byte) ([]byte, error) {
	w := start(dst)
	w.Varint(rn.next)
	return w.B, nil
}

func (rn *rowNumber) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("row number")
	rn.next = r.Varint()
	return r.done("row number")
}
