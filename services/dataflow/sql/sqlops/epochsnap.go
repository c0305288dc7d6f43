package sqlops

import (
	"errors"
	"fmt"

	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
)

// An epoch task's snapshot: a version, then its shared key tables (each
// one's Plan.Tables ID and its keys in slot order, exec.KeyTable's
// AppendState: restored before the operators that index their state by
// their slots), then for each of its units (the
// plan's order), the ID of its highest operator, the epochs it has
// stepped, whether it has finished, for each input which senders have
// ended it and its epochs not yet stepped (each one's number, the
// markers of it that came and its changes, as exec.AppendRowsState's
// rows with their weights), then its incremental operator's state
// (incr.Op.AppendState; an exchange has none). Taken at any point, mid-epoch
// included: restored into a fresh EpochTask of the same plan and task,
// it gives byte for byte the changes, markers and versions the task
// would have.

// epochSnapshotVersion is the first byte of an epoch task's snapshot.
const epochSnapshotVersion = 3 // 3: the shared key tables, and incr\'s operators\' state of version 3

var errEpochSnapshot = errors.New("sqlops: corrupt epoch task snapshot")

// AppendSnapshot appends the task's whole state to dst.
func (t *EpochTask) AppendSnapshot(dst []byte) ([]byte, error) {
	w := snapcodec.Writer{B: dst}
	w.Byte(epochSnapshotVersion)
	w.Uvarint(uint64(len(t.tables)))
	for _, s := range t.tables {
		w.Uvarint(uint64(s.id))
		w.AppendState(s.t.AppendState)
	}
	w.Uvarint(uint64(len(t.units)))
	for _, u := range t.units {
		w.Uvarint(uint64(u.top().ID))
		w.Varint(u.epoch)
		w.Bool(u.done)
		for _, in := range u.ins {
			w.Uvarint(uint64(len(in.ended)))
			for _, e := range in.ended {
				w.Bool(e)
			}
			w.Uvarint(uint64(len(in.pending)))
			for _, p := range in.pending {
				w.Varint(p.epoch)
				w.Varint(int64(p.marks))
				w.AppendState(func(dst []byte) []byte { return exec.AppendRowsState(dst, exec.Concat(in.cols, p.rows)) })
			}
		}
		w.Bool(u.op != nil)
		if u.op != nil {
			if err := w.AppendBytes(u.op.AppendState); err != nil {
				return nil, fmt.Errorf("operator #%d (%s): %w", u.top().ID, u.top().Kind, err)
			}
		}
	}
	return w.B, nil
}

// Restore reads a snapshot AppendSnapshot wrote into an EpochTask just
// made of the same plan and task.
func (t *EpochTask) Restore(state []byte) error {
	r := snapcodec.Reader{B: state, Corrupt: errEpochSnapshot}
	if v := r.Byte(); r.Err == nil && v != epochSnapshotVersion {
		return fmt.Errorf("%w: version %d, want %d", errEpochSnapshot, v, epochSnapshotVersion)
	}
	if n := r.Count(2); r.Err == nil && n != len(t.tables) {
		return fmt.Errorf("%w: %d key tables, the task has %d", errEpochSnapshot, n, len(t.tables))
	}
	for _, s := range t.tables {
		if id := r.Uvarint(); r.Err == nil && id != uint64(s.id) {
			return fmt.Errorf("%w: key table %d where %d is", errEpochSnapshot, id, s.id)
		}
		keys := r.Bytes()
		if r.Err != nil {
			break
		}
		if err := s.t.RestoreState(keys); err != nil {
			return fmt.Errorf("%w: key table %d: %v", errEpochSnapshot, s.id, err)
		}
	}
	if n := r.Count(3); r.Err == nil && n != len(t.units) {
		return fmt.Errorf("%w: %d operators, the task has %d", errEpochSnapshot, n, len(t.units))
	}
	for _, u := range t.units {
		if id := r.Uvarint(); r.Err == nil && id != uint64(u.top().ID) {
			return fmt.Errorf("%w: operator #%d where #%d is", errEpochSnapshot, id, u.top().ID)
		}
		u.epoch = r.Varint()
		u.done = r.Bool()
		u.heldBytes = 0
		for _, in := range u.ins {
			if n := r.Count(1); r.Err == nil && n != len(in.ended) {
				return fmt.Errorf("%w: operator #%d: %d senders, the input has %d", errEpochSnapshot, u.top().ID, n, len(in.ended))
			}
			for i := range in.ended {
				in.ended[i] = r.Bool()
			}
			in.pending = make([]pendingEpoch, r.Count(3))
			for i := range in.pending {
				p := &in.pending[i]
				p.epoch = r.Varint()
				p.marks = int(r.Varint())
				rows := r.Bytes()
				if r.Err != nil {
					break
				}
				b, err := exec.RestoreRowsState(rows, in.cols)
				if err != nil {
					return fmt.Errorf("%w: operator #%d: %v", errEpochSnapshot, u.top().ID, err)
				}
				if err := checkWeights(b.Cols[len(b.Cols)-1], b.N); err != nil {
					return fmt.Errorf("%w: operator #%d: %v", errEpochSnapshot, u.top().ID, err)
				}
				if b.N > 0 {
					p.rows = []*exec.Batch{b}
					u.heldBytes += int64(batchBytes(b))
				}
				if p.epoch <= u.epoch || i > 0 && p.epoch <= in.pending[i-1].epoch || p.marks < 0 || p.marks > in.senders {
					r.Fail(nil)
				}
			}
		}
		if has := r.Bool(); r.Err == nil && has != (u.op != nil) {
			return fmt.Errorf("%w: operator #%d's state", errEpochSnapshot, u.top().ID)
		}
		if u.op != nil {
			state := r.Bytes()
			if r.Err != nil {
				break
			}
			if err := u.op.RestoreState(state); err != nil {
				return fmt.Errorf("operator #%d (%s): %w", u.top().ID, u.top().Kind, err)
			}
		}
	}
	return r.End()
}
