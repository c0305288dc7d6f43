package stage

import (
	"errors"
	"fmt"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

func TestPlanGroup(t *testing.T) {
	a := transport.ChannelID{Job: "j", Stream: "s", Sender: "a", Receiver: "r"}
	b := transport.ChannelID{Job: "j", Stream: "s", Sender: "b", Receiver: "r"}
	d := func(ch transport.ChannelID, seq uint64) delivery {
		return delivery{ch: ch, batch: &wololov1.Batch{Seq: seq}}
	}
	eof := func(ch transport.ChannelID, seq uint64) delivery {
		return delivery{ch: ch, batch: &wololov1.Batch{Seq: seq, Eof: true}}
	}
	name := func(x delivery) string {
		if x.batch.Eof {
			return fmt.Sprintf("%s%de", x.ch.Sender, x.batch.Seq)
		}
		return fmt.Sprintf("%s%d", x.ch.Sender, x.batch.Seq)
	}
	type marks = map[transport.ChannelID]uint64
	cases := []struct {
		name                 string
		durable              marks
		ended                map[transport.ChannelID]bool // durably
		group                []delivery
		apply, dups, refused string // refused: each with why (gap, eof)
		marks                marks
		endsNow              string
	}{
		{"next of each channel", nil, nil, []delivery{d(a, 1), d(b, 1)}, "[a1 b1]", "[]", "[]", marks{a: 1, b: 1}, "[]"},
		{"a run of one channel in one group", nil, nil, []delivery{d(a, 1), d(a, 2), d(a, 3)}, "[a1 a2 a3]", "[]", "[]", marks{a: 3}, "[]"},
		{"a resend below the watermark", marks{a: 4}, nil, []delivery{d(a, 3), d(a, 5)}, "[a5]", "[a3]", "[]", marks{a: 5}, "[]"},
		{"a resend of what the group applies", nil, nil, []delivery{d(a, 1), d(a, 1)}, "[a1]", "[a1]", "[]", marks{a: 1}, "[]"},
		{"a gap is refused, the others applied", marks{b: 2}, nil, []delivery{d(a, 2), d(b, 3)}, "[b3]", "[]", "[a2:gap]", marks{b: 3}, "[]"},
		{"nothing new", marks{a: 2}, nil, []delivery{d(a, 1), d(a, 2)}, "[]", "[a1 a2]", "[]", marks{}, "[]"},
		{"an EOF ends its channel", marks{a: 1}, nil, []delivery{eof(a, 2), d(b, 1)}, "[a2e b1]", "[]", "[]", marks{a: 2, b: 1}, "[a]"},
		{"a batch after an EOF of the same group", nil, nil, []delivery{eof(a, 1), d(a, 2), eof(a, 3)}, "[a1e]", "[]", "[a2:eof a3e:eof]", marks{a: 1}, "[a]"},
		{"a second EOF after a durable one", marks{a: 5}, map[transport.ChannelID]bool{a: true}, []delivery{eof(a, 6), d(b, 1)}, "[b1]", "[]", "[a6e:eof]", marks{b: 1}, "[]"},
		{"a batch far past a durable EOF", marks{a: 5}, map[transport.ChannelID]bool{a: true}, []delivery{d(a, 9)}, "[]", "[]", "[a9:eof]", marks{}, "[]"},
		{"resends of an ended channel are duplicates", marks{a: 5}, map[transport.ChannelID]bool{a: true}, []delivery{d(a, 4), eof(a, 5)}, "[]", "[a4 a5e]", "[]", marks{}, "[]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := planGroup(c.group, func(ch transport.ChannelID) (uint64, bool) { return c.durable[ch], c.ended[ch] })
			names := func(ds []delivery) string {
				out := []string{}
				for _, x := range ds {
					out = append(out, name(x))
				}
				return fmt.Sprint(out)
			}
			refused := []string{}
			for _, r := range p.refused {
				switch {
				case errors.Is(r.err, transport.ErrSeqGap):
					refused = append(refused, name(r.d)+":gap")
				case errors.Is(r.err, transport.ErrAfterEOF):
					refused = append(refused, name(r.d)+":eof")
				default:
					t.Errorf("refusal of %s: %v, want ErrSeqGap or ErrAfterEOF", name(r.d), r.err)
				}
			}
			if got := names(p.apply); got != c.apply {
				t.Errorf("apply %s, want %s", got, c.apply)
			}
			if got := names(p.dups); got != c.dups {
				t.Errorf("duplicates %s, want %s", got, c.dups)
			}
			if got := fmt.Sprint(refused); got != c.refused {
				t.Errorf("refused %s, want %s", got, c.refused)
			}
			if fmt.Sprint(p.marks) != fmt.Sprint(c.marks) {
				t.Errorf("marks %v, want %v", p.marks, c.marks)
			}
			ends := []string{}
			for _, ch := range p.ended {
				ends = append(ends, ch.Sender)
			}
			if got := fmt.Sprint(ends); got != c.endsNow {
				t.Errorf("ends %s, want %s", got, c.endsNow)
			}
		})
	}
}
