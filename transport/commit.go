package transport

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Output is one batch an application step emits on a channel, before it has
// a sequence number: the Committer numbers it.
type Output struct {
	Channel ChannelID
	EOF     bool
	// Rows are the batch's rows, encoded by the producer (the stage
	// emitter, the gateway's ingest) once, sized to fit; nil for an EOF
	// without rows. From here on (the store, the Sender, the receiver's
	// journal) they are these bytes, never encoded again.
	Rows []byte
	// Count is the rows Rows holds, for the counters of Status and the
	// metrics.
	Count int
}

// Step is one application step as its caller describes it: the input
// watermarks it advances, the state change and records it writes (the
// embedded Commit, whose Outputs the Committer fills), the batches it emits,
// and the acknowledgements owed once it is durable.
type Step struct {
	Commit
	// Emit are the step's output batches, in emission order.
	Emit []Output
	// Ended are the input channels whose EOF the step applies: the commit
	// records them (EndedRecord) with the watermarks, and from then on the
	// Inbox has any new number on them refused (Check: Ended).
	Ended []ChannelID
	// Acks are called once the step is settled: with nil after the commit,
	// with the commit's error if it failed.
	Acks []func(error)
}

// Publisher makes committed entries visible to the links that send them.
// The Sender is the real one; an Outbox alone (no links) serves tests.
type Publisher interface {
	Publish(entries []Entry)
}

// Committer is the exactly-once step of every process, in one place. For
// each step it
//
//  1. numbers the step's output batches, per channel, after the last number
//     handed out;
//  2. writes the input watermarks, the ended inputs, the state change, the
//     records and the numbered outputs in one Store.Commit;
//  3. on success, advances the Inbox watermarks (and ends the ended
//     inputs), publishes the outputs to the senders and acknowledges the
//     inputs, in that order;
//  4. on failure, gives the numbers back, so that the next step numbers
//     from where the store is, and refuses the acknowledgements.
//
// Never acknowledge before the write is durable; never let a number be
// handed out that the store does not hold. Steps that emit on the same
// channel must not run concurrently (one actor per job emits, and each
// upload owns its file's channels); steps of different jobs may, and may
// share the store's syncs.
type Committer struct {
	store  Store
	outbox *Outbox
	inbox  *Inbox
	pub    Publisher
}

// NewCommitter returns the Committer of a process. pub is normally the
// process's Sender; nil publishes to the outbox alone.
func NewCommitter(store Store, outbox *Outbox, inbox *Inbox, pub Publisher) *Committer {
	if pub == nil {
		pub = outbox
	}
	return &Committer{store: store, outbox: outbox, inbox: inbox, pub: pub}
}

// Outbox is the outbox the Committer numbers from, for flow control and
// Status.
func (c *Committer) Outbox() *Outbox { return c.outbox }

// Inbox is the receiver watermarks the Committer advances.
func (c *Committer) Inbox() *Inbox { return c.inbox }

// Store is the store the Committer writes to.
func (c *Committer) Store() Store { return c.store }

// Commit carries out one step (see Committer) and returns its numbered
// entries. s.Outputs must be empty: the outputs are s.Emit.
func (c *Committer) Commit(s *Step) ([]Entry, error) {
	if len(s.Outputs) > 0 {
		panic("transport: Step.Outputs is filled by the Committer; emit through Step.Emit")
	}
	entries := entriesOf(s.Emit)
	c.outbox.number(entries)
	cm := s.Commit
	cm.Outputs = entries
	if len(s.Ended) > 0 {
		cm.Records = maps.Clone(cm.Records)
		if cm.Records == nil {
			cm.Records = map[string][]byte{}
		}
		for _, ch := range s.Ended {
			cm.Records[EndedRecord(ch)] = []byte{1}
		}
	}
	err := c.store.Commit(&cm)
	if err != nil {
		c.outbox.giveBack(entries)
		err = fmt.Errorf("commit %d inputs, %d outputs of job %s: %w", len(s.Inputs), len(s.Emit), s.Job, err)
	} else {
		c.inbox.advance(s.Inputs)
		c.inbox.end(s.Ended)
		c.pub.Publish(entries)
	}
	for _, ack := range s.Acks {
		ack(err)
	}
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// entriesOf makes a step's outputs entries, not yet numbered.
func entriesOf(outputs []Output) []Entry {
	if len(outputs) == 0 {
		return nil
	}
	entries := make([]Entry, len(outputs))
	for i, out := range outputs {
		entries[i] = Entry{Channel: out.Channel, EOF: out.EOF, Rows: out.Rows, Count: out.Count}
	}
	return entries
}

// Restore puts a store's image back after a restart: the inbox watermarks
// and ended inputs, and the outbox's numbering and unacknowledged entries.
// It returns the channels that still have something to send, for the
// Sender to resume.
func (c *Committer) Restore(img *Image) []ChannelID {
	var resume []ChannelID
	for _, ji := range img.Jobs {
		c.inbox.advance(ji.Watermarks)
		var ended []ChannelID
		for ch := range ji.Watermarks { // an ended channel has applied its EOF, so it has a watermark
			if ji.Records[EndedRecord(ch)] != nil {
				ended = append(ended, ch)
			}
		}
		c.inbox.end(ended)
		for ch, reserved := range ji.Reserved {
			if c.outbox.Restore(ch, reserved, ji.Acked[ch], ji.Outbox[ch]) {
				resume = append(resume, ch)
			}
		}
	}
	return resume
}

// Inbox holds a process's receiver watermarks: per input channel, the last
// sequence number whose application is durable, and whether that was the
// channel's EOF. Only the Committer moves them, after the commit that
// applied the batches; a receiver checks an arriving batch against them
// (Check).
type Inbox struct {
	mu    sync.Mutex
	marks map[string]map[ChannelID]uint64 // by job
	ended map[string]map[ChannelID]bool   // by job: EOF applied
}

// NewInbox returns an empty inbox: every watermark 0, no channel ended.
func NewInbox() *Inbox {
	return &Inbox{marks: map[string]map[ChannelID]uint64{}, ended: map[string]map[ChannelID]bool{}}
}

// Watermark is the channel's durable watermark.
func (in *Inbox) Watermark(ch ChannelID) uint64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.marks[ch.Job][ch]
}

// State is the channel's durable watermark and whether its EOF is applied.
func (in *Inbox) State(ch ChannelID) (watermark uint64, ended bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.marks[ch.Job][ch], in.ended[ch.Job][ch]
}

// Check decides what to do with batch seq of channel ch (see Check).
func (in *Inbox) Check(ch ChannelID, seq uint64) Verdict {
	wm, ended := in.State(ch)
	return Check(wm, seq, ended)
}

// end marks channels ended: their EOF is applied.
func (in *Inbox) end(channels []ChannelID) {
	if len(channels) == 0 {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, ch := range channels {
		job := in.ended[ch.Job]
		if job == nil {
			job = map[ChannelID]bool{}
			in.ended[ch.Job] = job
		}
		job[ch] = true
	}
}

// advance raises watermarks (never lowers one).
func (in *Inbox) advance(marks map[ChannelID]uint64) {
	if len(marks) == 0 {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for ch, seq := range marks {
		job := in.marks[ch.Job]
		if job == nil {
			job = map[ChannelID]uint64{}
			in.marks[ch.Job] = job
		}
		job[ch] = max(job[ch], seq)
	}
}

// Marks returns a copy of a job's watermarks.
func (in *Inbox) Marks(job string) map[ChannelID]uint64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return maps.Clone(in.marks[job])
}

// Jobs lists the jobs the inbox holds watermarks of.
func (in *Inbox) Jobs() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Sorted(maps.Keys(in.marks))
}

// DropJob forgets a job's watermarks and ended channels.
func (in *Inbox) DropJob(job string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.marks, job)
	delete(in.ended, job)
}
