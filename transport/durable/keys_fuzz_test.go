package durable

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wololo/wololo/transport"
)

// FuzzJobKeys: every key the store writes parses back to what it was made
// from, stays inside its job's range [jobPrefix, jobEnd) and outside every
// other job's; and parseJobKey never panics on arbitrary bytes (a store
// opened on someone else's files).
func FuzzJobKeys(f *testing.F) {
	f.Add("job-1", "q3-civs", "q3-aggregator-0", "gateway-0", "job/meta", uint64(7), []byte("j\x00"))
	f.Add("a", "", "", "", "", uint64(0), []byte("jx\x00o\x00\x00\x00\x00"))
	f.Add("j", "s", "x", "y", "upload/matches", ^uint64(0), []byte("j\x00s1234567"))
	f.Fuzz(func(t *testing.T, job, stream, sender, receiver, name string, n uint64, raw []byte) {
		if len(raw) > 0 && raw[0] == spaceJob {
			_, _ = parseJobKey(raw) // must not panic
		}
		ch := transport.ChannelID{Job: job, Stream: stream, Sender: sender, Receiver: receiver}
		if checkJob(job) != nil || checkChannel(ch) != nil {
			return // refused before any key is made
		}
		if strings.IndexByte(name, 0) >= 0 {
			return
		}
		keys := map[byte][]byte{
			0:             jobPrefix(job),
			kindRecord:    recordKey(job, name),
			kindState:     stateKey(job, n),
			kindOutbox:    outboxKey(job, ch, n),
			kindAcked:     channelKey(job, kindAcked, ch),
			kindReserved:  channelKey(job, kindReserved, ch),
			kindWatermark: channelKey(job, kindWatermark, ch),
		}
		lo, hi := jobPrefix(job), jobEnd(job)
		other := job + "x"
		for kind, k := range keys {
			p, err := parseJobKey(k)
			if err != nil {
				t.Fatalf("kind %q: key %q does not parse: %v", kind, k, err)
			}
			if p.job != job || p.kind != kind {
				t.Fatalf("key %q parsed as job %q kind %q", k, p.job, p.kind)
			}
			switch kind {
			case kindRecord:
				if p.name != name {
					t.Fatalf("record name %q came back %q", name, p.name)
				}
			case kindState, kindOutbox:
				if p.n != n {
					t.Fatalf("n %d came back %d", n, p.n)
				}
			}
			if kind == kindOutbox || kind == kindAcked || kind == kindReserved || kind == kindWatermark {
				if p.ch != ch {
					t.Fatalf("channel %v came back %v", ch, p.ch)
				}
			}
			if bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) >= 0 {
				t.Fatalf("key %q of job %q lies outside its range", k, job)
			}
			if bytes.Compare(k, jobPrefix(other)) >= 0 && bytes.Compare(k, jobEnd(other)) < 0 {
				t.Fatalf("key %q of job %q lies inside job %q's range", k, job, other)
			}
		}
		if k := outboxKey(job, ch, n); n < ^uint64(0) && bytes.Compare(k, outboxEnd(job, ch, n)) >= 0 {
			t.Fatalf("outbox key %q not below its end", k)
		}
	})
}
