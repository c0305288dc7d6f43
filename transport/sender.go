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

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// Sender runs one link per outbound channel: it opens the channel's stream,
// learns the receiver's watermark, resends the outbox above it, streams new
// entries as they are published and trims the outbox on every Ack. A link
// reconnects with jittered backoff until its EOF is acknowledged.
type Sender struct {
	self        string
	incarnation uint64
	outbox      *Outbox
	pool        *Pool
	log         hclog.Logger
	ctx         context.Context

	mu    sync.Mutex
	links map[ChannelID]bool
	wg    sync.WaitGroup
}

// NewSender returns a Sender for the instance self. Links stop when ctx ends.
func NewSender(ctx context.Context, self string, incarnation uint64, outbox *Outbox, pool *Pool, log hclog.Logger) *Sender {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Sender{self: self, incarnation: incarnation, outbox: outbox, pool: pool, log: log, ctx: ctx, links: map[ChannelID]bool{}}
}

// Publish hands committed entries to the outbox and makes sure each of
// their channels has a running link.
func (s *Sender) Publish(entries []Entry) {
	s.outbox.Publish(entries)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		if s.links[e.Channel] {
			continue
		}
		s.links[e.Channel] = true
		s.wg.Add(1)
		go s.run(e.Channel)
	}
}

// Wait blocks until every link has ended (EOF acknowledged or ctx done).
func (s *Sender) Wait() { s.wg.Wait() }

var errChannelDone = errors.New("channel complete")

func (s *Sender) run(ch ChannelID) {
	defer s.wg.Done()
	log := s.log.With("job", ch.Job, "stream", ch.Stream, "receiver", ch.Receiver)
	delay := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		progressed, err := s.session(ch)
		s.outbox.SetConnected(ch, false)
		if errors.Is(err, errChannelDone) {
			log.Debug("channel complete")
			return
		}
		if s.ctx.Err() != nil {
			return
		}
		if progressed {
			delay = 50 * time.Millisecond
		}
		level := hclog.Debug
		if attempt > 3 {
			level = hclog.Warn
		}
		log.Log(level, "stream to receiver broken, reconnecting", "error", err, "attempt", attempt, "backoff", delay)
		jitter := time.Duration(rand.Int64N(int64(delay)/2 + 1))
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(delay + jitter):
		}
		delay = min(delay*2, 2*time.Second)
	}
}

// session runs one gRPC stream of a channel. progressed reports whether the
// receiver acknowledged anything during it.
func (s *Sender) session(ch ChannelID) (bool, error) {
	var progressed atomic.Bool
	err := s.stream(ch, &progressed)
	return progressed.Load(), err
}

func (s *Sender) stream(ch ChannelID, progressed *atomic.Bool) error {
	conn, err := s.pool.Conn(ch.Receiver)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
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
	done, err := s.outbox.Ack(ch, hello.Watermark)
	if err != nil {
		return err
	}
	if done {
		_ = stream.CloseSend()
		return errChannelDone
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
