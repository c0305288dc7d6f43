package driver

import (
	"sync"

	"github.com/wololo/wololo/election"
)

// TermStore keeps the one number a master must not forget: the highest
// term it has acknowledged or claimed (election.Output.Persist). The
// Elector calls Load once, in New, and Save before it sends any message
// that depends on the term; Save must be durable when it returns, and an
// error from it stops the Elector (a master that cannot keep its promises
// must not make more).
type TermStore interface {
	// Load returns the saved term, 0 if none was ever saved.
	Load() (election.Term, error)
	// Save replaces the saved term, durably.
	Save(term election.Term) error
}

// MemTermStore is a TermStore in memory: for tests, and for a master run
// without a data directory (a restart then forgets its promises). It is
// safe for concurrent use.
type MemTermStore struct {
	mu    sync.Mutex
	term  election.Term
	saves int
}

// NewMemTermStore returns a store holding term.
func NewMemTermStore(term election.Term) *MemTermStore { return &MemTermStore{term: term} }

// Load implements TermStore.
func (s *MemTermStore) Load() (election.Term, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.term, nil
}

// Save implements TermStore.
func (s *MemTermStore) Save(term election.Term) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.term = term
	s.saves++
	return nil
}

// Saves counts the calls to Save.
func (s *MemTermStore) Saves() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves
}
