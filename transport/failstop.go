package transport

import (
	"errors"
	"fmt"
	"sync"
)

// ErrStoreFailed is returned by every write of a FailStop store after one
// of them failed.
var ErrStoreFailed = errors.New("an earlier write to the store failed")

// FailStop is a Store that fails for good at its first failed write
// (Commit, Trim, Acknowledge, DropJob, NextIncarnation): the error is kept, Failed is
// closed, and every later write is refused with ErrStoreFailed without
// reaching the store. A process runs on one and stops when Failed closes.
//
// The reason is that a failed write leaves the process's memory ahead of
// its store (an operator applied a batch the store does not hold; the
// gateway parsed rows it could not commit) and the store itself may not
// take another write safely (Pebble's commit pipeline does not recover from
// a failed WAL write). Going on would at best retry into the same full
// disk, at worst acknowledge what is not durable. Stopping, and being
// restarted by the masters from what the store holds, is the one way back;
// if the disk is still full the restart fails again, the masters' crash-
// loop backoff spaces the attempts, and the job goes on once there is room.
//
// Reads (Load, ReadState, ReadOutbox, Stats) and Close pass through.
type FailStop struct {
	Store
	once   sync.Once
	failed chan struct{}
	err    error // the first failed write; set before failed is closed
}

// NewFailStop wraps s.
func NewFailStop(s Store) *FailStop {
	return &FailStop{Store: s, failed: make(chan struct{})}
}

// Failed is closed at the first failed write.
func (f *FailStop) Failed() <-chan struct{} { return f.failed }

// Err is the first failed write's error, nil while none failed.
func (f *FailStop) Err() error {
	select {
	case <-f.failed:
		return f.err
	default:
		return nil
	}
}

// refuse is the error of a write after a failed one.
func (f *FailStop) refuse() error {
	if err := f.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrStoreFailed, err)
	}
	return nil
}

// check records err as the first failure, if it is one.
func (f *FailStop) check(err error) error {
	if err != nil {
		f.once.Do(func() {
			f.err = err
			close(f.failed)
		})
	}
	return err
}

// Commit implements Store.
func (f *FailStop) Commit(c *Commit) error {
	if err := f.refuse(); err != nil {
		return err
	}
	return f.check(f.Store.Commit(c))
}

// Trim implements Store.
func (f *FailStop) Trim(ch ChannelID, seq uint64) error {
	if err := f.refuse(); err != nil {
		return err
	}
	return f.check(f.Store.Trim(ch, seq))
}

// Acknowledge implements Store.
func (f *FailStop) Acknowledge(ch ChannelID, seq uint64) error {
	if err := f.refuse(); err != nil {
		return err
	}
	return f.check(f.Store.Acknowledge(ch, seq))
}

// DropJob implements Store.
func (f *FailStop) DropJob(job string) error {
	if err := f.refuse(); err != nil {
		return err
	}
	return f.check(f.Store.DropJob(job))
}

// NextIncarnation implements Store.
func (f *FailStop) NextIncarnation(atLeast uint64) (uint64, error) {
	if err := f.refuse(); err != nil {
		return 0, err
	}
	n, err := f.Store.NextIncarnation(atLeast)
	return n, f.check(err)
}
