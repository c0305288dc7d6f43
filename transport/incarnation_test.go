package transport

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

func TestNextIncarnation(t *testing.T) {
	cases := []struct {
		last, atLeast, want uint64
	}{
		{0, 0, 1}, // a new store, no floor
		{4, 0, 5}, // counting up
		{0, 1_700_000_000_000, 1_700_000_000_000},                 // a new store, the clock
		{1_700_000_000_000, 1_700_000_000_000, 1_700_000_000_001}, // twice in a millisecond
		{1_700_000_000_000, 1_600_000_000_000, 1_700_000_000_001}, // the clock went back
		{math.MaxUint64 - 1, 0, math.MaxUint64},
	}
	for _, c := range cases {
		if got, err := NextIncarnation(c.last, c.atLeast); err != nil || got != c.want {
			t.Errorf("NextIncarnation(%d, %d) = %d, %v; want %d", c.last, c.atLeast, got, err, c.want)
		}
	}
	if got, err := NextIncarnation(math.MaxUint64, 0); !errors.Is(err, errIncarnationsExhausted) {
		t.Errorf("NextIncarnation after the largest number = %d, %v; want an error", got, err)
	}
}

func TestClockIncarnation(t *testing.T) {
	if got := ClockIncarnation(time.UnixMilli(1_700_000_000_123).Add(999 * time.Microsecond)); got != 1_700_000_000_123 {
		t.Errorf("ClockIncarnation = %d, want the Unix time in ms", got)
	}
	if got := ClockIncarnation(time.Unix(-5, 0)); got != 0 {
		t.Errorf("ClockIncarnation before 1970 = %d, want 0", got)
	}
}

func TestIncarnationCeiling(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	margin := uint64(IncarnationClockMargin.Milliseconds())
	if got, want := IncarnationCeiling(now), uint64(1_700_000_000_000)+margin; got != want {
		t.Errorf("IncarnationCeiling(%v) = %d, want the clock plus the margin, %d", now, got, want)
	}
	if got, want := IncarnationCeiling(time.UnixMilli(0)), margin; got != want {
		t.Errorf("IncarnationCeiling at 1970 = %d, want the margin, %d", got, want)
	}
}

// TestFenceTakesNewerStartsAndBoundsClaims: a receiver's fence, its clock
// fixed, takes a start on an empty store (a clock-floored number above the
// counted ones before it) and a peer whose clock runs up to the margin
// ahead, refuses an older incarnation (a zombie) and a claim above the
// ceiling however many claims were taken before, and records no refused
// claim.
func TestFenceTakesNewerStartsAndBoundsClaims(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	margin := uint64(IncarnationClockMargin.Milliseconds())
	clock := ClockIncarnation(now)
	type claim struct {
		inc  uint64
		want codes.Code
	}
	cases := []struct {
		name   string
		claims []claim
	}{
		{"counted starts, then a start on an empty store", []claim{{3, codes.OK}, {4, codes.OK}, {clock, codes.OK}, {4, codes.FailedPrecondition}, {clock, codes.OK}}},
		{"a peer's clock ahead by the margin, not more", []claim{{clock + margin + 1, codes.InvalidArgument}, {clock + margin, codes.OK}}},
		{"a forged claim far above", []claim{{clock, codes.OK}, {math.MaxUint64, codes.InvalidArgument}, {clock + 1, codes.OK}}},
		// Stacked claims: each one taken does not raise the bound for the
		// next (a step above the newest did: 11 claims fenced an
		// instance for 3.9 hours).
		{"claims stacked on one at the ceiling", []claim{{clock + margin, codes.OK}, {clock + margin + 1, codes.InvalidArgument}, {clock + margin + 1<<20, codes.InvalidArgument}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewServer("b-0", 1, &countingHandler{}, nil)
			s.now = func() time.Time { return now }
			var newest uint64
			for _, cl := range c.claims {
				_, err := s.Announce(context.Background(), &wololov1.AnnounceRequest{Sender: "a-0", Incarnation: cl.inc})
				if got := status.Code(err); got != cl.want {
					t.Fatalf("announce of %d (newest %d): %v, want %s", cl.inc, newest, err, cl.want)
				}
				if err == nil {
					newest = max(newest, cl.inc)
				}
				if got := s.incarnations["a-0"]; got != newest {
					t.Fatalf("after the announce of %d the fence holds %d, want %d", cl.inc, got, newest)
				}
			}
		})
	}
}

// TestSenderBoundsReceiversIncarnations: a Sender takes a receiver's Hello
// under the same rule: not older than the newest known, not above the
// ceiling.
func TestSenderBoundsReceiversIncarnations(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	clock := ClockIncarnation(now)
	s := NewSender("a-0", 1, NewOutbox(NewMemStore()), nil, nil)
	s.now = func() time.Time { return now }
	steps := []struct {
		inc  uint64
		want error
	}{
		{2, nil},
		{clock, nil}, // restarted on an empty store
		{2, ErrStaleIncarnation},
		{clock + uint64(IncarnationClockMargin.Milliseconds()) + 1, ErrInvalid},
		{math.MaxUint64, ErrInvalid},
		{clock, nil},
	}
	for _, st := range steps {
		err := s.seeReceiver("b-0", st.inc)
		if st.want == nil && err != nil || st.want != nil && !errors.Is(err, st.want) {
			t.Fatalf("Hello of incarnation %d: %v, want %v", st.inc, err, st.want)
		}
	}
	if got := s.receivers["b-0"]; got != clock {
		t.Fatalf("the sender holds incarnation %d of b-0, want %d", got, clock)
	}
}

// TestFencedSendersAreListedAndLoggedOnce: a sender refused as older than
// the newest incarnation seen of it is listed (Fenced) with its refusals,
// until a claim at the newest is taken again; claims ahead of the clock
// are refused with one log line, not one per call.
func TestFencedSendersAreListedAndLoggedOnce(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	clock := ClockIncarnation(now)
	var logs strings.Builder
	s := NewServer("b-0", 1, &countingHandler{}, hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug}))
	s.now = func() time.Time { return now }
	announce := func(sender string, inc uint64) codes.Code {
		_, err := s.Announce(context.Background(), &wololov1.AnnounceRequest{Sender: sender, Incarnation: inc})
		return status.Code(err)
	}
	if c := announce("a-0", clock); c != codes.OK {
		t.Fatalf("first announce: %s", c)
	}
	if got := s.Fenced(); len(got) != 0 {
		t.Fatalf("fenced before any refusal: %+v", got)
	}
	for range 2 {
		if c := announce("a-0", clock-5); c != codes.FailedPrecondition {
			t.Fatalf("an older incarnation: %s, want FailedPrecondition", c)
		}
	}
	want := []Fenced{{Instance: "a-0", Refused: clock - 5, Newest: clock, Refusals: 2, Since: now}}
	if got := s.Fenced(); !slices.Equal(got, want) {
		t.Fatalf("fenced: %+v, want %+v", got, want)
	}
	if c := announce("a-0", clock); c != codes.OK {
		t.Fatalf("the newest again: %s", c)
	}
	if got := s.Fenced(); len(got) != 0 {
		t.Fatalf("fenced after the newest was taken again: %+v", got)
	}

	ahead := clock + uint64(IncarnationClockMargin.Milliseconds()) + 1
	for range 3 {
		if c := announce("c-0", ahead); c != codes.InvalidArgument {
			t.Fatalf("a claim ahead of the clock: %s, want InvalidArgument", c)
		}
	}
	if n := strings.Count(logs.String(), "ahead of this process's clock"); n != 1 {
		t.Fatalf("%d log lines for three claims ahead of the clock, want 1:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "fenced:"); n != 1 {
		t.Fatalf("%d log lines for a fence that refused twice, want 1:\n%s", n, logs.String())
	}
}
