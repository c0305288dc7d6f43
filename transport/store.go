package transport

import (
	"maps"
	"sync"
)

// Commit is everything one applied batch changes, written atomically.
type Commit struct {
	// Job is the job the commit belongs to.
	Job string
	// Input is the channel whose batch was applied, and Seq its sequence
	// number: the channel's new inbox watermark. Input is zero for a commit
	// that applies no channel input (the gateway's upload).
	Input ChannelID
	Seq   uint64
	// Outputs are the batches the application emitted, already numbered;
	// they join the outbox.
	Outputs []Entry
	// Records are small per-job values replaced whole (upload offsets,
	// results, "finished" markers).
	Records map[string][]byte
	// State is the operator's state change, logged so that the operator can
	// be rebuilt by replay after a restart. Nil when the operator keeps none.
	State []byte
}

// Store is the local store a process commits through. Implementations must
// make Commit atomic (all or nothing) and durable before it returns: only
// then is the input acknowledged.
type Store interface {
	// Commit writes one applied batch.
	Commit(c *Commit) error
	// Trim drops a channel's outbox entries up to seq: they are acknowledged.
	Trim(ch ChannelID, seq uint64) error
	// DropJob deletes everything of a job.
	DropJob(job string) error
	// NextIncarnation returns a number greater than any it returned before,
	// across restarts.
	NextIncarnation() (uint64, error)
	// Close releases the store.
	Close() error
}

// MemStore is a Store kept in memory: atomic, not durable. It is what the
// embedded demo runs on and the model the durable store must match.
type MemStore struct {
	mu          sync.Mutex
	incarnation uint64
	watermarks  map[ChannelID]uint64
	outbox      map[ChannelID][]Entry
	records     map[string]map[string][]byte
	state       map[string][][]byte
	commits     int64
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{
		watermarks: map[ChannelID]uint64{},
		outbox:     map[ChannelID][]Entry{},
		records:    map[string]map[string][]byte{},
		state:      map[string][][]byte{},
	}
}

// Commit applies c atomically.
func (s *MemStore) Commit(c *Commit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commits++
	if c.Input != (ChannelID{}) {
		s.watermarks[c.Input] = c.Seq
	}
	for _, e := range c.Outputs {
		s.outbox[e.Channel] = append(s.outbox[e.Channel], e)
	}
	if len(c.Records) > 0 {
		r := s.records[c.Job]
		if r == nil {
			r = map[string][]byte{}
			s.records[c.Job] = r
		}
		maps.Copy(r, c.Records)
	}
	if c.State != nil {
		s.state[c.Job] = append(s.state[c.Job], c.State)
	}
	return nil
}

// Trim drops acknowledged entries.
func (s *MemStore) Trim(ch ChannelID, seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.outbox[ch]
	i := 0
	for i < len(q) && q[i].Seq <= seq {
		i++
	}
	if i == len(q) {
		delete(s.outbox, ch)
	} else {
		s.outbox[ch] = q[i:]
	}
	return nil
}

// DropJob deletes a job.
func (s *MemStore) DropJob(job string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.watermarks {
		if ch.Job == job {
			delete(s.watermarks, ch)
		}
	}
	for ch := range s.outbox {
		if ch.Job == job {
			delete(s.outbox, ch)
		}
	}
	delete(s.records, job)
	delete(s.state, job)
	return nil
}

// NextIncarnation counts up.
func (s *MemStore) NextIncarnation() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.incarnation++
	return s.incarnation, nil
}

// Close does nothing.
func (s *MemStore) Close() error { return nil }

// Watermark returns a channel's committed watermark.
func (s *MemStore) Watermark(ch ChannelID) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.watermarks[ch]
}

// OutboxLen returns the number of committed, unacknowledged entries of a channel.
func (s *MemStore) OutboxLen(ch ChannelID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.outbox[ch])
}

// Record returns a committed record.
func (s *MemStore) Record(job, key string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.records[job][key]
}

// Commits returns the number of commits so far.
func (s *MemStore) Commits() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commits
}
