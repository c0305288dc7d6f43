package transport

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/internal/lifetime"
	"github.com/wololo/wololo/internal/ratelog"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// Sender runs one link per outbound channel: it opens the channel's stream,
// learns the receiver's watermark, resends the outbox above it, streams new
// entries as they are published and trims the outbox on every Ack. A link
// reconnects with jittered backoff until its EOF is acknowledged.
//
// A link also guards against zombies on the receiving side: it remembers
// the newest incarnation each receiver instance has answered with and
// refuses an older one (and one above IncarnationCeiling), and it ends its
// stream when the receiver's address changes (the receiver was replaced
// elsewhere).
//
// And it checks every Hello against its outbox (Outbox.CheckHello): a
// receiver that lost batches it had acknowledged, or holds batches this
// sender no longer knows it sent, means a store was wiped or replaced under
// the job. The link then ends and reports it (OnFailed) instead of resending
// into a sequence gap forever. So does a link whose receiver does not know
// the job (ErrUnknownJob: its store lost it), refuses it for a limit
// (ErrTooManyJobs) or refuses the channel for what it is (a stream name
// too long, a stream it does not take, a plan it cannot run:
// IsChannelRefused): no retry would get the job through, so it fails with
// that reason, at once, rather than stalling. Since a link whose channel is complete has
// ended, a receiver that announces a new incarnation gets a check link on
// each of its channels that has none running (SeeReceiver).
type Sender struct {
	self        string
	incarnation uint64
	outbox      *Outbox
	conns       Conns
	log         hclog.Logger
	// life runs the links; a refusal of this process as an older
	// incarnation of itself ends it (Fail).
	life lifetime.Lifetime

	failed    func(ctx context.Context, ch ChannelID, err error) // OnFailed
	retrySoon func(error) bool                                   // RetrySoon
	checkAlso func(receiver string) []ChannelID                  // CheckAlso

	mu        sync.Mutex
	links     map[ChannelID]*link // the running ones
	receivers map[string]uint64   // newest incarnation seen per receiver instance
	now       func() time.Time    // the clock of IncarnationCeiling; nil: time.Now (tests set it)
	// warns rate-limits the warnings a link repeats while it retries,
	// per channel, on the clock now.
	warns *ratelog.Limiter
}

// link is one channel's running link.
type link struct {
	cancel context.CancelFunc
	// check: started by a receiver's new incarnation to check the channel
	// (SeeReceiver); it ends after its Hello if there is nothing to send.
	check bool
}

// AddressCheckInterval is how often a link checks that its receiver's
// address has not changed.
const AddressCheckInterval = 500 * time.Millisecond

var (
	errChannelDone = errors.New("channel complete")
	errChecked     = errors.New("channel checked, nothing to send")
)

// Conns gives a Sender its connections to receivers. The channel protocol
// does not dial: how a connection is made (TLS, whose certificate, the
// keepalive) is the caller's, services/wire/rpc.Pool in the processes.
type Conns interface {
	// Conn returns the connection to an instance and the address it
	// reaches; the same instance and address should share a connection.
	Conn(instance string) (conn *grpc.ClientConn, addr string, err error)
	// Resolve returns an instance's current address: a link whose
	// receiver's address changes ends its stream and opens another.
	Resolve(instance string) (addr string, err error)
}

// NewSender returns a Sender for the instance self, reaching receivers
// through conns. Its links run from their first Publish or Resume until
// Serve returns.
func NewSender(self string, incarnation uint64, outbox *Outbox, conns Conns, log hclog.Logger) *Sender {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &Sender{
		self: self, incarnation: incarnation, outbox: outbox, conns: conns, log: log,
		links: map[ChannelID]*link{}, receivers: map[string]uint64{},
	}
	s.warns = ratelog.New(ratelog.DefaultInterval, func() time.Time { return clockOr(s.now) })
	return s
}

// OnFailed sets what is told of a channel that cannot complete (see
// Sender): its state was lost (ErrStateLost), its receiver does not know
// the job (ErrUnknownJob), refuses it for a limit (ErrTooManyJobs) or
// refuses the channel itself (IsChannelRefused). The
// process reports the job failed, with err as the reason. It runs on the
// ending link's goroutine, with a context that ends with Serve. Set it
// before Serve.
func (s *Sender) OnFailed(f func(ctx context.Context, ch ChannelID, err error)) { s.failed = f }

// RetrySoon sets which refusals of a receiver mean that it is up but not
// serving yet (recovering its state after a restart: rpc.IsRecovering): a
// link refused so asks again within recoveringPoll, not a doubled backoff,
// so that it reconnects within that of the receiver's recovery instead
// of up to the 2 s a receiver that is down is waited for. Set it
// before Serve.
func (s *Sender) RetrySoon(f func(error) bool) { s.retrySoon = f }

// CheckAlso sets the channels, beyond those the outbox holds, that a
// receiver's new incarnation gets a check link on (SeeReceiver): the
// output channels to it of every job the process holds, whether or not
// anything was committed to them yet. A job that never sent a receiver
// anything would otherwise never hear that the receiver lost it: a shard
// told of a job that the gateway then lost with its store, before the
// gateway sent it a batch, held the job for ever. A check link's Hello
// (or its refusal: the job not introduced, the job dropped) says so as it
// does for a channel with entries. f should list only channels to a
// receiver whose "not introduced" means lost (the gateway's, which holds
// every job before introducing it anywhere), not to one that may not
// have been told of the job yet. Set it before Serve.
func (s *Sender) CheckAlso(f func(receiver string) []ChannelID) { s.checkAlso = f }

// Serve runs until ctx ends (nil) or a receiver refuses this process as an
// older incarnation of itself (that error: it has been replaced and must
// stop). Every link has ended when it returns.
func (s *Sender) Serve(ctx context.Context) error { return s.life.Serve(ctx) }

// Resume starts the links of channels restored from the store.
func (s *Sender) Resume(channels []ChannelID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range channels {
		s.startLocked(ch, false)
	}
}

// Check starts a check link on each channel that has no link running:
// one Hello, which shows whether the receiver holds what the channel's
// marks say it acknowledged (the loss is reported if not), then the link
// ends if there is nothing to send.
func (s *Sender) Check(channels []ChannelID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range channels {
		s.startLocked(ch, true)
	}
}

// startLocked starts a channel's link unless one runs. The link forgets
// itself when it ends, so that the channel can get another.
func (s *Sender) startLocked(ch ChannelID, check bool) {
	if _, ok := s.links[ch]; ok {
		return
	}
	l := &link{check: check}
	cancel, ok := s.life.Go(func(ctx context.Context) {
		s.run(ctx, ch, l)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.links[ch] == l {
			delete(s.links, ch)
		}
	})
	if ok {
		l.cancel = cancel
		s.links[ch] = l
	}
}

// DropJob stops the links of a job.
func (s *Sender) DropJob(job string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch, l := range s.links {
		if ch.Job == job {
			l.cancel()
			delete(s.links, ch)
		}
	}
}

// SeeReceiver records that an instance runs as the given incarnation (it
// announced itself): from now on no acknowledgement of an older one counts,
// so a woken zombie receiver cannot make this sender trim batches that only
// the zombie holds. A new incarnation also gets a check link on every
// channel to it that has no link running (a complete one, say): its Hello
// shows whether the new incarnation still holds what the old one
// acknowledged.
func (s *Sender) SeeReceiver(instance string, incarnation uint64) {
	s.mu.Lock()
	newer := incarnation > s.receivers[instance]
	if newer {
		s.receivers[instance] = incarnation
	}
	s.mu.Unlock()
	if !newer {
		return
	}
	channels := s.outbox.channelsTo(instance)
	if s.checkAlso != nil {
		channels = append(channels, s.checkAlso(instance)...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range channels {
		s.startLocked(ch, true)
	}
}

// currentReceiver reports whether incarnation is still the newest known of
// a receiver instance.
func (s *Sender) currentReceiver(instance string, incarnation uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.receivers[instance] <= incarnation
}

// seeReceiver records the incarnation a receiver answered with (Hello) and
// refuses an older one than the newest known (a zombie) or one above
// IncarnationCeiling (a claim that would make this sender refuse every
// real incarnation of the receiver to come).
func (s *Sender) seeReceiver(instance string, incarnation uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := checkIncarnation("receiver", instance, incarnation, s.receivers[instance], clockOr(s.now)); err != nil {
		return err
	}
	s.receivers[instance] = incarnation
	return nil
}

// Publish hands committed entries to the outbox and makes sure each of
// their channels has a running link.
func (s *Sender) Publish(entries []Entry) {
	s.outbox.Publish(entries)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		s.startLocked(e.Channel, false)
	}
}

// endCheck ends a check link after its Hello if its channel has nothing to
// send: it forgets the link (under mu, so that a Publish that comes after
// starts another) and reports whether it did.
func (s *Sender) endCheck(ch ChannelID, l *link) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.outbox.idle(ch) {
		return false
	}
	if s.links[ch] == l {
		delete(s.links, ch)
	}
	return true
}

// Wait blocks until every link started so far has ended (its EOF
// acknowledged, or Serve returned).
func (s *Sender) Wait() { s.life.Wait() }

func (s *Sender) run(ctx context.Context, ch ChannelID, l *link) {
	log := s.log.With("job", ch.Job, "stream", ch.Stream, "receiver", ch.Receiver)
	delay := firstBackoff
	for attempt := 1; ; attempt++ {
		progressed, err := s.session(ctx, ch, l)
		s.outbox.SetConnected(ch, false)
		switch {
		case errors.Is(err, errChannelDone):
			log.Debug("channel complete")
			return
		case errors.Is(err, errChecked):
			log.Debug("channel checked")
			return
		case errors.Is(err, ErrStateLost) || IsUnknownJob(err):
			if IsUnknownJob(err) {
				// This sender holds the job, so the gateway introduced it
				// everywhere before the first batch: the receiver lost it.
				err = lost(ch.Receiver, fmt.Errorf("%w: %w; this sender holds the job, so %s lost this job's state (its store wiped or replaced?) and the job cannot complete", ErrStateLost, refusal(ch, err), ch.Receiver))
			}
			log.Error("channel state lost; the job cannot complete unless the process rebuilds what was lost", "error", err)
			if s.lostAndReported(ctx, ch, err) {
				return
			}
			// The process rebuilt the receiver while the report was taken:
			// the link goes on, from where the receiver's Hello says, after
			// the backoff (a loss found again at once, a batch missing from
			// the store, is not retried in a tight loop).
			var wait time.Duration
			wait, delay = backoff(delay, false, false)
			log.Info("the receiver is being rebuilt: sending the channel again from where its Hello says", "backoff", wait)
			if lifetime.Sleep(ctx, wait) != nil {
				return
			}
			continue
		}
		if IsChannelRefused(err) { // for what the channel is: no retry gets it through
			log.Error("receiver refused the channel; the job cannot complete", "error", err)
			s.fail(ctx, ch, refusal(ch, err))
			return
		}
		switch status.Code(err) {
		case codes.ResourceExhausted: // a limit of the receiver: no retry gets the job through
			log.Error("receiver refused the job for a limit; the job cannot complete", "error", err)
			s.fail(ctx, ch, refusal(ch, err))
			return
		case codes.NotFound: // the receiver dropped the job
			log.Info("receiver dropped the job; dropping the channel", "error", err)
			if derr := s.outbox.DropChannel(ch); derr != nil {
				log.Error("drop channel", "error", derr)
			}
			return
		case codes.FailedPrecondition: // a newer incarnation of this instance exists
			log.Error("fenced: a newer incarnation of this instance is running", "error", err)
			s.life.Fail(fmt.Errorf("receiver %s refused %s: %w", ch.Receiver, s.self, err))
			return
		}
		if ctx.Err() != nil {
			return
		}
		s.outbox.SetLinkError(ch, err)
		soon := s.retrySoon != nil && s.retrySoon(err)
		var wait time.Duration
		wait, delay = backoff(delay, progressed, soon)
		// A receiver recovering is asked every recoveringPoll for as long
		// as its recovery takes (a minute at most, the masters' grace): that
		// is no news worth a warning each time.
		level := hclog.Debug
		if attempt > 3 && !soon {
			level = hclog.Warn
		}
		if level == hclog.Warn {
			// A channel refused for ever retries every maxBackoff: one
			// line per channel a minute, with the count left out.
			s.warns.Log(log, level, "reconnect/"+ch.String(), "stream to receiver broken, reconnecting", "error", err, "attempt", attempt, "backoff", wait)
		} else {
			log.Log(level, "stream to receiver broken, reconnecting", "error", err, "attempt", attempt, "backoff", wait)
		}
		jitter := time.Duration(rand.Int64N(int64(wait)/2 + 1))
		if lifetime.Sleep(ctx, wait+jitter) != nil {
			return
		}
	}
}

// A link's backoff between attempts: firstBackoff, doubled after each
// failed one up to maxBackoff, back to firstBackoff after an attempt that
// got somewhere; recoveringPoll after an attempt refused by a receiver
// that is recovering. A receiver's recovery is the outage of every stage
// that sends to it (their outboxes fill within a few tenths of a second),
// so a link asks it often: a refusal costs the receiver a stream opened
// and closed on a connection that stays up, and the link resumes within
// 10 ms (a jitter of up to 5 more) of the recovery's end rather than
// within 50-75.
const (
	firstBackoff   = 50 * time.Millisecond
	maxBackoff     = 2 * time.Second
	recoveringPoll = 10 * time.Millisecond
)

// backoff is how long a link waits after a failed attempt (before
// jitter), given the backoff it had (delay), whether the attempt got
// somewhere and whether its receiver is recovering (soon), and the
// backoff it has after the next attempt fails too.
func backoff(delay time.Duration, progressed, soon bool) (wait, next time.Duration) {
	if progressed || soon {
		delay = firstBackoff
	}
	if soon {
		return recoveringPoll, delay
	}
	return delay, min(2*delay, maxBackoff)
}

// refusal is a receiver's refusal of a channel as its job's failure
// reason: who refused which stream, and the receiver's own words.
func refusal(ch ChannelID, err error) error {
	msg := err.Error()
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		msg = se.GRPCStatus().Message()
	}
	return fmt.Errorf("%s refused stream %s from %s: %s", ch.Receiver, ch.Stream, ch.Sender, msg)
}

// fail reports a channel that cannot complete (OnFailed).
func (s *Sender) fail(ctx context.Context, ch ChannelID, err error) {
	if s.failed != nil {
		s.failed(ctx, ch, err)
	}
}

// lostAndReported marks a channel whose state was lost, reports it
// (OnFailed) and reports whether it stays lost: the process may have
// rebuilt the receiver meanwhile and sent the channel back to its start
// (Rewind, while the report was taken), and then the link goes on.
func (s *Sender) lostAndReported(ctx context.Context, ch ChannelID, err error) bool {
	s.outbox.markLost(ch)
	s.fail(ctx, ch, err)
	return s.outbox.isLost(ch) || ctx.Err() != nil
}

// Rewind sends every channel of job to receiver again from its first
// batch (Outbox.Rewind), each from where the receiver's Hello says it
// is: the process rebuilds a receiver that lost its state. The links of
// the channels are started again; one still ending for the loss (its
// report being taken) goes on by itself.
func (s *Sender) Rewind(job, receiver string) ([]ChannelID, error) {
	channels, err := s.outbox.Rewind(job, receiver)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range channels {
		s.startLocked(ch, false)
	}
	return channels, nil
}

// Incarnation is the newest incarnation this sender has seen of a
// receiver instance (announced, or in a Hello), 0 if none.
func (s *Sender) Incarnation(instance string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.receivers[instance]
}

// session runs one gRPC stream of a channel. progressed reports whether the
// receiver acknowledged anything during it.
func (s *Sender) session(ctx context.Context, ch ChannelID, l *link) (bool, error) {
	var progressed atomic.Bool
	err := s.stream(ctx, ch, l, &progressed)
	return progressed.Load(), err
}

func (s *Sender) stream(ctx context.Context, ch ChannelID, l *link, progressed *atomic.Bool) error {
	conn, addr, err := s.conns.Conn(ch.Receiver)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.watchAddress(ctx, cancel, ch.Receiver, addr)
	stream, err := wololov1.NewStageServiceClient(conn).Exchange(ctx)
	if err != nil {
		return fmt.Errorf("open stream: %w", err)
	}
	open := &wololov1.Open{JobId: ch.Job, Stream: ch.Stream, Sender: s.self, Receiver: ch.Receiver, Incarnation: s.incarnation}
	if err := stream.Send(&wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Open{Open: open}}); err != nil {
		return fmt.Errorf("send open: %w", err)
	}
	first, err := stream.Recv()
	if err != nil {
		return fmt.Errorf("await hello: %w", err)
	}
	hello := first.GetHello()
	if hello == nil {
		return errors.New("receiver answered open without hello")
	}
	if err := s.seeReceiver(ch.Receiver, hello.Incarnation); err != nil {
		return err
	}
	if err := s.outbox.CheckHello(ch, hello.Watermark, hello.SenderRebuilt); err != nil {
		_ = stream.CloseSend()
		return err
	}
	done, err := s.outbox.Ack(ch, hello.Watermark)
	if err != nil {
		return err
	}
	if done {
		_ = stream.CloseSend()
		return errChannelDone
	}
	if l.check && s.endCheck(ch, l) {
		_ = stream.CloseSend()
		return errChecked
	}
	s.outbox.SetConnected(ch, true)

	// Acknowledgements arrive on their own goroutine.
	recvErr := make(chan error, 1)
	go func() {
		for {
			resp, err := stream.Recv()
			if err != nil {
				recvErr <- fmt.Errorf("receive ack: %w", err)
				cancel()
				return
			}
			ack := resp.GetAck()
			if ack == nil {
				continue
			}
			if !s.currentReceiver(ch.Receiver, hello.Incarnation) {
				recvErr <- fmt.Errorf("%w: receiver %s incarnation %d was replaced; its acknowledgements no longer count", ErrStaleIncarnation, ch.Receiver, hello.Incarnation)
				cancel()
				return
			}
			progressed.Store(true)
			done, err := s.outbox.Ack(ch, ack.Seq)
			if err != nil {
				recvErr <- err
				cancel()
				return
			}
			if done {
				recvErr <- errChannelDone
				cancel()
				return
			}
		}
	}()

	next := hello.Watermark
	for {
		entries, err := s.outbox.Pending(ctx, ch, next)
		if err != nil {
			select {
			case rerr := <-recvErr:
				_ = stream.CloseSend()
				return rerr
			default:
				return err
			}
		}
		for _, e := range entries {
			b := &wololov1.Batch{Seq: e.Seq, Eof: e.EOF, Rows: e.Rows}
			if err := stream.Send(&wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Batch{Batch: b}}); err != nil {
				// The real cause, if any, comes from Recv.
				select {
				case rerr := <-recvErr:
					return rerr
				case <-time.After(time.Second):
					return fmt.Errorf("send batch %d: %w", e.Seq, err)
				}
			}
			next = e.Seq
		}
	}
}

// watchAddress cancels a session when its receiver's address changes.
func (s *Sender) watchAddress(ctx context.Context, cancel context.CancelFunc, receiver, addr string) {
	t := time.NewTicker(AddressCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if now, err := s.conns.Resolve(receiver); err == nil && now != addr {
				s.log.Info("receiver moved; reconnecting", "receiver", receiver, "from", addr, "to", now)
				cancel()
				return
			}
		}
	}
}
