package transport_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// receiver is a Handler that applies batches into a log, committing its
// watermark before acknowledging, like the stage runtime. It can be told to
// break the stream right after committing chosen batches, before their
// acknowledgement: the window in which a crash leaves the sender unsure.
type receiver struct {
	mu         sync.Mutex
	watermarks map[transport.ChannelID]uint64
	ended      map[transport.ChannelID]bool
	applied    []uint64
	duplicates int
	loseAck    map[uint64]bool
	eof        chan struct{}
}

func newReceiver() *receiver {
	return &receiver{watermarks: map[transport.ChannelID]uint64{}, ended: map[transport.ChannelID]bool{}, loseAck: map[uint64]bool{}, eof: make(chan struct{})}
}

func (r *receiver) Open(ch transport.ChannelID) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watermarks[ch], nil
}

func (r *receiver) IntroduceJob(string, []byte) error { return nil }

func (r *receiver) DropJob(job string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for ch := range r.watermarks {
		if ch.Job == job {
			delete(r.watermarks, ch)
		}
	}
	return nil
}

func (r *receiver) Deliver(_ context.Context, ch transport.ChannelID, b *wololov1.Batch, done func(error)) error {
	r.mu.Lock()
	wm := r.watermarks[ch]
	switch transport.Check(wm, b.Seq, r.ended[ch]) {
	case transport.Duplicate:
		r.duplicates++
		r.mu.Unlock()
		done(nil)
		return nil
	case transport.Gap:
		r.mu.Unlock()
		done(transport.ErrSeqGap)
		return nil
	case transport.Ended:
		r.mu.Unlock()
		done(transport.ErrAfterEOF)
		return nil
	}
	r.watermarks[ch] = b.Seq
	r.ended[ch] = b.Eof
	r.applied = append(r.applied, b.Seq)
	lose := r.loseAck[b.Seq]
	delete(r.loseAck, b.Seq)
	if b.Eof {
		close(r.eof)
	}
	r.mu.Unlock()
	if lose {
		done(errors.New("connection lost between commit and ack"))
		return nil
	}
	done(nil)
	return nil
}

// count is how many batches the receiver has applied.
func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.applied)
}

// receiverAddr is where the receiver b-0 listens on a test's in-memory
// network.
const receiverAddr = "b-0"

// serveAs serves h as receiver b-0 with the given incarnation at
// receiverAddr on n, until the test ends or the server is stopped (the
// receiving process goes away; it may come back at the same address).
func serveAs(t *testing.T, n *testkit.BufNet, h transport.Handler, incarnation uint64) *grpc.Server {
	t.Helper()
	// WaitForHandlers: a stopped server's handlers have returned before a
	// restarted one shares their handler, as in a process.
	s := grpc.NewServer(grpc.WaitForHandlers(true))
	wololov1.RegisterStageServiceServer(s, transport.NewServer("b-0", incarnation, h, nil))
	go s.Serve(n.Listen(receiverAddr))
	t.Cleanup(s.Stop)
	return s
}

// bufConns is a Sender's Conns over an in-memory network: every receiver
// at receiverAddr.
type bufConns struct{ n *testkit.BufNet }

func (c bufConns) Conn(string) (*grpc.ClientConn, string, error) {
	return c.n.Conn(receiverAddr), receiverAddr, nil
}

func (c bufConns) Resolve(string) (string, error) { return receiverAddr, nil }

// startSender runs the Sender of a-0 with the given incarnation, reaching
// b-0 on n, until ctx ends.
func startSender(t *testing.T, ctx context.Context, n *testkit.BufNet, incarnation uint64) (*transport.Outbox, *transport.Sender) {
	t.Helper()
	return startSenderOn(t, ctx, n, transport.NewMemStore(), incarnation)
}

// startSenderOn is startSender with its outbox on store.
func startSenderOn(t *testing.T, ctx context.Context, n *testkit.BufNet, store transport.Store, incarnation uint64) (*transport.Outbox, *transport.Sender) {
	t.Helper()
	o := transport.NewOutbox(store)
	s := transport.NewSender("a-0", incarnation, o, bufConns{n}, nil)
	go s.Serve(ctx)
	return o, s
}

func waitEOF(t *testing.T, r *receiver) {
	t.Helper()
	select {
	case <-r.eof:
	case <-time.After(20 * time.Second):
		t.Fatalf("EOF never applied; applied %v", r.applied)
	}
}

func checkExactlyOnce(t *testing.T, r *receiver, n int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.applied) != n {
		t.Fatalf("applied %d batches, want %d: %v", len(r.applied), n, r.applied)
	}
	for i, s := range r.applied {
		if s != uint64(i+1) {
			t.Fatalf("applied out of order at %d: %v", i, r.applied)
		}
	}
}

func TestCutConnectionsResendAndDedup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newReceiver()
	// After committing batches 5 and 40 the stream breaks before the ack:
	// the sender must learn from Hello that they are applied.
	r.loseAck[5], r.loseAck[40] = true, true
	network := testkit.NewBufNet(t)
	serveAs(t, network, r, 1)

	o, sender := startSender(t, ctx, network, 1)
	ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	const n = 200
	var cuts atomic.Int64
	go func() {
		for i := 0; i < n; i++ {
			if i%20 == 10 {
				// Cut a link at work: the receiver has applied what was
				// published up to five entries ago, and the rest is in
				// flight or about to be.
				testkit.Await(10*time.Second, func() bool { return r.count() >= i-5 })
				cuts.Add(int64(network.Cut()))
			}
			e := transport.Entry{Channel: ch, Seq: uint64(i + 1), EOF: i == n-1}
			sender.Publish([]transport.Entry{e})
		}
	}()
	waitEOF(t, r)
	checkExactlyOnce(t, r, n)
	if cuts.Load() == 0 {
		t.Fatal("the test never cut a connection")
	}
	r.mu.Lock()
	lost := len(r.loseAck)
	r.mu.Unlock()
	if lost != 0 {
		t.Fatalf("%d commit-then-break points never reached", lost)
	}
	// The sender finishes: every entry acknowledged, outbox empty.
	if !testkit.Await(10*time.Second, func() bool { st := o.Channels("j"); return len(st) == 1 && st[0].Done && st[0].Depth == 0 }) {
		t.Fatalf("channel not complete: %+v", o.Channels("j"))
	}
	sender.Wait()
}

func TestReceiverRestartResumesFromWatermark(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newReceiver()
	network := testkit.NewBufNet(t)
	s := serveAs(t, network, r, 1)

	_, sender := startSender(t, ctx, network, 1)
	ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	// The test numbers its entries itself: it plays the Committer.
	for i := 0; i < 10; i++ {
		sender.Publish([]transport.Entry{{Channel: ch, Seq: uint64(i + 1)}})
	}
	testkit.WaitFor(t, "the ten batches to be applied", 10*time.Second, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.applied) == 10 })
	s.Stop() // the receiving process goes away; its committed state stays

	for i := 0; i < 10; i++ { // the sender keeps producing meanwhile
		sender.Publish([]transport.Entry{{Channel: ch, Seq: uint64(11 + i), EOF: i == 9}})
	}
	serveAs(t, network, r, 1)
	waitEOF(t, r)
	checkExactlyOnce(t, r, 20)
}

func TestFencingRefusesOlderIncarnation(t *testing.T) {
	r := newReceiver()
	network := testkit.NewBufNet(t)
	serveAs(t, network, r, 1)
	client := wololov1.NewStageServiceClient(network.Conn(receiverAddr))
	open := func(inc uint64) (wololov1.StageService_ExchangeClient, error) {
		st, err := client.Exchange(context.Background())
		if err != nil {
			return nil, err
		}
		o := &wololov1.Open{JobId: "j", Stream: "s", Sender: "a-0", Receiver: "b-0", Incarnation: inc}
		if err := st.Send(&wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Open{Open: o}}); err != nil {
			return nil, err
		}
		_, err = st.Recv()
		return st, err
	}
	old, err := open(1)
	if err != nil {
		t.Fatalf("first incarnation refused: %v", err)
	}
	if _, err := open(2); err != nil {
		t.Fatalf("newer incarnation refused: %v", err)
	}
	if _, err := open(1); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("stale incarnation: got %v, want FailedPrecondition", err)
	}
	// The zombie's already-open stream cannot get a batch applied either.
	_ = old.Send(&wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Batch{Batch: &wololov1.Batch{Seq: 1}}})
	if _, err := old.Recv(); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("zombie stream batch: got %v, want FailedPrecondition", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.applied) != 0 {
		t.Fatalf("a stale incarnation got batches applied: %v", r.applied)
	}
	// Wrong receiver and missing fields are refused with the right codes.
	st, _ := client.Exchange(context.Background())
	_ = st.Send(&wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Open{Open: &wololov1.Open{JobId: "j", Stream: "s", Sender: "a-0", Receiver: "c-9", Incarnation: 3}}})
	if _, err := st.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("wrong receiver: got %v", err)
	}
	st, _ = client.Exchange(context.Background())
	_ = st.Send(&wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Batch{Batch: &wololov1.Batch{Seq: 1}}})
	if _, err := st.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("batch before open: got %v", err)
	}
}

// TestSenderRestartResendsItsOutbox: a sender process dies with entries
// committed but unacknowledged; restarted on its store (new Outbox restored
// from Load, new incarnation), it resends exactly those, and the receiver
// applies every batch exactly once.
func TestSenderRestartResendsItsOutbox(t *testing.T) {
	r := newReceiver()
	r.loseAck[7] = true // batch 7 is applied but its ack is lost with the stream
	network := testkit.NewBufNet(t)
	serveAs(t, network, r, 1)

	store := transport.NewMemStore()
	ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	const n = 30

	// First life: commit all 30 entries, send, die after a few acks.
	ctx1, cancel1 := context.WithCancel(context.Background())
	o1 := transport.NewOutbox(store)
	s1 := transport.NewSender("a-0", 1, o1, bufConns{network}, nil)
	served1 := make(chan error, 1)
	go func() { served1 <- s1.Serve(ctx1) }()
	var all []transport.Entry
	for i := 0; i < n; i++ {
		all = append(all, transport.Entry{Channel: ch, Seq: uint64(i + 1), EOF: i == n-1})
	}
	if err := store.Commit(&transport.Commit{Job: "j", Outputs: all}); err != nil {
		t.Fatal(err)
	}
	s1.Publish(all[:10]) // the rest is committed but not yet handed to the link
	if !testkit.Await(10*time.Second, func() bool { return r.count() >= 10 }) {
		t.Fatalf("first life applied only %d", r.count())
	}
	cancel1()
	if err := <-served1; err != nil {
		t.Fatalf("first life's Serve: %v", err)
	}

	// Second life: restore from the store and resume.
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	ji := img.Jobs["j"]
	pending := ji.Outbox[ch]
	if len(pending) == 0 || pending[len(pending)-1].Seq != n {
		t.Fatalf("store outbox after the first life: %d entries", len(pending))
	}
	o2 := transport.NewOutbox(store)
	if !o2.Restore(ch, ji.Reserved[ch], ji.Acked[ch], pending) {
		t.Fatal("restored channel reports nothing to send")
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	s2 := transport.NewSender("a-0", 2, o2, bufConns{network}, nil)
	go s2.Serve(ctx2)
	s2.Resume([]transport.ChannelID{ch})
	waitEOF(t, r)
	checkExactlyOnce(t, r, n)
	s2.Wait()
	if d := store.OutboxLen(ch); d != 0 {
		t.Fatalf("store outbox holds %d entries after the EOF was acknowledged", d)
	}
}

// TestUnacknowledgedChannelSaysItsLastError: a channel whose receiver
// does not serve keeps its batches and says why its link's last attempt
// failed (Outbox.Channels: what Status and a stalled client report), and
// the receiver's first acknowledgement clears it.
func TestUnacknowledgedChannelSaysItsLastError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newReceiver()
	network := testkit.NewBufNet(t)
	outbox, sender := startSender(t, ctx, network, 1) // nothing serves b-0 yet
	ch := transport.ChannelID{Job: "j", Stream: "c0-s", Sender: "a-0", Receiver: "b-0"}
	sender.Publish([]transport.Entry{{Channel: ch, Seq: 1}})
	state := func() transport.ChannelState {
		cs := outbox.Channels("j")
		if len(cs) != 1 {
			t.Fatalf("channels %+v, want one", cs)
		}
		return cs[0]
	}
	testkit.WaitFor(t, "the link's failed attempt to be recorded", 10*time.Second, func() bool { return state().LastError != "" })
	if st := state(); st.Depth != 1 || st.Connected {
		t.Errorf("channel %+v: want its batch unacknowledged, not connected", st)
	}
	t.Logf("last error: %s", state().LastError)

	serveAs(t, network, r, 1)
	sender.Publish([]transport.Entry{{Channel: ch, Seq: 2, EOF: true}})
	waitEOF(t, r)
	testkit.WaitFor(t, "the acknowledgements", 10*time.Second, func() bool { return state().Depth == 0 })
	if st := state(); st.LastError != "" {
		t.Errorf("an acknowledged channel still says %q", st.LastError)
	}
}
