package sqlops

import (
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
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

// snapWriter is snapcodec's Writer with this package's rows. (A flag is
// snapcodec's Bool: the byte 0 or 1, the bytes a uvarint 0 or 1 was, as
// older snapshots wrote it.)
type snapWriter struct{ snapcodec.Writer }

func (w *snapWriter) rows(b *exec.Batch) error {
	p, err := proto.Marshal(wire.ToRows(b))
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
	b, err := wire.FromRows(&rb, cols)
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
				o.held += int64(batchBytes(b))
			}
		}
	}
	return r.done("buffered rows")
}

// stateSizer is an operator whose snapshot may be large: about its
// size, so that the task's snapshot makes room for it at once
// (Task.AppendSnapshot) rather than grow, copied, as it is written.
type stateSizer interface{ stateSize() int }

func (s *semiJoin) stateSize() int { return s.set.StateSize() }
func (a *aggregate) stateSize() int {
	if a.fin != nil {
		return a.agg.StateSize() + binary.MaxVarintLen64 + a.fin.Done().StateSize()
	}
	return a.agg.StateSize()
}
func (d *distinct) stateSize() int { return d.d.StateSize() }

// A semi-join's state is whether its right input has ended, its set of
// keys, then its left rows held.
func (s *semiJoin) AppendSnapshot(dst []byte) ([]byte, error) {
	w := start(dst)
	w.Bool(s.rightDone)
	w.Bytes(s.set.AppendState(nil))
	return s.left.AppendSnapshot(w.B)
}

func (s *semiJoin) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("semi-join")
	s.rightDone = r.Bool()
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
	w.Bool(j.rightDone)
	if err := w.rows(j.j.Right()); err != nil {
		return nil, err
	}
	j.appendMatched(w)
	return j.left.AppendSnapshot(w.B)
}

func (j *join) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("join")
	j.rightDone = r.Bool()
	right := r.rows(j.right)
	if r.Err != nil {
		return fmt.Errorf("restore join: %w", r.Err)
	}
	if err := j.j.AddRight(right); err != nil {
		return fmt.Errorf("restore join: %w", err)
	}
	if err := j.restoreMatched(r); err != nil {
		return fmt.Errorf("restore join: %w", err)
	}
	return j.left.Restore(r.B)
}

// An aggregate's state is the keys of its finished groups, when it drops
// them (aggfinish.go), then its groups (exec.Aggregation's), appended in
// place: tens of megabytes at full scale, not copied.
func (a *aggregate) AppendSnapshot(dst []byte) ([]byte, error) {
	w := start(dst)
	if a.fin != nil {
		w.AppendState(a.fin.Done().AppendState)
	}
	return a.agg.AppendState(w.B), nil
}

func (a *aggregate) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("aggregate")
	if a.fin != nil {
		if done := r.Bytes(); r.Err == nil {
			if err := a.fin.Done().RestoreState(done); err != nil {
				return fmt.Errorf("restore aggregate: done keys: %w", err)
			}
		}
	}
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

// A limit's state is how many rows it may still pass, then, while an
// OFFSET has rows left to skip, how many (absent: none, as a limit of
// no OFFSET, or of a version before OFFSET, writes it).
func (l *limit) AppendSnapshot(dst []byte) ([]byte, error) {
	w := start(dst)
	w.Varint(l.n)
	if l.skip > 0 {
		w.Varint(l.skip)
	}
	return w.B, nil
}

func (l *limit) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("limit")
	l.n, l.skip = r.Varint(), 0
	if r.Err == nil && len(r.B) > 0 {
		if l.skip = r.Varint(); l.skip <= 0 { // written only while rows are left to skip
			r.Fail(nil)
		}
	}
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
