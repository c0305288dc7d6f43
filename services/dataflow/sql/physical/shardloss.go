package physical

import (
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// What a plan allows when one shard instance loses its state (its store
// wiped in the middle of a job): whether that instance alone can be
// rebuilt, exactly, from the batches the gateway sent it (and kept), while the other
// instances keep theirs; services/roles/gateway/rebuild.go holds the
// design and the argument. The plan decides half of it (ShardLoss); the
// other half is what the lost instance's receivers had applied of it when
// it was lost (ShardLoss.Exact).

// ShardLoss is what the plan allows when a shard instance loses its
// state.
type ShardLoss struct {
	// Whole says why a loss needs the whole job run again whatever was
	// applied of the lost instance (a channel from shard to shard, or a
	// standing job's plan); "" when a shard can be rebuilt alone.
	Whole string
	// Outputs are the shard task's channels (all to the gateway when
	// Whole is ""), in the plan's order.
	Outputs []ShardOutput
}

// ShardOutput is one channel the shard task sends on, and how its rows
// are made.
type ShardOutput struct {
	Channel string
	// Follows, when not "", is the channel whose rows this one's are a
	// function of, in their order: the operators between the two each
	// read one input and keep its order, passing, dropping or rewriting
	// a row by that row alone, or by the rows before it (filter, project,
	// distinct). An instance fed the same rows of Follows in the same
	// order sends the same rows in the same order here, whatever batches
	// they come in. "" when its rows depend on how two inputs
	// interleave (a join) or come out only once the inputs end (an
	// aggregate, a sort), where an instance run again may send the same
	// rows in another order.
	Follows string
}

// ShardLoss classifies the plan for the loss of one shard instance.
func (p *Plan) ShardLoss() ShardLoss {
	var l ShardLoss
	if p.Standing {
		l.Whole = "a standing job's plan (its epochs are rebuilt whole, rebuildstanding.go)"
	}
	// Every other channel into the shards is the gateway's, whose outbox
	// keeps what it sent: the input it parsed, and the rows it computed
	// (a subquery's broadcast row, from its own input or from the shards'
	// answers). Those computed from what the lost instance sent are
	// the gateway's to send again only if it applied nothing of the
	// instance that the rebuilt one would send otherwise: Exact's
	// question, the same as for the rows it keeps.
	for _, c := range p.Channels {
		if c.To == p.Shard.Name && c.From == p.Shard.Name && l.Whole == "" {
			l.Whole = fmt.Sprintf("channel %s goes from shard to shard: the lost instance's peers applied what it sent them and hold no copy of what they sent it", c.Name)
		}
		if c.From == p.Shard.Name {
			l.Outputs = append(l.Outputs, ShardOutput{Channel: c.Name, Follows: p.follows(c)})
		}
	}
	return l
}

// Exact says why the lost instance cannot be rebuilt alone, given how
// many batches its receivers had applied on each of its output channels
// (by channel name; absent: none), or "" when it can: the plan allows it
// (Whole is ""), and every channel its receivers applied anything of
// follows an input (Follows), so that the rebuilt instance sends again,
// in the same order, the rows they applied, and they can skip that many
// rows.
func (l ShardLoss) Exact(applied map[string]uint64) string {
	if l.Whole != "" {
		return l.Whole
	}
	for _, o := range l.Outputs {
		if n := applied[o.Channel]; n > 0 && o.Follows == "" {
			return fmt.Sprintf("its receiver applied %d batches of channel %s, whose rows a rebuilt instance may send in another order", n, o.Channel)
		}
	}
	return ""
}

// follows is the channel whose rows c's rows follow in order (see
// ShardOutput.Follows), or "".
func (p *Plan) follows(c *Channel) string {
	if c.Producer < 0 || c.Producer >= len(p.Ops) {
		return ""
	}
	o := p.Ops[c.Producer]
	for {
		if len(o.Inputs) != 1 {
			return ""
		}
		in := o.Inputs[0]
		if in.Channel != "" {
			return in.Channel
		}
		if in.Op < 0 || in.Op >= len(p.Ops) {
			return ""
		}
		o = p.Ops[in.Op]
		switch o.Kind {
		case plan.Filter, plan.Project, plan.Distinct, PartialDistinct:
		default:
			return ""
		}
	}
}
