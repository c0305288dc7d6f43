package stage

import (
	"fmt"

	"github.com/wololo/wololo/transport"
)

// plan is what a group of deliveries does, decided from the durable inbox
// watermarks and ended channels alone, before the operator or the store is
// touched: which deliveries to apply (in arrival order, each the next of
// its channel), which are duplicates to acknowledge without applying,
// which are refused (out of sequence, or past a channel's EOF: nothing of
// them is journaled), the watermarks the group's commit moves to and the
// channels whose EOF it applies.
type plan struct {
	apply   []delivery
	dups    []delivery
	refused []refusal
	marks   map[transport.ChannelID]uint64
	ended   []transport.ChannelID
}

// refusal is a delivery refused, with the error its sender gets.
type refusal struct {
	d   delivery
	err error
}

// planGroup plans a group given each channel's durable watermark and
// whether its EOF is applied (state: the Inbox's). A channel may appear
// several times in a group: each delivery is checked against what its
// predecessors in the group leave.
func planGroup(group []delivery, state func(transport.ChannelID) (uint64, bool)) plan {
	p := plan{marks: map[transport.ChannelID]uint64{}}
	ended := map[transport.ChannelID]bool{}
	for _, d := range group {
		wm, ok := p.marks[d.ch]
		end := ended[d.ch]
		if !ok {
			wm, end = state(d.ch)
		}
		switch transport.Check(wm, d.batch.Seq, end) {
		case transport.Duplicate:
			p.dups = append(p.dups, d)
		case transport.Gap:
			p.refused = append(p.refused, refusal{d, fmt.Errorf("%w: %s got %d after %d", transport.ErrSeqGap, d.ch, d.batch.Seq, wm)})
		case transport.Ended:
			p.refused = append(p.refused, refusal{d, fmt.Errorf("%w: %s got %d (eof %v) after its EOF at %d", transport.ErrAfterEOF, d.ch, d.batch.Seq, d.batch.Eof, wm)})
		default:
			p.marks[d.ch] = d.batch.Seq
			p.apply = append(p.apply, d)
			if d.batch.Eof {
				ended[d.ch] = true
				p.ended = append(p.ended, d.ch)
			}
		}
	}
	return p
}
