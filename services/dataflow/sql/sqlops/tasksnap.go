package sqlops

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// A task's snapshot: what a Task's operators hold, so that the stage
// runtime can cut a planned job's state log short (stage.Snapshotter) as
// it does the built-in graph's. For each of the task's operators, in
// order: its ID, whether it has finished, the ends of its inputs it has
// been told (input and sender, as the text "in<k>" and "<sender>" that
// version 3 has always written), what it holds against the task's limit
// (heldLimiter), and its own snapshot when it has state
// and runs, or is a sink (a finished sink's rows are the query's answer;
// a finished operator's other state is no longer needed, and may have
// been let go). Restored into a fresh Task of the same plan, the
// keyed operators of one shared table each put their keys back into the
// task's one table.

// taskSnapshotVersion is the first byte of a task's snapshot (2: an
// operator's snapshot after a fixed 8-byte length; 3: what an operator
// that holds rows holds, and whether it was given too much).
const taskSnapshotVersion = 3

var errTaskSnapshot = errors.New("sqlops: corrupt task snapshot")

// errSpilledSnapshot is AppendSnapshot's error of a task with state on
// disk (NoSnapshot).
var errSpilledSnapshot = errors.New("sqlops: a task with spilled state writes no snapshot")

// AppendSnapshot appends the task's state to dst.
func (t *Task) AppendSnapshot(dst []byte) ([]byte, error) {
	if t.NoSnapshot() {
		return nil, errSpilledSnapshot
	}
	w := snapcodec.Writer{B: slices.Grow(dst, t.SnapshotSize())}
	w.Byte(taskSnapshotVersion)
	w.Uvarint(uint64(len(t.order)))
	for _, in := range t.order {
		w.Uvarint(uint64(in.o.ID))
		w.Bool(in.done)
		w.Uvarint(uint64(in.ends.Count()))
		in.ends.Noted(func(k, sender int) {
			w.Bytes(strconv.AppendInt([]byte("in"), int64(k), 10))
			w.Bytes(strconv.AppendInt(nil, int64(sender), 10))
		})
		var held int64
		var over bool
		if l, ok := in.op.(heldLimiter); ok {
			held, over = l.heldState()
		}
		w.Varint(held)
		w.Bool(over)
		snap, ok := snapshotted(in)
		if !ok {
			continue
		}
		// In place, after its length's room (8 bytes, filled in after):
		// a snapshot is tens of megabytes at full scale, and is not
		// copied.
		at := len(w.B)
		b, err := snap.AppendSnapshot(append(w.B, make([]byte, 8)...))
		if err != nil {
			return nil, fmt.Errorf("operator #%d (%s): %w", in.o.ID, in.o.Kind, err)
		}
		binary.LittleEndian.PutUint64(b[at:], uint64(len(b)-at-8))
		w.B = b
	}
	return w.B, nil
}

// SnapshotSize is about the size of the task's snapshot: its operators'
// large states (stateSizer), and an eighth more.
func (t *Task) SnapshotSize() int {
	size := 0
	for _, in := range t.order {
		if s, ok := in.op.(stateSizer); ok {
			if _, ok := snapshotted(in); ok {
				size += s.stateSize()
			}
		}
	}
	return size + size/8
}

// Restore reads a snapshot AppendSnapshot wrote into a Task just made of
// the same plan and task.
func (t *Task) Restore(state []byte) error {
	r := snapcodec.Reader{B: state, Corrupt: errTaskSnapshot}
	if v := r.Byte(); r.Err == nil && v != taskSnapshotVersion {
		return fmt.Errorf("%w: version %d, want %d", errTaskSnapshot, v, taskSnapshotVersion)
	}
	if n := r.Count(3); r.Err == nil && n != len(t.order) {
		return fmt.Errorf("%w: %d operators, the task has %d", errTaskSnapshot, n, len(t.order))
	}
	for _, in := range t.order {
		if id := r.Uvarint(); r.Err == nil && id != uint64(in.o.ID) {
			return fmt.Errorf("%w: operator #%d where #%d is", errTaskSnapshot, id, in.o.ID)
		}
		in.done = r.Bool()
		n := r.Count(2)
		for range n {
			input, sender := r.Bytes(), r.Bytes()
			if r.Err != nil {
				break
			}
			k, err1 := strconv.Atoi(strings.TrimPrefix(string(input), "in"))
			s, err2 := strconv.Atoi(string(sender))
			if err1 != nil || err2 != nil || !strings.HasPrefix(string(input), "in") {
				return fmt.Errorf("%w: operator #%d: an end of %q from %q", errTaskSnapshot, in.o.ID, input, sender)
			}
			in.ends.Note(k, s)
		}
		held, over := r.Varint(), r.Bool()
		if l, ok := in.op.(heldLimiter); ok {
			l.restoreHeld(held, over)
		}
		snap, ok := snapshotted(in)
		if r.Err != nil || !ok {
			continue
		}
		if len(r.B) < 8 {
			r.Fail(nil)
			break
		}
		size := binary.LittleEndian.Uint64(r.B)
		if size > uint64(len(r.B)-8) {
			r.Fail(nil)
			break
		}
		b := r.B[8 : 8+size]
		r.B = r.B[8+size:]
		if err := snap.Restore(b); err != nil {
			return fmt.Errorf("operator #%d (%s): %w", in.o.ID, in.o.Kind, err)
		}
	}
	return r.End()
}

// snapshotted returns the operator's Snapshotter when its state is in the
// task's snapshot.
func snapshotted(in *instance) (stage.Snapshotter, bool) {
	snap, ok := in.op.(stage.Snapshotter)
	if _, sink := in.op.(*Sink); !ok || in.done && !sink {
		return nil, false
	}
	return snap, true
}
