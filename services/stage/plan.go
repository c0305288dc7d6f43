package stage

import (
	"fmt"

	"github.com/wololo/wololo/transport"
)

// plan is what a group of deliveries does, decided from the durable inbox
// watermarks alone, before the operator or the store is touched: which
// deliveries to apply (in arrival order, each the next of its channel),
// which are duplicates to acknowledge without applying, which are out of
// sequence and refused, and the watermarks the group's commit moves to.
type plan struct {
	apply   []delivery
	dups    []delivery
	refused []refusal
	marks   map[transport.ChannelID]uint64
}

// refusal is a delivery refused, with the error its sender gets.
type refusal struct {
	d   delivery
	err error
}

// planGroup plans a group given each channel's durable watermark. A
// channel may appear several times in a group: each delivery is checked
// against the watermark its predecessors in the group leave.
func planGroup(group []delivery, watermark func(transport.ChannelID) uint64) plan {
	p := plan{marks: map[transport.ChannelID]uint64{}}
	for _, d := range group {
		wm, ok := p.marks[d.ch]
		if !ok {
			wm = watermark(d.ch)
		}
		switch transport.Check(wm, d.batch.Seq) {
		case transport.Duplicate:
			p.dups = append(p.dups, d)
		case transport.Gap:
			p.refused = append(p.refused, refusal{d, fmt.Errorf("%w: %s got %d after %d", transport.ErrSeqGap, d.ch, d.batch.Seq, wm)})
		default:
			p.marks[d.ch] = d.batch.Seq
			p.apply = append(p.apply, d)
		}
	}
	return p
}
