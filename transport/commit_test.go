package transport

import (
	"errors"
	"sync"
	"testing"
)

// flakyStore is a MemStore whose commits fail while fail is set.
type flakyStore struct {
	*MemStore
	fail bool
}

func (s *flakyStore) Commit(c *Commit) error {
	if s.fail {
		return errors.New("disk full")
	}
	return s.MemStore.Commit(c)
}

// recorder is a Publisher that remembers what it was given.
type recorder struct {
	mu        sync.Mutex
	published []Entry
}

func (r *recorder) Publish(es []Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.published = append(r.published, es...)
}

func seqs(es []Entry) []uint64 {
	var out []uint64
	for _, e := range es {
		out = append(out, e.Seq)
	}
	return out
}

// TestCommitterNumbersCommitsPublishesAcks walks the exactly-once step
// through a success, a failed commit, and a success again: the failure
// acknowledges nothing, publishes nothing, moves no watermark and gives its
// numbers back, so the next step numbers from where the store is.
func TestCommitterNumbersCommitsPublishesAcks(t *testing.T) {
	store := &flakyStore{MemStore: NewMemStore()}
	outbox := NewOutbox(store)
	inbox := NewInbox()
	pub := &recorder{}
	c := NewCommitter(store, outbox, inbox, pub)
	in := ChannelID{Job: "j", Stream: "in", Sender: "up-0", Receiver: "me-0"}
	out := ChannelID{Job: "j", Stream: "out", Sender: "me-0", Receiver: "down-0"}
	other := ChannelID{Job: "j", Stream: "out", Sender: "me-0", Receiver: "down-1"}

	var acks []error
	ack := func(err error) { acks = append(acks, err) }
	step := func(inSeq uint64, emit ...ChannelID) *Step {
		s := &Step{Commit: Commit{Job: "j", Inputs: map[ChannelID]uint64{in: inSeq}}, Acks: []func(error){ack}}
		for _, ch := range emit {
			s.Emit = append(s.Emit, Output{Channel: ch})
		}
		return s
	}

	es, err := c.Commit(step(1, out, out, other))
	if err != nil {
		t.Fatal(err)
	}
	if got := seqs(es); len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 1 {
		t.Fatalf("numbered %v, want [1 2 1]", got)
	}
	if len(acks) != 1 || acks[0] != nil || inbox.Watermark(in) != 1 || len(pub.published) != 3 {
		t.Fatalf("after a commit: acks %v, watermark %d, published %d", acks, inbox.Watermark(in), len(pub.published))
	}

	store.fail = true
	if _, err := c.Commit(step(2, out, other)); err == nil {
		t.Fatal("a failed store commit was reported as done")
	}
	if len(acks) != 2 || acks[1] == nil {
		t.Fatalf("the failed step's ack got %v, want its error", acks)
	}
	if inbox.Watermark(in) != 1 || len(pub.published) != 3 {
		t.Fatalf("after a failed commit: watermark %d, published %d", inbox.Watermark(in), len(pub.published))
	}

	store.fail = false
	es, err = c.Commit(step(2, out, other))
	if err != nil {
		t.Fatal(err)
	}
	if got := seqs(es); got[0] != 3 || got[1] != 2 {
		t.Fatalf("after the failure numbered %v, want [3 2]: no gap", got)
	}
	img, _ := store.Load()
	if got := seqs(img.Jobs["j"].Outbox[out]); len(got) != 3 || got[2] != 3 {
		t.Fatalf("store holds %v for %s, want [1 2 3]", got, out)
	}
	if inbox.Watermark(in) != 2 {
		t.Fatalf("watermark %d, want 2", inbox.Watermark(in))
	}
}

// TestCommitterRestore: after a restart the Committer numbers on from the
// store's highest committed number and knows the durable watermarks.
func TestCommitterRestore(t *testing.T) {
	store := NewMemStore()
	c := NewCommitter(store, NewOutbox(store), NewInbox(), nil)
	in := ChannelID{Job: "j", Stream: "in", Sender: "up-0", Receiver: "me-0"}
	out := ChannelID{Job: "j", Stream: "out", Sender: "me-0", Receiver: "down-0"}
	for i := uint64(1); i <= 3; i++ {
		if _, err := c.Commit(&Step{Commit: Commit{Job: "j", Inputs: map[ChannelID]uint64{in: i}}, Emit: []Output{{Channel: out}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Trim(out, 2); err != nil {
		t.Fatal(err)
	}
	img, _ := store.Load()
	restarted := NewCommitter(store, NewOutbox(store), NewInbox(), nil)
	resume := restarted.Restore(img)
	if len(resume) != 1 || resume[0] != out {
		t.Fatalf("resume %v, want [%s]", resume, out)
	}
	if wm := restarted.Inbox().Watermark(in); wm != 3 {
		t.Fatalf("restored watermark %d, want 3", wm)
	}
	es, err := restarted.Commit(&Step{Commit: Commit{Job: "j"}, Emit: []Output{{Channel: out, EOF: true}}})
	if err != nil || len(es) != 1 || es[0].Seq != 4 || !es[0].EOF {
		t.Fatalf("first commit after the restart: %+v, %v; want EOF at 4", es, err)
	}
}

// TestCommitterEndsChannels: a step that applies a channel's EOF ends it
// in the Inbox only once its commit is durable, in the same commit as the
// watermark, and a restart from the store finds it ended again. An ended
// channel refuses every new number and still takes resends as duplicates;
// a channel that did not end is untouched.
func TestCommitterEndsChannels(t *testing.T) {
	store := &flakyStore{MemStore: NewMemStore()}
	c := NewCommitter(store, NewOutbox(store), NewInbox(), nil)
	in := ChannelID{Job: "j", Stream: "in", Sender: "up-0", Receiver: "me-0"}
	open := ChannelID{Job: "j", Stream: "in", Sender: "up-1", Receiver: "me-0"}
	if _, err := c.Commit(&Step{Commit: Commit{Job: "j", Inputs: map[ChannelID]uint64{in: 1, open: 1}}}); err != nil {
		t.Fatal(err)
	}
	eof := &Step{Commit: Commit{Job: "j", Inputs: map[ChannelID]uint64{in: 2}}, Ended: []ChannelID{in}}
	store.fail = true
	if _, err := c.Commit(eof); err == nil {
		t.Fatal("a failed commit was reported as done")
	}
	if v := c.Inbox().Check(in, 2); v != Apply {
		t.Fatalf("after a failed EOF commit, batch 2 is %v, want Apply", v)
	}
	store.fail = false
	if _, err := c.Commit(eof); err != nil {
		t.Fatal(err)
	}
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if img.Jobs["j"].Records[EndedRecord(in)] == nil || img.Jobs["j"].Records[EndedRecord(open)] != nil {
		t.Fatalf("records after the EOF commit: %v", img.Jobs["j"].Records)
	}
	restarted := NewCommitter(store, NewOutbox(store), NewInbox(), nil)
	restarted.Restore(img)
	for _, cm := range []*Committer{c, restarted} {
		for _, tc := range []struct {
			ch   ChannelID
			seq  uint64
			want Verdict
		}{
			{in, 1, Duplicate}, {in, 2, Duplicate}, {in, 3, Ended}, {in, 7, Ended},
			{open, 1, Duplicate}, {open, 2, Apply}, {open, 4, Gap},
		} {
			if got := cm.Inbox().Check(tc.ch, tc.seq); got != tc.want {
				t.Errorf("restarted %v: %s batch %d is %v, want %v", cm == restarted, tc.ch, tc.seq, got, tc.want)
			}
		}
	}
	c.Inbox().DropJob("j")
	if got := c.Inbox().Check(in, 1); got != Apply {
		t.Errorf("after DropJob batch 1 is %v, want Apply", got)
	}
}
