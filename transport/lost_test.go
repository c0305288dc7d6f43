package transport_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// opens counts the channels a handler has opened.
type opens struct {
	transport.Handler
	n atomic.Int32
}

func (o *opens) Open(ch transport.ChannelID) (uint64, error) {
	o.n.Add(1)
	return o.Handler.Open(ch)
}

// lostReports collects a Sender's OnFailed reports.
type lostReports struct {
	mu   sync.Mutex
	errs []error
	got  chan struct{}
}

func watchLost(s *transport.Sender) *lostReports {
	r := &lostReports{got: make(chan struct{}, 16)}
	s.OnFailed(func(_ context.Context, ch transport.ChannelID, err error) {
		r.mu.Lock()
		r.errs = append(r.errs, err)
		r.mu.Unlock()
		r.got <- struct{}{}
	})
	return r
}

func (r *lostReports) wait(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case <-r.got:
	case <-time.After(within):
		t.Fatalf("no loss reported within %s", within)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs[0]
}

func (r *lostReports) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errs)
}

func entries(ch transport.ChannelID, from, to uint64, eof bool) []transport.Entry {
	var out []transport.Entry
	for seq := from; seq <= to; seq++ {
		out = append(out, transport.Entry{Channel: ch, Seq: seq, EOF: eof && seq == to})
	}
	return out
}

func waitAcked(t *testing.T, o *transport.Outbox, job string, seq uint64) {
	t.Helper()
	if !testkit.Await(10*time.Second, func() bool { cs := o.Channels(job); return len(cs) == 1 && cs[0].Acked >= seq }) {
		t.Fatalf("batch %d never acknowledged: %+v", seq, o.Channels(job))
	}
}

// TestReceiverThatLostItsStateIsReported: a receiver acknowledged batches
// 1..10 and comes back with an empty store (watermark 0). The sender no
// longer holds 1..10, so instead of resending 11.. into a sequence gap
// forever, its link reports the channel lost, naming both numbers, and
// ends.
func TestReceiverThatLostItsStateIsReported(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	network := testkit.NewBufNet(t)
	srv := serveAs(t, network, newReceiver(), 1)
	o, s := startSender(t, ctx, network, 1)
	lost := watchLost(s)
	ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	s.Publish(entries(ch, 1, 10, false))
	waitAcked(t, o, "j", 10)

	srv.Stop()
	wiped := newReceiver()
	serveAs(t, network, wiped, 2)
	s.Publish(entries(ch, 11, 12, false))
	err := lost.wait(t, 10*time.Second)
	if !errors.Is(err, transport.ErrStateLost) || !strings.Contains(err.Error(), "b-0 is at batch 0") || !strings.Contains(err.Error(), "acknowledged batch 10") {
		t.Fatalf("reported %v", err)
	}
	if got := transport.LostInstance(err); got != "b-0" {
		t.Fatalf("the loss names %q, want the receiver b-0", got)
	}
	t.Logf("reported: %v", err)
	s.Wait() // the link has ended
	wiped.mu.Lock()
	defer wiped.mu.Unlock()
	if len(wiped.applied) != 0 {
		t.Fatalf("the wiped receiver applied %v", wiped.applied)
	}
}

// TestNewIncarnationOfAReceiverIsChecked: a channel whose EOF was
// acknowledged has no link any more. When its receiver announces a new
// incarnation, a check link asks it where it stands: one that kept its
// store answers its watermark and the link ends quietly; one that lost it
// is reported.
func TestNewIncarnationOfAReceiverIsChecked(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kept := newReceiver()
	network := testkit.NewBufNet(t)
	srv := serveAs(t, network, kept, 1)
	o, s := startSender(t, ctx, network, 1)
	lost := watchLost(s)
	ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	s.Publish(entries(ch, 1, 5, true))
	waitEOF(t, kept)
	s.Wait()

	// Restarted on its store: checked, nothing to report.
	srv.Stop()
	again := &opens{Handler: kept}
	srv = serveAs(t, network, again, 2)
	s.SeeReceiver("b-0", 2)
	s.Wait()
	if n := lost.count(); n != 0 || again.n.Load() != 1 {
		t.Fatalf("a receiver that kept its store: %d reports, %d opens; want 0 and 1", n, again.n.Load())
	}
	if cs := o.Channels("j"); len(cs) != 1 || !cs[0].Done {
		t.Fatalf("channel after the check: %+v", cs)
	}

	// Restarted on an empty store: reported.
	srv.Stop()
	serveAs(t, network, newReceiver(), 3)
	s.SeeReceiver("b-0", 3)
	err := lost.wait(t, 10*time.Second)
	if !errors.Is(err, transport.ErrStateLost) || !strings.Contains(err.Error(), "acknowledged batch 5") {
		t.Fatalf("reported %v", err)
	}
	s.Wait()
	s.SeeReceiver("b-0", 4) // a lost channel is not checked again
	s.Wait()
	if n := lost.count(); n != 1 {
		t.Fatalf("%d reports, want 1", n)
	}
}

// TestSenderThatLostItsStateIsReported: the receiver has applied batches
// 1..7 of a channel whose sender comes back with an empty store and numbers
// from 1 again. Its batches would be taken as duplicates and dropped; the
// sender's link reports the loss instead.
func TestSenderThatLostItsStateIsReported(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newReceiver()
	ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	r.watermarks[ch] = 7
	network := testkit.NewBufNet(t)
	serveAs(t, network, r, 1)
	_, s := startSender(t, ctx, network, 2)
	lost := watchLost(s)
	s.Publish(entries(ch, 1, 2, false))
	err := lost.wait(t, 10*time.Second)
	if !errors.Is(err, transport.ErrStateLost) || !strings.Contains(err.Error(), "a-0 numbered only 2") {
		t.Fatalf("reported %v", err)
	}
	if got := transport.LostInstance(err); got != "a-0" {
		t.Fatalf("the loss names %q, want the sender a-0", got)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.duplicates != 0 || len(r.applied) != 0 {
		t.Fatalf("the receiver took %d duplicates and applied %v", r.duplicates, r.applied)
	}
}

// refusing is a receiver whose Open refuses every channel with err.
type refusing struct {
	*receiver
	err error
}

func (r refusing) Open(transport.ChannelID) (uint64, error) { return 0, r.err }

// TestRefusedJobsFailOrDrop: a receiver that does not know the job (it was
// never introduced there, or its store lost it), refuses it for a limit,
// does not take the stream from this sender or cannot run the job's plan
// makes the link report the job failed with the receiver's reason and end,
// once, instead of retrying forever (an unknown job as lost state,
// ErrStateLost, which the job's client runs again; the others not); one
// that dropped the job makes it drop the channel quietly, as before.
func TestRefusedJobsFailOrDrop(t *testing.T) {
	cases := []struct {
		name    string
		refusal error
		report  string // "": nothing reported, the channel dropped
	}{
		{"unknown job", fmt.Errorf("%w: b-0 was never told of job j", transport.ErrUnknownJob), "channel state lost: b-0 refused stream s from a-0: job not introduced: b-0 was never told of job j; this sender holds the job, so b-0 lost this job's state (its store wiped or replaced?) and the job cannot complete"},
		{"too many jobs", fmt.Errorf("%w: b-0 holds 3 jobs already (--max-jobs)", transport.ErrTooManyJobs), "b-0 refused stream s from a-0: too many jobs: b-0 holds 3 jobs already (--max-jobs)"},
		{"unknown stream", fmt.Errorf("%w: b-0 does not take s from a-0", transport.ErrUnknownChannel), "b-0 refused stream s from a-0: unknown channel: b-0 does not take s from a-0"},
		{"plan refused", fmt.Errorf("%w: job j: no task x", transport.ErrBadPlan), "b-0 refused stream s from a-0: job plan refused: job j: no task x"},
		{"dropped job", fmt.Errorf("%w: j", transport.ErrJobDropped), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := &opens{Handler: refusing{newReceiver(), tc.refusal}}
			network := testkit.NewBufNet(t)
			serveAs(t, network, h, 1)
			o, s := startSender(t, ctx, network, 1)
			lost := watchLost(s)
			ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
			s.Publish(entries(ch, 1, 3, true))
			if tc.report != "" {
				err := lost.wait(t, 10*time.Second)
				if err.Error() != tc.report {
					t.Fatalf("reported %q, want %q", err, tc.report)
				}
				if got, want := errors.Is(err, transport.ErrStateLost), tc.name == "unknown job"; got != want {
					t.Fatalf("reported %q as lost state: %v, want %v", err, got, want)
				}
				if got, want := transport.LostInstance(err), map[bool]string{true: "b-0"}[tc.name == "unknown job"]; got != want {
					t.Fatalf("reported %q as lost by %q, want %q", err, got, want)
				}
			}
			s.Wait() // the link has ended: no retry
			if n, want := lost.count(), map[bool]int{true: 1, false: 0}[tc.report != ""]; n != want {
				t.Fatalf("%d reports, want %d", n, want)
			}
			if n := h.n.Load(); n != 1 {
				t.Fatalf("%d opens, want 1: the link retried", n)
			}
			if cs := o.Channels("j"); (tc.report == "") != (len(cs) == 0) {
				t.Fatalf("channels after the refusal: %+v", cs)
			}
		})
	}
}

// TestReceiverRestartedOnAnEmptyStoreIsChecked: the hole of a wiped
// receiver whose senders had nothing left to send it. b-0 acknowledged a
// whole channel, EOF included, so the sender runs no link to it; then b-0
// restarts on an empty store. Counting alone, that store would number the
// start 1 again, no news to a sender that knows b-0 at a higher number.
// Floored by the clock (the node passes ClockIncarnation of its start),
// the start is newer than the one before: its announcement passes the
// sender process's fence, the Sender checks the channel, finds that b-0
// lost what it acknowledged and reports it. The old incarnation, woken up,
// is refused from then on.
func TestReceiverRestartedOnAnEmptyStoreIsChecked(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	first, err := transport.NewMemStore().NextIncarnation(transport.ClockIncarnation(start))
	if err != nil {
		t.Fatal(err)
	}
	network := testkit.NewBufNet(t)
	kept := newReceiver()
	srv := serveAs(t, network, kept, first)
	o, s := startSender(t, ctx, network, 1)
	lost := watchLost(s)
	// a-0's Server, where b-0 announces itself (a node's OnAnnounce).
	announced := transport.NewServer("a-0", 1, newReceiver(), nil)
	announced.OnAnnounce(s.SeeReceiver)
	announce := func(inc uint64) error {
		_, err := announced.Announce(ctx, &wololov1.AnnounceRequest{Sender: "b-0", Incarnation: inc})
		return err
	}
	if err := announce(first); err != nil {
		t.Fatalf("b-0's first announcement: %v", err)
	}
	ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	s.Publish(entries(ch, 1, 5, true))
	waitEOF(t, kept)
	s.Wait() // everything acknowledged: no link runs
	if cs := o.Channels("j"); len(cs) != 1 || !cs[0].Done || cs[0].Acked != 5 {
		t.Fatalf("channel before the wipe: %+v", cs)
	}

	srv.Stop()
	if n, err := transport.NewMemStore().NextIncarnation(0); err != nil || n > first {
		t.Fatalf("an empty store counting alone numbers its start %d (%v); the hole is a number at most %d", n, err, first)
	}
	// The restart, a second later, on an empty store.
	wiped, err := transport.NewMemStore().NextIncarnation(transport.ClockIncarnation(start.Add(time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if wiped <= first {
		t.Fatalf("the start on an empty store is incarnation %d, not above %d", wiped, first)
	}
	empty := newReceiver()
	serveAs(t, network, empty, wiped)
	if err := announce(wiped); err != nil {
		t.Fatalf("the wiped b-0's announcement was refused: %v", err)
	}
	err = lost.wait(t, 10*time.Second)
	if !errors.Is(err, transport.ErrStateLost) || !strings.Contains(err.Error(), "b-0 is at batch 0") || !strings.Contains(err.Error(), "acknowledged batch 5") {
		t.Fatalf("reported %v", err)
	}
	t.Logf("reported: %v", err)
	s.Wait()
	empty.mu.Lock()
	applied := len(empty.applied)
	empty.mu.Unlock()
	if applied != 0 || lost.count() != 1 {
		t.Fatalf("the wiped receiver applied %d batches, %d reports; want 0 and 1", applied, lost.count())
	}

	// The old incarnation, a paused zombie waking up, is refused.
	if err := announce(first); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("the old incarnation's announcement after the wipe: %v, want FailedPrecondition", err)
	}
}

// TestStreamNameTooLongFailsTheJob: a stream whose name the receiver
// refuses (longer than MaxNameLen: issue 38's channel named by a 156-byte
// CASE) fails its job within a first attempt, with the receiver's reason,
// where its link retried for ever before; the handler never sees it.
func TestStreamNameTooLongFailsTheJob(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &opens{Handler: newReceiver()}
	network := testkit.NewBufNet(t)
	serveAs(t, network, h, 1)
	_, s := startSender(t, ctx, network, 1)
	lost := watchLost(s)
	stream := strings.Repeat("s", transport.MaxNameLen+1)
	ch := transport.ChannelID{Job: "j", Stream: stream, Sender: "a-0", Receiver: "b-0"}
	s.Publish(entries(ch, 1, 3, true))
	err := lost.wait(t, 10*time.Second)
	want := fmt.Sprintf("b-0 refused stream %s from a-0: invalid request: channel refused: a stream name of %d bytes (1 to %d)", stream, transport.MaxNameLen+1, transport.MaxNameLen)
	if err.Error() != want || errors.Is(err, transport.ErrStateLost) {
		t.Fatalf("reported %q, want %q, not as lost state", err, want)
	}
	s.Wait()
	if n := lost.count(); n != 1 {
		t.Fatalf("%d reports, want 1", n)
	}
	if n := h.n.Load(); n != 0 {
		t.Fatalf("the handler opened the channel %d times", n)
	}
}

// refusingFirst refuses the first n opens with err, then opens as its
// receiver does.
type refusingFirst struct {
	*receiver
	err  error
	n    int32
	seen atomic.Int32
}

func (r *refusingFirst) Open(ch transport.ChannelID) (uint64, error) {
	if r.seen.Add(1) <= r.n {
		return 0, r.err
	}
	return r.receiver.Open(ch)
}

// TestInvalidRefusalWithoutReasonIsRetried: an INVALID_ARGUMENT that is
// not a refusal of the channel (ReasonChannelRefused), such as an
// incarnation ahead of the receiver's clock, which passes once the
// clocks agree, is retried, not reported: the channel completes.
func TestInvalidRefusalWithoutReasonIsRetried(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newReceiver()
	h := &refusingFirst{receiver: r, err: fmt.Errorf("%w: incarnation ahead of the clock", transport.ErrInvalid), n: 2}
	network := testkit.NewBufNet(t)
	serveAs(t, network, h, 1)
	_, s := startSender(t, ctx, network, 1)
	lost := watchLost(s)
	ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	s.Publish(entries(ch, 1, 3, true))
	waitEOF(t, r)
	s.Wait()
	if n := lost.count(); n != 0 {
		t.Fatalf("%d reports of a refusal that passes on retry", n)
	}
	if n := h.seen.Load(); n < 3 {
		t.Fatalf("%d opens, want the 2 refused and one more", n)
	}
}
