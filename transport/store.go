package transport

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Commit is everything one application step changes, written atomically:
// the inbox watermarks of the batches applied, the batches they emitted,
// the records they replaced and the operator's state change.
type Commit struct {
	// Job is the job the commit belongs to.
	Job string
	// Inputs are the new inbox watermarks of the channels whose batches
	// were applied (several when the runtime groups batches into one
	// commit). Empty for a commit that applies no channel input (the
	// gateway's upload).
	Inputs map[ChannelID]uint64
	// Outputs are the batches the application emitted, already numbered;
	// they join the outbox.
	Outputs []Entry
	// Records are small per-job values replaced whole (upload offsets,
	// results, "finished" markers).
	Records map[string][]byte
	// State is the operator's state change, appended to the job's state log
	// so that the operator can be rebuilt by replay after a restart. Nil
	// when there is none.
	State []byte
	// ResetState clears the job's state log before State is appended: State
	// is then a snapshot that replaces everything logged before it (or,
	// when nil, the log is simply dropped).
	ResetState bool
}

// Store is the local store a process commits through. Implementations must
// make Commit atomic (all or nothing) and durable before it returns: only
// then is the input acknowledged. Methods are safe for concurrent use;
// concurrent Commits may share one sync (group commit).
type Store interface {
	// Commit writes one application step.
	Commit(c *Commit) error
	// Trim drops a channel's outbox entries up to seq (they are
	// acknowledged), those an Acknowledge kept included, and records seq as
	// the channel's acked mark (the mark only grows: a lower seq changes
	// nothing). It need not be durable at once: a lost trim only causes a
	// resend, which the receiver drops.
	Trim(ch ChannelID, seq uint64) error
	// Acknowledge records seq as the channel's acked mark, as Trim does (the
	// mark only grows: a lower seq changes nothing), but keeps the channel's
	// entries: Load leaves out every entry at or below the acked mark, and
	// ReadOutbox still reads them, until a Trim drops them or DropJob the job.
	// A process that may have to send a channel's batches again from the
	// start (the gateway, to a shard rebuilt from nothing) acknowledges
	// instead of trimming. Like Trim it need not be durable at once: a lost
	// acknowledgement only causes a resend, which the receiver drops.
	Acknowledge(ch ChannelID, seq uint64) error
	// DropJob deletes everything of a job and remembers that it was dropped
	// (Load reports it), so a late stream for it can be refused.
	DropJob(job string) error
	// NextIncarnation returns a number greater than any it returned before,
	// across restarts, and at least atLeast (the start's clock,
	// ClockIncarnation): transport.NextIncarnation of the last one and
	// atLeast. It is durable before it returns.
	NextIncarnation(atLeast uint64) (uint64, error)
	// Load returns everything committed and not dropped, for recovery at
	// start-up, but the state logs (JobImage.State is nil: ReadState
	// reads those, an entry at a time) and the outbox entries at or below
	// their channel's acked mark (ReadOutbox reads those).
	Load() (*Image, error)
	// ReadState hands each the entries of a job's state log, in commit
	// order from the last reset, one at a time, reading each as it goes:
	// what it holds at once is one entry (and what the store reads it
	// with), however long the log. An entry's bytes are the caller's:
	// the store neither reuses nor changes them once handed over, so
	// each may keep them, and write to them, without a copy (a restarted
	// runtime's operator keeps much of the snapshot it restores from).
	// An error of each stops the reading and is returned as is. A job the store does not hold has no entries. The
	// caller commits nothing to the job meanwhile (a restarted runtime
	// reads a job's log before it takes its batches).
	ReadState(job string, each func(entry []byte) error) error
	// ReadOutbox hands each, in seq order and one at a time, the channel's
	// entries with a sequence number at or above from that are not trimmed,
	// acknowledged or not (reading each as it goes: what it holds at once is
	// one entry, however many there are). An entry's Rows are the caller's
	// (not reused by the store). An error of each stops the reading and is
	// returned as is. A channel or job the store does not hold has no entries.
	ReadOutbox(ch ChannelID, from uint64, each func(Entry) error) error
	// Stats returns counters, for Status and benchmarks.
	Stats() StoreStats
	// Close releases the store.
	Close() error
}

// Image is a store's content as Load returns it.
type Image struct {
	Jobs    map[string]*JobImage
	Dropped []string // jobs dropped with DropJob, sorted
}

// JobImage is one job's committed state.
type JobImage struct {
	// Watermarks are the inbox watermarks: the last sequence number applied
	// per input channel.
	Watermarks map[ChannelID]uint64
	// Reserved is, per output channel, the highest sequence number ever
	// committed (acknowledged entries included): numbering goes on from it.
	Reserved map[ChannelID]uint64
	// Acked is, per output channel, the highest sequence number trimmed
	// or acknowledged.
	Acked map[ChannelID]uint64
	// Outbox holds the committed entries above the acked mark per output
	// channel, in sequence order; a channel without any has no key. The
	// entries at or below it that Acknowledge kept, or that were
	// committed at or below it, are left out: Store.ReadOutbox reads
	// them.
	Outbox map[ChannelID][]Entry
	// Records are the job's records.
	Records map[string][]byte
	// State is the state log in commit order, starting at the last reset,
	// as LoadAll reads it; Load leaves it nil (a log can outgrow memory:
	// Store.ReadState reads it an entry at a time).
	State [][]byte
}

// StoreStats are a store's counters since it was opened.
type StoreStats struct {
	Commits int64 // Commit calls that succeeded
	Bytes   int64 // bytes those commits wrote (keys and values)
	Syncs   int64 // syncs to stable storage, where the store can tell; else Commits
}

func newJobImage() *JobImage {
	return &JobImage{
		Watermarks: map[ChannelID]uint64{},
		Reserved:   map[ChannelID]uint64{},
		Acked:      map[ChannelID]uint64{},
		Outbox:     map[ChannelID][]Entry{},
		Records:    map[string][]byte{},
	}
}

// MemStore is a Store kept in memory: atomic, not durable. It is what the
// embedded demo runs on and the model the durable store must match.
type MemStore struct {
	mu          sync.Mutex
	incarnation uint64
	jobs        map[string]*JobImage
	dropped     map[string]bool
	stats       StoreStats
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{jobs: map[string]*JobImage{}, dropped: map[string]bool{}}
}

func (s *MemStore) jobLocked(job string) *JobImage {
	j := s.jobs[job]
	if j == nil {
		j = newJobImage()
		s.jobs[job] = j
	}
	return j
}

// Commit applies c atomically.
func (s *MemStore) Commit(c *Commit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Commits++
	s.stats.Syncs++
	j := s.jobLocked(c.Job)
	maps.Copy(j.Watermarks, c.Inputs)
	for _, e := range c.Outputs {
		j.Outbox[e.Channel] = append(j.Outbox[e.Channel], e)
		j.Reserved[e.Channel] = max(j.Reserved[e.Channel], e.Seq)
	}
	maps.Copy(j.Records, c.Records)
	if c.ResetState {
		j.State = nil
	}
	if c.State != nil {
		j.State = append(j.State, slices.Clone(c.State))
	}
	return nil
}

// Trim drops acknowledged entries and raises the acked mark.
func (s *MemStore) Trim(ch ChannelID, seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[ch.Job]
	if !ok {
		return nil
	}
	q := slices.DeleteFunc(j.Outbox[ch], func(e Entry) bool { return e.Seq <= seq })
	if len(q) == 0 {
		delete(j.Outbox, ch)
	} else {
		j.Outbox[ch] = q
	}
	j.Acked[ch] = max(j.Acked[ch], seq)
	return nil
}

// Acknowledge raises the acked mark and keeps the entries (j.Outbox holds
// every untrimmed entry; Load leaves out those at or below the mark).
func (s *MemStore) Acknowledge(ch ChannelID, seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[ch.Job]; ok {
		j.Acked[ch] = max(j.Acked[ch], seq)
	}
	return nil
}

// DropJob deletes a job and remembers it.
func (s *MemStore) DropJob(job string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.jobs, job)
	s.dropped[job] = true
	return nil
}

// NextIncarnation counts up from the last one, or from atLeast if higher.
func (s *MemStore) NextIncarnation(atLeast uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := NextIncarnation(s.incarnation, atLeast)
	if err != nil {
		return 0, fmt.Errorf("memstore: next incarnation: %w", err)
	}
	s.incarnation = n
	return n, nil
}

// Load returns a deep copy of the content.
func (s *MemStore) Load() (*Image, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	img := &Image{Jobs: map[string]*JobImage{}}
	for id, j := range s.jobs {
		c := newJobImage()
		maps.Copy(c.Watermarks, j.Watermarks)
		maps.Copy(c.Reserved, j.Reserved)
		maps.Copy(c.Acked, j.Acked)
		for ch, q := range j.Outbox {
			above := slices.DeleteFunc(slices.Clone(q), func(e Entry) bool { return e.Seq <= j.Acked[ch] })
			if len(above) > 0 {
				c.Outbox[ch] = above
			}
		}
		maps.Copy(c.Records, j.Records)
		img.Jobs[id] = c
	}
	for id := range s.dropped {
		img.Dropped = append(img.Dropped, id)
	}
	slices.Sort(img.Dropped)
	return img, nil
}

// ReadState hands each the job's state entries, each a copy of the one
// the store keeps in memory: the caller may write to what it is given.
func (s *MemStore) ReadState(job string, each func([]byte) error) error {
	s.mu.Lock()
	var log [][]byte
	if j := s.jobs[job]; j != nil {
		log = j.State // entries are never changed, the slice only appended to or replaced
	}
	s.mu.Unlock()
	for _, e := range log {
		if err := each(bytes.Clone(e)); err != nil {
			return err
		}
	}
	return nil
}

// ReadOutbox hands each the channel's untrimmed entries from from on, in
// seq order (those committed under one seq in commit order), each with a
// copy of the rows the store keeps: the caller may write to them.
func (s *MemStore) ReadOutbox(ch ChannelID, from uint64, each func(Entry) error) error {
	s.mu.Lock()
	var q []Entry
	if j := s.jobs[ch.Job]; j != nil {
		for _, e := range j.Outbox[ch] {
			if e.Seq >= from {
				q = append(q, e)
			}
		}
	}
	s.mu.Unlock()
	slices.SortStableFunc(q, func(a, b Entry) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, e := range q {
		e.Rows = bytes.Clone(e.Rows)
		if err := each(e); err != nil {
			return err
		}
	}
	return nil
}

// Stats returns the counters.
func (s *MemStore) Stats() StoreStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Close does nothing.
func (s *MemStore) Close() error { return nil }

// Watermark returns a channel's committed inbox watermark.
func (s *MemStore) Watermark(ch ChannelID) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[ch.Job]; ok {
		return j.Watermarks[ch]
	}
	return 0
}

// OutboxLen returns the number of committed, untrimmed entries of a
// channel, acknowledged ones included.
func (s *MemStore) OutboxLen(ch ChannelID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[ch.Job]; ok {
		return len(j.Outbox[ch])
	}
	return 0
}
