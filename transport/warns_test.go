package transport

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/internal/ratelog"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// TestFencedOpensWarnOncePerInterval: a zombie that opens its streams
// again and again, each refused for its old incarnation, makes one WARN
// line per sender and interval, not one per open; the next line says how
// many it left out. Another sender's refusal is logged at once.
func TestFencedOpensWarnOncePerInterval(t *testing.T) {
	var buf bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Info})
	s := NewServer("b-0", 1, &countingHandler{}, log)
	now := time.Unix(1_700_000_000, 0)
	s.now = func() time.Time { return now }
	open := func(sender string, inc uint64) error {
		return s.Exchange(&openOnly{open: &wololov1.Open{JobId: "j", Stream: "s", Sender: sender, Receiver: "b-0", Incarnation: inc}})
	}
	for _, sender := range []string{"a-0", "c-0"} {
		if err := open(sender, 5); err != nil {
			t.Fatal(err)
		}
	}
	const opens = 500
	for range opens {
		if err := open("a-0", 4); status.Code(err) != codes.FailedPrecondition {
			t.Fatalf("a zombie's open: %v; want FailedPrecondition", err)
		}
		now = now.Add(100 * time.Millisecond) // 50 s in all: within the interval
	}
	warns := func() []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if strings.Contains(l, "refused stream: its sender's incarnation") {
				out = append(out, l)
			}
		}
		return out
	}
	if got := warns(); len(got) != 1 || !strings.Contains(got[0], "sender=a-0") {
		t.Fatalf("%d refused opens within a minute logged %d lines; want 1:\n%s", opens, len(got), buf.String())
	}
	if err := open("c-0", 4); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("another zombie's open: %v", err)
	}
	if got := warns(); len(got) != 2 || !strings.Contains(got[1], "sender=c-0") {
		t.Fatalf("another sender's refusal was not logged at once: %q", got)
	}
	now = now.Add(ratelog.DefaultInterval)
	if err := open("a-0", 4); status.Code(err) != codes.FailedPrecondition {
		t.Fatal(err)
	}
	if got := warns(); len(got) != 3 || !strings.Contains(got[2], "suppressed=499") {
		t.Fatalf("the line after the interval: %q; want one saying 499 were left out", got)
	}
}
