package transport

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		wm, seq uint64
		ended   bool
		want    Verdict
	}{
		{0, 1, false, Apply}, {0, 2, false, Gap}, {5, 6, false, Apply}, {5, 5, false, Duplicate}, {5, 1, false, Duplicate}, {5, 9, false, Gap},
		// After the EOF (batch 5): a resend is still a duplicate, acknowledged
		// and dropped; a new number, next or beyond, is refused.
		{5, 5, true, Duplicate}, {5, 1, true, Duplicate}, {5, 6, true, Ended}, {5, 9, true, Ended},
	}
	for _, c := range cases {
		if got := Check(c.wm, c.seq, c.ended); got != c.want {
			t.Errorf("Check(%d, %d, %v) = %v, want %v", c.wm, c.seq, c.ended, got, c.want)
		}
	}
}

func entries(ch ChannelID, o *Outbox, n int, eof bool) []Entry {
	var outs []Output
	for i := 0; i < n; i++ {
		outs = append(outs, Output{Channel: ch})
	}
	if eof {
		outs = append(outs, Output{Channel: ch, EOF: true})
	}
	out := entriesOf(outs)
	o.number(out)
	return out
}

func TestOutboxNumbersTrimsAndCompletes(t *testing.T) {
	store := NewMemStore()
	o := NewOutbox(store)
	ch := ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	es := entries(ch, o, 3, true)
	for i, e := range es {
		if e.Seq != uint64(i+1) {
			t.Fatalf("entry %d has seq %d", i, e.Seq)
		}
	}
	if err := store.Commit(&Commit{Job: "j", Outputs: es}); err != nil {
		t.Fatal(err)
	}
	o.Publish(es)
	got, err := o.Pending(context.Background(), ch, 1)
	if err != nil || len(got) != 3 || got[0].Seq != 2 {
		t.Fatalf("Pending after 1 = %v, %v", got, err)
	}
	if done, _ := o.Ack(ch, 2); done {
		t.Fatal("done before the EOF was acknowledged")
	}
	if n := store.OutboxLen(ch); n != 2 {
		t.Fatalf("store outbox has %d entries after ack 2, want 2", n)
	}
	if done, _ := o.Ack(ch, 1); done { // a stale ack changes nothing
		t.Fatal("stale ack completed the channel")
	}
	if done, _ := o.Ack(ch, 4); !done {
		t.Fatal("EOF acknowledged but channel not done")
	}
	if st := o.Channels("j"); len(st) != 1 || st[0].Depth != 0 || !st[0].Done || st[0].LastSeq != 4 {
		t.Fatalf("Channels = %+v", st)
	}
}

func TestOutboxDropsEntriesTheReceiverAlreadyHas(t *testing.T) {
	o := NewOutbox(NewMemStore())
	ch := ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	// A restarted sender learns from Hello that the receiver has 1..2.
	if _, err := o.Ack(ch, 2); err != nil {
		t.Fatal(err)
	}
	o.Publish(entries(ch, o, 3, false))
	got, _ := o.Pending(context.Background(), ch, 0)
	if len(got) != 1 || got[0].Seq != 3 {
		t.Fatalf("pending = %+v, want only seq 3", got)
	}
}

func TestOutboxWaitRoomBlocksUntilAck(t *testing.T) {
	o := NewOutbox(NewMemStore())
	ch := ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	o.Publish(entries(ch, o, 4, false))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := o.WaitRoom(ctx, []ChannelID{ch}, 4); err == nil {
		t.Fatal("WaitRoom returned with a full outbox")
	}
	done := make(chan error, 1)
	go func() { done <- o.WaitRoom(context.Background(), []ChannelID{ch}, 4) }()
	if _, err := o.Ack(ch, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitRoom did not return after an ack made room")
	}
	other := ChannelID{Job: "j", Stream: "t", Sender: "a-0", Receiver: "b-0"}
	if err := o.WaitRoom(context.Background(), []ChannelID{other}, 1); err != nil {
		t.Fatal("another channel is not limited by this one's backlog")
	}
}

// TestOutboxCountsAndStalls: every published batch is counted once on its
// channel (rows, encoded bytes), a wait for room is counted with its time
// against its job, and both go with the job.
func TestOutboxCountsAndStalls(t *testing.T) {
	o := NewOutbox(NewMemStore())
	var clock atomic.Int64 // nanoseconds; read by WaitRoom's goroutine too
	o.now = func() time.Time { return time.Unix(0, clock.Load()) }
	ch := ChannelID{Job: "j", Stream: "q1-tokens", Sender: "a-0", Receiver: "b-0"}
	rows := []byte("two rows, as their producer encoded them") // opaque to the channel
	es := entriesOf([]Output{{Channel: ch, Rows: rows, Count: 2}, {Channel: ch, Rows: rows, Count: 2}})
	o.number(es)
	o.Publish(es)
	st := o.Channels("j")[0]
	if st.Batches != 2 || st.Rows != 4 || st.Bytes != 2*int64(len(rows)) {
		t.Errorf("counters %d batches, %d rows, %d bytes", st.Batches, st.Rows, st.Bytes)
	}
	if jobs := o.Jobs(); len(jobs) != 1 || jobs[0] != "j" {
		t.Errorf("jobs %v", jobs)
	}
	done := make(chan error)
	go func() { done <- o.WaitRoom(context.Background(), []ChannelID{ch}, 2) }()
	for deadline := time.Now().Add(10 * time.Second); o.Waiting() == 0; runtime.Gosched() { // until the call is blocked for room
		if time.Now().After(deadline) {
			t.Fatal("WaitRoom never blocked on the full channel")
		}
	}
	clock.Add(int64(time.Millisecond))
	if s := o.Stalled("j"); s.Waits != 1 || s.Waited != time.Millisecond {
		t.Errorf("a wait still blocked: %+v, want it counted with its time so far (1ms)", s)
	}
	clock.Add(int64(time.Millisecond))
	if _, err := o.Ack(ch, 2); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ended := o.Stalled("j")
	if ended.Waits != 1 || ended.Waited != 2*time.Millisecond || o.Waiting() != 0 {
		t.Errorf("stalls %+v, %d waiting; want one wait of 2ms, none waiting", ended, o.Waiting())
	}
	clock.Add(int64(time.Millisecond))
	if s := o.Stalled("j"); s != ended {
		t.Errorf("an ended wait still grows: %+v, then %+v", ended, s)
	}
	if err := o.WaitRoom(context.Background(), []ChannelID{ch}, 2); err != nil || o.Stalled("j").Waits != 1 {
		t.Errorf("a WaitRoom with room counted a stall: %v %+v", err, o.Stalled("j"))
	}
	o.DropJob("j")
	if s := o.Stalled("j"); s.Waits != 0 || len(o.Jobs()) != 0 {
		t.Errorf("after the drop: stalls %+v, jobs %v", s, o.Jobs())
	}
}
