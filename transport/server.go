package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/internal/errinfo"
	"github.com/wololo/wololo/internal/ratelog"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// Handler is the receiving side a Server feeds: the stage runtime.
type Handler interface {
	// Open is called when a channel (re)opens; it returns the channel's
	// watermark, or ErrUnknownChannel.
	Open(ch ChannelID) (watermark uint64, err error)
	// Deliver hands over one batch. It may block (backpressure). done is
	// called exactly once, from any goroutine: with nil once the batch is
	// committed or dropped as a duplicate, or with an error that resets the
	// stream.
	Deliver(ctx context.Context, ch ChannelID, b *wololov1.Batch, done func(error)) error
	// DropJob deletes everything the receiver holds of a job; later Opens of
	// the job fail with ErrJobDropped.
	DropJob(job string) error
	// IntroduceJob records durably that the gateway has told this instance
	// of a new job; Open refuses a job never introduced (ErrUnknownJob).
	// Idempotent; ErrTooManyJobs when the instance holds as many jobs as it
	// may, ErrJobDropped when it has dropped the job. plan is the job's
	// physical plan when it is a job of SQL queries (IntroduceJobRequest),
	// else empty; ErrBadPlan when the instance cannot run it.
	IntroduceJob(job string, plan []byte) error
}

// Server is the receiving end of StageService.Exchange.
type Server struct {
	wololov1.UnimplementedStageServiceServer
	self        string
	incarnation uint64
	handler     Handler
	log         hclog.Logger
	announced   func(instance string, incarnation uint64)
	failJob     func(JobFailure) error
	heldJobs    func(jobs []string) []string
	peers       func(instance string) bool
	identify    Identify         // set: claims must match the caller's certificate
	gateway     string           // the one instance that may introduce and drop jobs, if identify is set
	now         func() time.Time // the clock of IncarnationCeiling; nil: time.Now (tests set it)
	// warns rate-limits the warnings a peer repeats on every call (a
	// fenced incarnation's opens), per peer, on the clock now.
	warns *ratelog.Limiter
	// vouch says which channels' Hellos vouch for a rebuilt sender
	// (VouchFor); nil: none.
	vouch func(ChannelID) bool

	mu           sync.Mutex
	incarnations map[string]uint64 // newest incarnation seen per sender instance
	open         map[string]map[*openStream]bool
	// fenced: the senders whose last claim was refused as older than the
	// newest seen of them (Fenced); ahead: those whose claim above
	// IncarnationCeiling was logged. Both hold at most maxTracked
	// instances (names that passed checkPeer: neighbours, in a process).
	fenced map[string]*Fenced
	ahead  map[string]bool
}

// VouchFor sets which channels this server's Hellos vouch for a sender
// rebuilt from nothing, that numbers the same batches again from 1
// (Hello.sender_rebuilt): the sender takes its batches up to the
// watermark as acknowledged, though it has not numbered them yet. The
// process that decides a rebuild answers it (the gateway, rebuilding a
// lost shard alone), and says so before the sender is given the job
// again. f is called on every Open and must not block. Set it before
// serving.
func (s *Server) VouchFor(f func(ChannelID) bool) { s.vouch = f }

// vouches reports whether Hellos on ch vouch for its sender.
func (s *Server) vouches(ch ChannelID) bool { return s.vouch != nil && s.vouch(ch) }

// maxTracked bounds the instances a Server remembers as fenced or as
// having claimed ahead of its clock: far more than a topology's
// neighbours, so a bound only a Server without peers could reach.
const maxTracked = 1024

// Fenced is a sender instance that a Server refuses as older than the
// newest incarnation it has seen of it: a zombie, or the real instance
// after a forged claim above its incarnation. It stays listed until a
// claim of the instance at or above the newest is taken again.
type Fenced struct {
	Instance string
	// Refused is the last incarnation refused, Newest the newest seen.
	Refused, Newest uint64
	// Refusals counts the refused claims since the first, at Since.
	Refusals uint64
	Since    time.Time
}

// openStream is a running Exchange, so that a newer incarnation of its
// sender can end it at once.
type openStream struct {
	incarnation uint64
	cancel      context.CancelCauseFunc
}

// NewServer returns a Server for the instance self, running as the given
// incarnation.
func NewServer(self string, incarnation uint64, handler Handler, log hclog.Logger) *Server {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &Server{
		self: self, incarnation: incarnation, handler: handler, log: log,
		incarnations: map[string]uint64{}, open: map[string]map[*openStream]bool{},
		fenced: map[string]*Fenced{}, ahead: map[string]bool{},
	}
	s.warns = ratelog.New(ratelog.DefaultInterval, func() time.Time { return clockOr(s.now) })
	return s
}

// SetPeers sets which instances may open streams to this one or announce
// themselves to it (the topology's neighbours); any other is refused with
// PermissionDenied before anything is recorded of it. Without it, any
// instance is accepted.
func (s *Server) SetPeers(f func(instance string) bool) { s.peers = f }

// Identify names a call's caller by its verified certificate: the
// instance the certificate names (instance "" for a caller of another
// kind, a client or a master), who describes the caller in a refusal, and
// ok false when the caller presented no verified certificate. The channel
// protocol does not read certificates; services/wire/rpc.PeerInstance is
// the real one.
type Identify func(ctx context.Context) (instance, who string, ok bool)

// RequireIdentity binds every claim to the caller's certificate, as
// identify reads it: a stream's or an announcement's sender must be the
// instance the caller's certificate names, and only the instance gateway
// may introduce and drop jobs. Without it (--insecure) claims are taken as
// made.
func (s *Server) RequireIdentity(gateway string, identify Identify) {
	s.identify = identify
	s.gateway = gateway
}

// caller checks that the call's peer is the instance it claims to be.
func (s *Server) caller(ctx context.Context, claimed string) error {
	if s.identify == nil {
		return nil
	}
	instance, who, ok := s.identify(ctx)
	switch {
	case !ok:
		return ErrUnauthenticated
	case instance == "" || instance != claimed:
		return fmt.Errorf("%w: %s claims to be instance %q", ErrNotSelf, who, claimed)
	}
	return nil
}

// checkPeer refuses a claimed instance name that is too long, that is not
// a neighbour, or that is not the caller's own.
func (s *Server) checkPeer(ctx context.Context, instance string) error {
	if err := s.caller(ctx, instance); err != nil {
		return err
	}
	switch {
	case instance == "":
		return fmt.Errorf("%w: no instance name", ErrInvalid)
	case len(instance) > MaxNameLen:
		return fmt.Errorf("%w: an instance name of %d bytes (at most %d)", ErrInvalid, len(instance), MaxNameLen)
	case s.peers != nil && !s.peers(instance):
		return fmt.Errorf("%w: %q", ErrNotPeer, instance)
	}
	return nil
}

// OnAnnounce sets what else learns of an announced incarnation: the
// process's Sender, which then ignores acknowledgements from older
// incarnations of that instance as a receiver.
func (s *Server) OnAnnounce(f func(instance string, incarnation uint64)) { s.announced = f }

// Announce records an instance's new incarnation before it sends or
// acknowledges anything, so that an older one is refused from now on, both
// as a sender (here) and as a receiver (through OnAnnounce).
func (s *Server) Announce(ctx context.Context, req *wololov1.AnnounceRequest) (*wololov1.AnnounceResponse, error) {
	if err := s.checkPeer(ctx, req.GetSender()); err != nil {
		return nil, toStatus(err)
	}
	if err := s.fence(req.Sender, req.Incarnation); err != nil {
		return nil, toStatus(err)
	}
	if s.announced != nil {
		s.announced(req.Sender, req.Incarnation)
	}
	return &wololov1.AnnounceResponse{Incarnation: s.incarnation}, nil
}

// JobFailure is an instance's report that a job cannot complete
// (StageService.FailJob).
type JobFailure struct {
	Job, Reporter, Reason string
	// StateLost: the reporter found state lost (ErrStateLost: a store
	// wiped, replaced or unreadable), not a fault of the job, which can
	// run again from its input.
	StateLost bool
	// Lost is the instance that lost it, when the reporter knows
	// (LostInstance of its error): the gateway's own reports name it, and
	// a report over the wire carries it (FailJobRequest.lost).
	Lost string
}

// OnFailJob makes this server take FailJob calls (the gateway's, which
// marks the job failed); without it they are refused.
func (s *Server) OnFailJob(f func(JobFailure) error) { s.failJob = f }

// FailJob takes the report of an instance that found a job's channel state
// lost (see Sender). The reporter must be the caller, but need not be a
// neighbour: any instance of the graph may find a job lost. Which
// instances those are is the taker's to say (the gateway takes reports
// only from the instances that run its jobs, and refuses others with
// ErrNotPeer, PERMISSION_DENIED). The reason is cleaned (CleanReason)
// before the taker sees it.
func (s *Server) FailJob(ctx context.Context, req *wololov1.FailJobRequest) (*wololov1.FailJobResponse, error) {
	if err := s.caller(ctx, req.GetReporter()); err != nil {
		return nil, toStatus(err)
	}
	if req.GetReporter() == "" || len(req.GetReporter()) > MaxNameLen || len(req.GetLost()) > MaxNameLen || !ValidJob(req.GetJobId()) {
		return nil, toStatus(fmt.Errorf("%w: reporter %q, lost %q, job id %q", ErrInvalid, req.GetReporter(), req.GetLost(), req.GetJobId()))
	}
	if s.failJob == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "%s does not take job failures; the gateway does", s.self)
	}
	if err := s.failJob(JobFailure{Job: req.JobId, Reporter: req.Reporter, Reason: CleanReason(req.GetReason()), StateLost: req.StateLost, Lost: req.GetLost()}); err != nil {
		return nil, toStatus(err)
	}
	return &wololov1.FailJobResponse{}, nil
}

// MaxHeldJobsAsked is the most jobs one HeldJobs call may ask about.
const MaxHeldJobsAsked = 4096

// OnHeldJobs makes this server answer HeldJobs calls (the gateway's: which
// of the jobs asked about it holds). Set it before serving.
func (s *Server) OnHeldJobs(f func(jobs []string) []string) { s.heldJobs = f }

// HeldJobs answers which of the given jobs this process (the gateway)
// holds, to an instance asking as itself.
func (s *Server) HeldJobs(ctx context.Context, req *wololov1.HeldJobsRequest) (*wololov1.HeldJobsResponse, error) {
	if err := s.caller(ctx, req.GetInstance()); err != nil {
		return nil, toStatus(err)
	}
	if len(req.GetJobIds()) > MaxHeldJobsAsked {
		return nil, toStatus(fmt.Errorf("%w: %d jobs asked about, more than %d", ErrInvalid, len(req.GetJobIds()), MaxHeldJobsAsked))
	}
	for _, id := range req.GetJobIds() {
		if !ValidJob(id) {
			return nil, toStatus(fmt.Errorf("%w: job id %q", ErrInvalid, id))
		}
	}
	if s.heldJobs == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "%s holds no job table; the gateway does", s.self)
	}
	return &wololov1.HeldJobsResponse{Held: s.heldJobs(req.GetJobIds())}, nil
}

// DropJob deletes a job at this instance.
func (s *Server) DropJob(ctx context.Context, req *wololov1.DropJobRequest) (*wololov1.DropJobResponse, error) {
	if err := s.fromGateway(ctx, req.GetJobId()); err != nil {
		return nil, toStatus(err)
	}
	if err := s.handler.DropJob(req.JobId); err != nil {
		return nil, toStatus(err)
	}
	return &wololov1.DropJobResponse{}, nil
}

// IntroduceJob records a new job at this instance before the gateway sends
// any batch of it (see Handler.IntroduceJob): only then are streams of the
// job taken.
func (s *Server) IntroduceJob(ctx context.Context, req *wololov1.IntroduceJobRequest) (*wololov1.IntroduceJobResponse, error) {
	if err := s.fromGateway(ctx, req.GetJobId()); err != nil {
		return nil, toStatus(err)
	}
	if err := s.handler.IntroduceJob(req.JobId, req.Plan); err != nil {
		return nil, toStatus(err)
	}
	return &wololov1.IntroduceJobResponse{}, nil
}

// fromGateway checks a call only the gateway may make about a job: the
// caller is the gateway (with RequireIdentity) and the job id is valid.
func (s *Server) fromGateway(ctx context.Context, job string) error {
	if s.identify != nil {
		if err := s.caller(ctx, s.gateway); err != nil {
			return err
		}
	}
	if !ValidJob(job) {
		return fmt.Errorf("%w: job id %q", ErrInvalid, job)
	}
	return nil
}

// fence records a sender's incarnation and refuses older ones and ones
// above IncarnationCeiling; a newer incarnation ends the open streams of
// the older ones, so that a woken zombie learns at once that it was
// replaced. A refused older claim lists the sender as fenced (Fenced),
// logged when it starts; a claim above the ceiling is logged the first
// time an instance makes one, not on every call.
func (s *Server) fence(sender string, incarnation uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	newest := s.incarnations[sender]
	now := clockOr(s.now)
	if err := checkIncarnation("sender", sender, incarnation, newest, now); err != nil {
		s.refusedLocked(sender, incarnation, newest, now, err)
		return err
	}
	delete(s.fenced, sender)
	s.incarnations[sender] = incarnation
	if incarnation > newest {
		for o := range s.open[sender] {
			if o.incarnation < incarnation {
				o.cancel(fmt.Errorf("%w: %s incarnation %d replaced by %d", ErrStaleIncarnation, sender, o.incarnation, incarnation))
			}
		}
	}
	return nil
}

// refusedLocked records a refused claim: a fenced sender (its claim older
// than the newest seen), or a claim ahead of the clock, each logged once.
func (s *Server) refusedLocked(sender string, incarnation, newest uint64, now time.Time, err error) {
	switch {
	case errors.Is(err, ErrStaleIncarnation):
		if f := s.fenced[sender]; f != nil {
			f.Refused, f.Newest = incarnation, newest
			f.Refusals++
			return
		}
		if len(s.fenced) >= maxTracked {
			return
		}
		s.fenced[sender] = &Fenced{Instance: sender, Refused: incarnation, Newest: newest, Refusals: 1, Since: now}
		s.log.Warn("fenced: refusing a sender's incarnation, a newer one was seen; listed in Status until it is taken again",
			"sender", sender, "incarnation", incarnation, "newest", newest)
	case errors.Is(err, errIncarnationAhead):
		if s.ahead[sender] || len(s.ahead) >= maxTracked {
			return
		}
		s.ahead[sender] = true
		s.log.Warn("refused an incarnation ahead of this process's clock (a forged claim, or clocks that disagree); its later refusals are not logged",
			"sender", sender, "incarnation", incarnation, "error", err)
	}
}

// Fenced lists the sender instances this server refuses now as older than
// the newest incarnation seen of them, by name.
func (s *Server) Fenced() []Fenced {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Fenced, 0, len(s.fenced))
	for _, f := range s.fenced {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b Fenced) int { return strings.Compare(a.Instance, b.Instance) })
	return out
}

// track registers an open stream until the returned function is called.
func (s *Server) track(sender string, o *openStream) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[sender] == nil {
		s.open[sender] = map[*openStream]bool{}
	}
	s.open[sender][o] = true
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.open[sender], o)
	}
}

// Exchange serves one channel.
func (s *Server) Exchange(stream wololov1.StageService_ExchangeServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	open := first.GetOpen()
	if open == nil {
		return status.Error(codes.InvalidArgument, "first frame must be open")
	}
	if open.Receiver != s.self {
		// A peer that reached the wrong process (a stale address after a
		// restart) retries; Unavailable says so.
		return status.Errorf(codes.Unavailable, "this is %s, not %s", s.self, open.Receiver)
	}
	if !ValidJob(open.JobId) {
		return toStatus(fmt.Errorf("%w: job id %q", errBadChannel, open.JobId))
	}
	if open.Stream == "" || len(open.Stream) > MaxNameLen {
		return toStatus(fmt.Errorf("%w: a stream name of %d bytes (1 to %d)", errBadChannel, len(open.Stream), MaxNameLen))
	}
	if err := s.checkPeer(stream.Context(), open.Sender); err != nil {
		return toStatus(err)
	}
	ch := ChannelID{Job: open.JobId, Stream: open.Stream, Sender: open.Sender, Receiver: s.self}
	if err := s.fence(open.Sender, open.Incarnation); err != nil {
		// A zombie retries for as long as it lives: one line per sender
		// a minute, with the count of those left out.
		s.warns.Log(s.log, hclog.Warn, "fenced/"+ch.Sender, "refused stream: its sender's incarnation", "job", ch.Job, "stream", ch.Stream, "sender", ch.Sender, "error", err)
		return toStatus(err)
	}
	wm, err := s.handler.Open(ch)
	if err != nil {
		return toStatus(err)
	}

	var sendMu sync.Mutex
	closed := false
	defer func() {
		sendMu.Lock()
		closed = true
		sendMu.Unlock()
	}()
	send := func(r *wololov1.ExchangeResponse) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		if closed {
			return nil
		}
		return stream.Send(r)
	}
	if err := send(&wololov1.ExchangeResponse{Frame: &wololov1.ExchangeResponse_Hello{Hello: &wololov1.Hello{Watermark: wm, Incarnation: s.incarnation, SenderRebuilt: s.vouches(ch)}}}); err != nil {
		return err
	}

	ctx, cancel := context.WithCancelCause(stream.Context())
	defer cancel(nil)
	defer s.track(open.Sender, &openStream{incarnation: open.Incarnation, cancel: cancel})()
	frames := make(chan *wololov1.Batch)
	go func() {
		for {
			req, err := stream.Recv()
			if err == io.EOF {
				cancel(io.EOF)
				return
			}
			if err != nil {
				cancel(err)
				return
			}
			b := req.GetBatch()
			if b == nil {
				cancel(status.Error(codes.InvalidArgument, "expected a batch frame"))
				return
			}
			select {
			case frames <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			cause := context.Cause(ctx)
			if errors.Is(cause, io.EOF) {
				return nil
			}
			return toStatus(cause)
		case b := <-frames:
			if err := s.fence(open.Sender, open.Incarnation); err != nil {
				return toStatus(err)
			}
			seq := b.Seq
			done := func(err error) {
				if err != nil {
					cancel(err)
					return
				}
				ack := &wololov1.ExchangeResponse{Frame: &wololov1.ExchangeResponse_Ack{Ack: &wololov1.Ack{Seq: seq}}}
				if err := send(ack); err != nil {
					cancel(err)
				}
			}
			if err := s.handler.Deliver(ctx, ch, b, done); err != nil {
				return toStatus(err)
			}
		}
	}
}

// ReasonUnknownJob is the ErrorInfo reason of a NOT_FOUND that refuses a
// job the receiver was never introduced to (ErrUnknownJob), which a sender
// must tell from a dropped job's NOT_FOUND: it drops a dropped job's
// channel, but fails a job its receiver does not know.
const ReasonUnknownJob = "JOB_NOT_INTRODUCED"

// ReasonChannelRefused is the ErrorInfo reason of an INVALID_ARGUMENT
// that refuses a channel for what it is, which no retry changes: a stream
// name or job id the protocol does not take, a stream the receiver does
// not take from that sender (ErrUnknownChannel), a job whose plan cannot
// run there (ErrBadPlan). A sender fails the job with the refusal
// (IsChannelRefused). Other INVALID_ARGUMENTs carry no reason, and a
// sender retries them: an incarnation ahead of the receiver's clock is
// refused until the clocks agree.
const ReasonChannelRefused = "CHANNEL_REFUSED"

// errBadChannel: an Open whose job id or stream name the protocol does
// not take (ReasonChannelRefused).
var errBadChannel = fmt.Errorf("%w: channel refused", ErrInvalid)

// IsChannelRefused reports whether err is a receiver's refusal of a
// channel that no retry gets through (ReasonChannelRefused), locally or
// as a gRPC status.
func IsChannelRefused(err error) bool {
	return errors.Is(err, ErrUnknownChannel) || errors.Is(err, ErrBadPlan) || errors.Is(err, errBadChannel) ||
		errinfo.Is(err, codes.InvalidArgument, errorDomain, ReasonChannelRefused)
}

// errorDomain is the ErrorInfo domain of the protocol's refusals.
const errorDomain = "wololo.v1.StageService"

// IsUnknownJob reports whether err is a receiver's refusal of a job it was
// never introduced to (ErrUnknownJob), locally or as a gRPC status.
func IsUnknownJob(err error) bool {
	return errors.Is(err, ErrUnknownJob) || errinfo.Is(err, codes.NotFound, errorDomain, ReasonUnknownJob)
}

// toStatus maps protocol errors to gRPC status codes.
func toStatus(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, ErrStaleIncarnation), errors.Is(err, ErrAfterEOF):
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, ErrUnknownJob):
		return errinfo.New(codes.NotFound, err.Error(), errorDomain, ReasonUnknownJob)
	case errors.Is(err, ErrJobDropped):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, ErrUnknownChannel), errors.Is(err, ErrBadPlan), errors.Is(err, errBadChannel):
		return errinfo.New(codes.InvalidArgument, err.Error(), errorDomain, ReasonChannelRefused)
	case errors.Is(err, ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, ErrUnauthenticated):
		return status.Error(codes.Unauthenticated, err.Error())
	case errors.Is(err, ErrNotPeer), errors.Is(err, ErrNotSelf):
		return status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, ErrTooManyJobs):
		return status.Error(codes.ResourceExhausted, err.Error())
	case errors.Is(err, ErrSeqGap):
		return status.Error(codes.Aborted, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	default:
		return status.Error(codes.Internal, err.Error())
	}
}
