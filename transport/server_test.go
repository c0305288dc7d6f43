package transport

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// countingHandler records what reached it.
type countingHandler struct{ opens, drops, introductions int }

func (h *countingHandler) Open(ChannelID) (uint64, error) { h.opens++; return 0, nil }
func (h *countingHandler) Deliver(context.Context, ChannelID, *wololov1.Batch, func(error)) error {
	return nil
}
func (h *countingHandler) DropJob(string) error              { h.drops++; return nil }
func (h *countingHandler) IntroduceJob(string, []byte) error { h.introductions++; return nil }

// openOnly is an Exchange stream that sends one Open frame and ends.
type openOnly struct {
	grpc.ServerStream
	ctx  context.Context // nil: context.Background()
	open *wololov1.Open
	sent bool
}

func (s *openOnly) Context() context.Context {
	if s.ctx != nil {
		return s.ctx
	}
	return context.Background()
}
func (s *openOnly) Send(*wololov1.ExchangeResponse) error {
	return nil
}
func (s *openOnly) Recv() (*wololov1.ExchangeRequest, error) {
	if s.sent {
		return nil, io.EOF
	}
	s.sent = true
	return &wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Open{Open: s.open}}, nil
}

// TestServerChecksClaimsBeforeState: malformed job ids, strangers and
// incarnations out of range are refused with the right code before the
// handler or the fencing table hears of them.
func TestServerChecksClaimsBeforeState(t *testing.T) {
	h := &countingHandler{}
	s := NewServer("b-0", 1, h, nil)
	s.SetPeers(func(instance string) bool { return instance == "a-0" })
	open := func(job, stream, sender string, inc uint64) error {
		return s.Exchange(&openOnly{open: &wololov1.Open{JobId: job, Stream: stream, Sender: sender, Receiver: "b-0", Incarnation: inc}})
	}
	cases := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"open with a NUL in the job id", func() error { return open("j\x00", "s", "a-0", 1) }, codes.InvalidArgument},
		{"open with a 1 MB job id", func() error { return open(strings.Repeat("j", 1<<20), "s", "a-0", 1) }, codes.InvalidArgument},
		{"open with a 1 MB stream name", func() error { return open("j", strings.Repeat("s", 1<<20), "a-0", 1) }, codes.InvalidArgument},
		{"open from a stranger", func() error { return open("j", "s", "q9-stranger-0", 1) }, codes.PermissionDenied},
		{"open from a 1 MB sender name", func() error { return open("j", "s", strings.Repeat("a", 1<<20), 1) }, codes.InvalidArgument},
		{"open claiming the largest incarnation", func() error { return open("j", "s", "a-0", math.MaxUint64) }, codes.InvalidArgument},
		{"announce from a stranger", func() error {
			_, err := s.Announce(context.Background(), &wololov1.AnnounceRequest{Sender: "x-0", Incarnation: 1})
			return err
		}, codes.PermissionDenied},
		{"announce of the largest incarnation", func() error {
			_, err := s.Announce(context.Background(), &wololov1.AnnounceRequest{Sender: "a-0", Incarnation: math.MaxUint64})
			return err
		}, codes.InvalidArgument},
		{"drop of a job id with a NUL", func() error {
			_, err := s.DropJob(context.Background(), &wololov1.DropJobRequest{JobId: "j\x00"})
			return err
		}, codes.InvalidArgument},
		{"drop of an empty job id", func() error {
			_, err := s.DropJob(context.Background(), &wololov1.DropJobRequest{})
			return err
		}, codes.InvalidArgument},
		{"introduction of a job id with a NUL", func() error {
			_, err := s.IntroduceJob(context.Background(), &wololov1.IntroduceJobRequest{JobId: "j\x00"})
			return err
		}, codes.InvalidArgument},
		{"introduction of a 1 MB job id", func() error {
			_, err := s.IntroduceJob(context.Background(), &wololov1.IntroduceJobRequest{JobId: strings.Repeat("j", 1<<20)})
			return err
		}, codes.InvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := status.Code(c.call()); got != c.want {
				t.Fatalf("code %s, want %s", got, c.want)
			}
		})
	}
	if h.opens != 0 || h.drops != 0 || h.introductions != 0 {
		t.Fatalf("the handler saw %d opens, %d drops and %d introductions of refused claims", h.opens, h.drops, h.introductions)
	}
	if len(s.incarnations) != 0 {
		t.Fatalf("refused claims were recorded for fencing: %v", s.incarnations)
	}
	// The real sender, its real incarnation: accepted, not fenced by the
	// refused claims.
	if err := open("j", "s", "a-0", 3); err != nil {
		t.Fatalf("the real sender was refused: %v", err)
	}
	if _, err := s.Announce(context.Background(), &wololov1.AnnounceRequest{Sender: "a-0", Incarnation: 4}); err != nil {
		t.Fatalf("the real sender's next incarnation was refused: %v", err)
	}
	if h.opens != 1 {
		t.Fatalf("handler opens %d, want 1", h.opens)
	}
}

// TestRefusalCodes: the protocol's refusals reach a sender as the codes it
// acts on. A job never introduced and a dropped job are both NOT_FOUND,
// told apart by the ErrorInfo reason (a sender fails the one and drops the
// other's channel); a batch after an EOF is FAILED_PRECONDITION; a limit is
// RESOURCE_EXHAUSTED; a channel refused for what it is (an unknown
// stream, a plan that cannot run, a stream name too long) is
// INVALID_ARGUMENT with the reason that makes a sender fail the job
// (IsChannelRefused), told from another INVALID_ARGUMENT (an incarnation
// ahead of the clock), which a sender retries.
func TestRefusalCodes(t *testing.T) {
	cases := []struct {
		err     error
		code    codes.Code
		unknown bool
		refused bool
	}{
		{fmt.Errorf("%w: b-0 was never told of job j", ErrUnknownJob), codes.NotFound, true, false},
		{fmt.Errorf("open: %w", fmt.Errorf("%w: j", ErrUnknownJob)), codes.NotFound, true, false},
		{fmt.Errorf("%w: j", ErrJobDropped), codes.NotFound, false, false},
		{fmt.Errorf("%w: got 3 after its EOF at 2", ErrAfterEOF), codes.FailedPrecondition, false, false},
		{fmt.Errorf("%w: b-0 holds 9 jobs already", ErrTooManyJobs), codes.ResourceExhausted, false, false},
		{status.Error(codes.NotFound, "job not introduced: a lookalike without the reason"), codes.NotFound, false, false},
		{fmt.Errorf("%w: b-0 does not take s from a-0", ErrUnknownChannel), codes.InvalidArgument, false, true},
		{fmt.Errorf("%w: job j: no task x", ErrBadPlan), codes.InvalidArgument, false, true},
		{fmt.Errorf("%w: a stream name of 200 bytes", errBadChannel), codes.InvalidArgument, false, true},
		{fmt.Errorf("%w: a-0 claims incarnation 9", errIncarnationAhead), codes.InvalidArgument, false, false},
		{status.Error(codes.InvalidArgument, "unknown channel: a lookalike without the reason"), codes.InvalidArgument, false, false},
	}
	for _, c := range cases {
		st := toStatus(c.err)
		if status.Code(st) != c.code || IsUnknownJob(st) != c.unknown || IsUnknownJob(fmt.Errorf("await hello: %w", st)) != c.unknown {
			t.Errorf("%v: %v (unknown job %v), want %s (unknown job %v)", c.err, st, IsUnknownJob(st), c.code, c.unknown)
		}
		if IsChannelRefused(fmt.Errorf("await hello: %w", st)) != c.refused {
			t.Errorf("%v: %v refuses the channel: %v, want %v", c.err, st, !c.refused, c.refused)
		}
		if !strings.Contains(c.err.Error(), status.Convert(st).Message()) {
			t.Errorf("%v: the status says %q", c.err, status.Convert(st).Message())
		}
	}
}

// caller is a verified caller as a test's Identify reads it off a context.
type caller struct{ instance, who string }

type callerKey struct{}

// as is a call's context from c; a context without one has no verified
// certificate.
func as(c caller) context.Context { return context.WithValue(context.Background(), callerKey{}, c) }

func identify(ctx context.Context) (string, string, bool) {
	c, ok := ctx.Value(callerKey{}).(caller)
	return c.instance, c.who, ok
}

// TestServerBindsClaimsToTheCaller: with RequireIdentity, a stream's or an
// announcement's sender and a failure's reporter must be the instance the
// caller's certificate names, and only the gateway introduces and drops
// jobs; nothing reaches the handler or the fencing table before that.
func TestServerBindsClaimsToTheCaller(t *testing.T) {
	h := &countingHandler{}
	s := NewServer("b-0", 1, h, nil)
	s.SetPeers(func(instance string) bool { return instance == "a-0" || instance == "a-1" })
	s.RequireIdentity("gw-0", identify)
	var failed []string
	s.OnFailJob(func(f JobFailure) error { failed = append(failed, f.Reporter+" lost "+f.Lost); return nil })
	var (
		a0      = as(caller{"a-0", `instance "a-0"`})
		a1      = as(caller{"a-1", `instance "a-1"`})
		gw      = as(caller{"gw-0", `instance "gw-0"`})
		client  = as(caller{"", `client "a-0"`})
		unknown = context.Background()
	)
	open := func(ctx context.Context, sender string) error {
		return s.Exchange(&openOnly{ctx: ctx, open: &wololov1.Open{JobId: "j", Stream: "s", Sender: sender, Receiver: "b-0", Incarnation: 1}})
	}
	announce := func(ctx context.Context, sender string) error {
		_, err := s.Announce(ctx, &wololov1.AnnounceRequest{Sender: sender, Incarnation: 1})
		return err
	}
	introduce := func(ctx context.Context) error {
		_, err := s.IntroduceJob(ctx, &wololov1.IntroduceJobRequest{JobId: "j"})
		return err
	}
	drop := func(ctx context.Context) error {
		_, err := s.DropJob(ctx, &wololov1.DropJobRequest{JobId: "j"})
		return err
	}
	fail := func(ctx context.Context, reporter string) error {
		_, err := s.FailJob(ctx, &wololov1.FailJobRequest{JobId: "j", Reporter: reporter, StateLost: true, Lost: "b-0"})
		return err
	}
	refused := []struct {
		name string
		err  error
		want codes.Code
	}{
		{"open without a certificate", open(unknown, "a-0"), codes.Unauthenticated},
		{"open as another instance", open(a1, "a-0"), codes.PermissionDenied},
		{"open by a client named like the instance", open(client, "a-0"), codes.PermissionDenied},
		{"announce as another instance", announce(a1, "a-0"), codes.PermissionDenied},
		{"announce without a certificate", announce(unknown, "a-0"), codes.Unauthenticated},
		{"introduction by an instance but the gateway", introduce(a0), codes.PermissionDenied},
		{"introduction without a certificate", introduce(unknown), codes.Unauthenticated},
		{"drop by an instance but the gateway", drop(a0), codes.PermissionDenied},
		{"failure reported for another instance", fail(a1, "a-0"), codes.PermissionDenied},
		{"failure naming a lost instance past a name's length", func() error {
			_, err := s.FailJob(a0, &wololov1.FailJobRequest{JobId: "j", Reporter: "a-0", StateLost: true, Lost: strings.Repeat("x", MaxNameLen+1)})
			return err
		}(), codes.InvalidArgument},
	}
	for _, c := range refused {
		if got := status.Code(c.err); got != c.want {
			t.Errorf("%s: code %s (%v), want %s", c.name, got, c.err, c.want)
		}
	}
	if h.opens != 0 || h.drops != 0 || h.introductions != 0 || len(failed) != 0 || len(s.incarnations) != 0 {
		t.Fatalf("refused claims got through: %d opens, %d drops, %d introductions, failures %v, incarnations %v", h.opens, h.drops, h.introductions, failed, s.incarnations)
	}
	for name, err := range map[string]error{
		"introduction by the gateway": introduce(gw),
		"open as itself":              open(a0, "a-0"),
		"announce as itself":          announce(a1, "a-1"),
		"failure reported by itself":  fail(a1, "a-1"),
		"drop by the gateway":         drop(gw),
	} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if h.opens != 1 || h.drops != 1 || h.introductions != 1 || len(failed) != 1 || failed[0] != "a-1 lost b-0" {
		t.Fatalf("the handler saw %d opens, %d drops, %d introductions, failures %q; want one each, a-1's naming b-0 lost", h.opens, h.drops, h.introductions, failed)
	}
}
