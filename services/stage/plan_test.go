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
	name := func(x delivery) string { return fmt.Sprintf("%s%d", x.ch.Sender, x.batch.Seq) }
	cases := []struct {
		name                 string
		durable              map[transport.ChannelID]uint64
		group                []delivery
		apply, dups, refused string
		marks                map[transport.ChannelID]uint64
	}{
		{"next of each channel", nil, []delivery{d(a, 1), d(b, 1)}, "[a1 b1]", "[]", "[]", map[transport.ChannelID]uint64{a: 1, b: 1}},
		{"a run of one channel in one group", nil, []delivery{d(a, 1), d(a, 2), d(a, 3)}, "[a1 a2 a3]", "[]", "[]", map[transport.ChannelID]uint64{a: 3}},
		{"a resend below the watermark", map[transport.ChannelID]uint64{a: 4}, []delivery{d(a, 3), d(a, 5)}, "[a5]", "[a3]", "[]", map[transport.ChannelID]uint64{a: 5}},
		{"a resend of what the group applies", nil, []delivery{d(a, 1), d(a, 1)}, "[a1]", "[a1]", "[]", map[transport.ChannelID]uint64{a: 1}},
		{"a gap is refused, the others applied", map[transport.ChannelID]uint64{b: 2}, []delivery{d(a, 2), d(b, 3)}, "[b3]", "[]", "[a2]", map[transport.ChannelID]uint64{b: 3}},
		{"nothing new", map[transport.ChannelID]uint64{a: 2}, []delivery{d(a, 1), d(a, 2)}, "[]", "[a1 a2]", "[]", map[transport.ChannelID]uint64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := planGroup(c.group, func(ch transport.ChannelID) uint64 { return c.durable[ch] })
			names := func(ds []delivery) string {
				out := []string{}
				for _, x := range ds {
					out = append(out, name(x))
				}
				return fmt.Sprint(out)
			}
			var refused []delivery
			for _, r := range p.refused {
				if !errors.Is(r.err, transport.ErrSeqGap) {
					t.Errorf("refusal of %s: %v, want ErrSeqGap", name(r.d), r.err)
				}
				refused = append(refused, r.d)
			}
			if got := names(p.apply); got != c.apply {
				t.Errorf("apply %s, want %s", got, c.apply)
			}
			if got := names(p.dups); got != c.dups {
				t.Errorf("duplicates %s, want %s", got, c.dups)
			}
			if got := names(refused); got != c.refused {
				t.Errorf("refused %s, want %s", got, c.refused)
			}
			if fmt.Sprint(p.marks) != fmt.Sprint(c.marks) {
				t.Errorf("marks %v, want %v", p.marks, c.marks)
			}
		})
	}
}
