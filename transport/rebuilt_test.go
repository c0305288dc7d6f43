package transport_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// committed commits entries from..to of ch to store, each with one byte of
// rows (its seq), and publishes them through s: a step's output, as the
// Committer writes and publishes it.
func committed(t *testing.T, store transport.Store, s *transport.Sender, ch transport.ChannelID, from, to uint64, eof bool) {
	t.Helper()
	es := entries(ch, from, to, eof)
	for i := range es {
		es[i].Rows, es[i].Count = []byte{byte(es[i].Seq)}, 1
	}
	if err := store.Commit(&transport.Commit{Job: ch.Job, Outputs: es}); err != nil {
		t.Fatal(err)
	}
	s.Publish(es)
}

// gated is a receiver that applies nothing until its gate opens.
type gated struct {
	*receiver
	gate chan struct{}
}

func (g gated) Deliver(ctx context.Context, ch transport.ChannelID, b *wololov1.Batch, done func(error)) error {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.receiver.Deliver(ctx, ch, b, done)
}

// TestRebuiltReceiverIsSentItsChannelAgain: an outbox that retains a job
// (Retain) keeps its acknowledged batches in its store, out of memory and
// of Load. When the receiver comes back with nothing and the process,
// told of the loss, rewinds the receiver's channels (Sender.Rewind, from
// the link's own report), the link goes on: it sends the channel again
// from batch 1, read back from the store, then what was not yet sent, and
// the receiver applies each batch once, in order. While it catches up,
// the batches committed meanwhile wait in the store too, taking no room
// (what feeds the channel goes on). Released, the batches are gone from
// the store; without retaining, a channel cannot be rewound.
func TestRebuiltReceiverIsSentItsChannelAgain(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	network := testkit.NewBufNet(t)
	srv := serveAs(t, network, newReceiver(), 1)
	store := transport.NewMemStore()
	o, s := startSenderOn(t, ctx, network, store, 1)
	o.Retain("j")
	ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	rewound := make(chan error, 4)
	s.OnFailed(func(_ context.Context, failed transport.ChannelID, err error) {
		if !errors.Is(err, transport.ErrStateLost) || transport.LostInstance(err) != "b-0" {
			rewound <- err
			return
		}
		_, rerr := s.Rewind(failed.Job, failed.Receiver) // on the failing link's goroutine, as the gateway does
		rewound <- rerr
	})
	committed(t, store, s, ch, 1, 20, false)
	waitAcked(t, o, "j", 20)
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if ji := img.Jobs["j"]; len(ji.Outbox[ch]) != 0 || ji.Acked[ch] != 20 {
		t.Fatalf("after the acknowledgements Load holds %d entries, acked %d; want none, 20", len(ji.Outbox[ch]), ji.Acked[ch])
	}

	srv.Stop()
	wiped := newReceiver()
	gate := make(chan struct{})
	serveAs(t, network, gated{wiped, gate}, 2)
	committed(t, store, s, ch, 21, 22, false)
	select {
	case err := <-rewound:
		if err != nil {
			t.Fatalf("the loss was reported as %v, or could not be rewound", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the loss was never reported")
	}
	committed(t, store, s, ch, 23, 60, false)
	if !o.HasRoom([]transport.ChannelID{ch}, 4) {
		t.Fatalf("the channel catching up holds its new batches in memory: %+v", o.Channels("j"))
	}
	if cs := o.Channels("j"); len(cs) != 1 || cs[0].Depth != 60 {
		t.Fatalf("channel while the receiver catches up: %+v, want 60 batches to send", cs)
	}
	close(gate)
	committed(t, store, s, ch, 61, 61, true)
	waitEOF(t, wiped)
	checkExactlyOnce(t, wiped, 61)
	s.Wait() // the link ends with the channel complete
	if len(rewound) != 0 {
		t.Fatalf("more reports: %v", <-rewound)
	}

	if err := o.Release("j"); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := store.ReadOutbox(ch, 1, func(transport.Entry) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("after the release the store holds %d batches (%v), want none", n, err)
	}

	plain := transport.NewOutbox(transport.NewMemStore())
	if _, err := plain.Rewind("j", "b-0"); err == nil {
		t.Fatal("an outbox that does not retain rewound a channel")
	}
}

// serveVouching serves h as receiver b-0 like serveAs, its Server
// vouching for a rebuilt a-0 on job j (VouchFor).
func serveVouching(t *testing.T, n *testkit.BufNet, h transport.Handler, incarnation uint64) {
	t.Helper()
	s := grpc.NewServer(grpc.WaitForHandlers(true))
	srv := transport.NewServer("b-0", incarnation, h, nil)
	srv.VouchFor(func(ch transport.ChannelID) bool { return ch.Job == "j" && ch.Sender == "a-0" })
	wololov1.RegisterStageServiceServer(s, srv)
	go s.Serve(n.Listen(receiverAddr))
	t.Cleanup(s.Stop)
}

// TestHelloVouchesForARebuiltSender: a sender rebuilt from nothing
// numbers its batches from 1 again, the same ones its lost store had
// sent. Its receiver, which applied up to 7 and vouches for it
// (Server.VouchFor), takes 8 and 9 and nothing twice, where
// without the vouching the sender reports its own state lost
// (TestSenderThatLostItsStateIsReported); and once the receiver holds the
// channel's EOF the rebuilt sender's link ends as soon as it numbers it.
func TestHelloVouchesForARebuiltSender(t *testing.T) {
	ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	for _, c := range []struct {
		name    string
		applied uint64 // by the receiver before
		ended   bool
		want    []uint64
	}{
		{"behind", 7, false, []uint64{8, 9}},
		{"ended", 9, true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := newReceiver()
			r.watermarks[ch], r.ended[ch] = c.applied, c.ended
			network := testkit.NewBufNet(t)
			serveVouching(t, network, r, 1)
			store := transport.NewMemStore()
			o, s := startSenderOn(t, ctx, network, store, 2)
			lost := watchLost(s)
			// The receiver's Hello comes while the sender has numbered
			// only its first batches, below the receiver's watermark.
			committed(t, store, s, ch, 1, 2, false)
			if !testkit.Await(10*time.Second, func() bool { cs := o.Channels("j"); return len(cs) == 1 && cs[0].Acked >= c.applied }) {
				t.Fatalf("the receiver's Hello was not taken: %+v, %d reports", o.Channels("j"), lost.count())
			}
			committed(t, store, s, ch, 3, 9, true)
			done := make(chan struct{})
			go func() { s.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("the rebuilt sender's link did not end: %+v", o.Channels("j"))
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if lost.count() != 0 || r.duplicates != 0 || len(r.applied) != len(c.want) {
				t.Fatalf("%d reports, %d duplicates, applied %v; want none, none, %v", lost.count(), r.duplicates, r.applied, c.want)
			}
			for i, seq := range c.want {
				if r.applied[i] != seq {
					t.Fatalf("applied %v, want %v", r.applied, c.want)
				}
			}
		})
	}
}

// TestRestartedSenderChecksItsRetainedChannels: a process restarted with
// a retained job whose channel was complete runs no link on it; its
// receiver, behind what the store says it acknowledged (it was being sent
// the channel again when the process stopped), would wait for ever.
// Checking the retained channels (Sender.Check) finds it and reports the
// loss.
func TestRestartedSenderChecksItsRetainedChannels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	network := testkit.NewBufNet(t)
	kept := newReceiver()
	srv := serveAs(t, network, kept, 1)
	store := transport.NewMemStore()
	o, s := startSenderOn(t, ctx, network, store, 1)
	o.Retain("j")
	ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	committed(t, store, s, ch, 1, 5, true)
	waitEOF(t, kept)
	s.Wait()

	// The receiver behind; the sender restarted on its store.
	srv.Stop()
	serveAs(t, network, newReceiver(), 2)
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	o2, s2 := startSenderOn(t, ctx, network, store, 2)
	o2.Retain("j")
	lost := watchLost(s2)
	if work := transport.NewCommitter(store, o2, transport.NewInbox(), nil).Restore(img); len(work) != 0 {
		t.Fatalf("the restored outbox has work on %v; the channel was complete", work)
	}
	if got := o2.RetainedChannels(); len(got) != 1 || got[0] != ch {
		t.Fatalf("retained channels %v, want %v", got, ch)
	}
	s2.Check(o2.RetainedChannels())
	if err := lost.wait(t, 10*time.Second); !errors.Is(err, transport.ErrStateLost) || !strings.Contains(err.Error(), "b-0 is at batch 0") || !strings.Contains(err.Error(), "acknowledged batch 5") {
		t.Fatalf("reported %v", err)
	}
}

// TestRewoundReceiverIsToldCaughtUp: once a rewound receiver has
// acknowledged again every batch its channels had committed when they
// were rewound (the second channel's too), the outbox says so, once; not
// before, and the batches committed after the rewind do not hold it back.
// A receiver that had been sent nothing is not told of; one whose job
// ends before its acknowledgements come is told as they come.
func TestRewoundReceiverIsToldCaughtUp(t *testing.T) {
	store := transport.NewMemStore()
	o := transport.NewOutbox(store)
	var told []string
	o.NotifyCaughtUp(func(job, receiver string) { told = append(told, job+"/"+receiver) })
	o.Retain("j")
	a := transport.ChannelID{Job: "j", Stream: "a", Sender: "g-0", Receiver: "s-1"}
	b := transport.ChannelID{Job: "j", Stream: "b", Sender: "g-0", Receiver: "s-1"}
	other := transport.ChannelID{Job: "j", Stream: "a", Sender: "g-0", Receiver: "s-0"}
	commit := func(ch transport.ChannelID, from, to uint64) {
		t.Helper()
		es := entries(ch, from, to, false)
		if err := store.Commit(&transport.Commit{Job: "j", Outputs: es}); err != nil {
			t.Fatal(err)
		}
		o.Publish(es)
	}
	ack := func(ch transport.ChannelID, seq uint64) {
		t.Helper()
		if _, err := o.Ack(ch, seq); err != nil {
			t.Fatal(err)
		}
	}
	commit(a, 1, 5)
	commit(b, 1, 2)
	commit(other, 1, 3)
	ack(a, 4) // batch 5 not yet acknowledged when s-1 is lost
	ack(b, 2)
	ack(other, 3)
	if _, err := o.Rewind("j", "s-1"); err != nil {
		t.Fatal(err)
	}
	commit(a, 6, 7) // after the rewind: not what s-1 is behind
	ack(a, 5)
	ack(other, 3)
	if len(told) != 0 {
		t.Fatalf("told %v before channel b was acknowledged again", told)
	}
	ack(b, 1)
	if len(told) != 0 {
		t.Fatalf("told %v with batch 2 of b to acknowledge again", told)
	}
	ack(b, 2)
	if len(told) != 1 || told[0] != "j/s-1" {
		t.Fatalf("told %v, want j/s-1 once", told)
	}
	ack(a, 7)
	if _, err := o.Rewind("j", "s-0"); err != nil { // nothing but batches acknowledged: behind them all
		t.Fatal(err)
	}
	ack(other, 3)
	if len(told) != 2 || told[1] != "j/s-0" {
		t.Fatalf("told %v, want j/s-0 next", told)
	}
	if _, err := o.Rewind("j", "s-2"); err != nil { // sent nothing: lost nothing of it
		t.Fatal(err)
	}
	ack(other, 3)
	if len(told) != 2 {
		t.Fatalf("told %v of a receiver that had been sent nothing", told)
	}
	// The job ends (Release) before the rewound receiver's last
	// acknowledgement comes: it is still told.
	late := transport.ChannelID{Job: "j", Stream: "a", Sender: "g-0", Receiver: "s-3"}
	commit(late, 1, 2)
	ack(late, 2)
	if _, err := o.Rewind("j", "s-3"); err != nil {
		t.Fatal(err)
	}
	if err := o.Release("j"); err != nil {
		t.Fatal(err)
	}
	ack(late, 2)
	if len(told) != 3 || told[2] != "j/s-3" {
		t.Fatalf("told %v, want j/s-3 after the job's release", told)
	}
}
