package transporttest

import (
	"sync/atomic"

	"github.com/wololo/wololo/transport"
)

// FailingStore is a transport.Store whose disk fills up: after After
// successful Commits (a few more when commits race) every Commit, Trim,
// Acknowledge and DropJob fails with Err and does nothing, until Free.
// Reads pass through.
type FailingStore struct {
	transport.Store
	After   int
	Err     error
	commits atomic.Int64
	freed   atomic.Bool
}

// Free gives the disk its space back: writes succeed again.
func (s *FailingStore) Free() { s.freed.Store(true) }

func (s *FailingStore) full() bool { return !s.freed.Load() && s.commits.Load() >= int64(s.After) }

// Commit implements transport.Store.
func (s *FailingStore) Commit(c *transport.Commit) error {
	if s.full() {
		return s.Err
	}
	s.commits.Add(1)
	return s.Store.Commit(c)
}

// Trim implements transport.Store.
func (s *FailingStore) Trim(ch transport.ChannelID, seq uint64) error {
	if s.full() {
		return s.Err
	}
	return s.Store.Trim(ch, seq)
}

// Acknowledge implements transport.Store.
func (s *FailingStore) Acknowledge(ch transport.ChannelID, seq uint64) error {
	if s.full() {
		return s.Err
	}
	return s.Store.Acknowledge(ch, seq)
}

// DropJob implements transport.Store.
func (s *FailingStore) DropJob(job string) error {
	if s.full() {
		return s.Err
	}
	return s.Store.DropJob(job)
}
