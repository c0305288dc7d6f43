package sqlops

import (
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// Exchange writes an operator's output rows on a channel: per route, the
// rows its condition holds for, as the columns the route reads, each to
// the receiving instance the hash of the row's key picks (stage.Route of
// the key's one form: a text key's bytes, else its values' AppendKey).
type Exchange struct {
	ch     *physical.Channel
	to     int   // receiving instances
	inputs []int // per route, the index of the channel among its consumer's inputs
	// send takes the batches Apply routes, as ColumnBatches.
	send Sender
}

// Apply routes a batch to send (the Task's Sender).
func (x *Exchange) Apply(_ int, b *exec.Batch, _ Out) error {
	if x.send == nil {
		return fmt.Errorf("exchange to %s: nowhere to send", x.ch.Name)
	}
	return x.Route(b, func(route, to int, b *exec.Batch) error {
		for _, c := range chunks(b) {
			if err := x.send(x.ch, route, to, ToRows(c)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Chunks bound what one message carries: at most chunkRows rows and
// about chunkBytes of values, well within a message of the transport
// (services/wire/rpc.MaxMessageBytes, 4 MiB), whatever an operator made
// of its input (a join's rows are as wide as both sides').
const (
	chunkRows  = 8192
	chunkBytes = 1 << 20
)

// chunks cuts b into runs of rows within the chunk bounds (of rows of
// about the batch's average width): b itself when it is within them.
func chunks(b *exec.Batch) []*exec.Batch {
	size := 0
	for _, v := range b.Cols {
		switch {
		case v.Type == plan.Text && b.N > 0:
			size += int(v.Ends[b.N-1]) + 4*b.N
		default:
			size += 8 * b.N // about a number's or a boolean's text
		}
	}
	per := chunkRows
	if size > chunkBytes {
		per = min(per, max(1, int(int64(b.N)*chunkBytes/int64(size))))
	}
	if b.N <= per {
		return []*exec.Batch{b}
	}
	out := make([]*exec.Batch, 0, (b.N+per-1)/per)
	for start := 0; start < b.N; start += per {
		rows := make([]int32, 0, per)
		for r := start; r < min(start+per, b.N); r++ {
			rows = append(rows, int32(r))
		}
		out = append(out, b.Rows(rows))
	}
	return out
}

// Finish does nothing: the channel's end is the Task's to send.
func (x *Exchange) Finish(Out) error { return nil }

// NewExchange returns the exchange writing channel ch of plan p, to a
// task of `to` instances.
func NewExchange(p *physical.Plan, ch *physical.Channel, to int) (*Exchange, error) {
	x := &Exchange{ch: ch, to: to}
	for ri, rt := range ch.Routes {
		if rt.Consumer < 0 || rt.Consumer >= len(p.Ops) {
			return nil, fmt.Errorf("channel %s route %d: no consumer #%d", ch.Name, ri, rt.Consumer)
		}
		k := -1
		for j, in := range p.Ops[rt.Consumer].Inputs {
			if in.Channel == ch.Name && in.Route == ri {
				k = j
			}
		}
		if k < 0 {
			return nil, fmt.Errorf("channel %s route %d: #%d does not read it", ch.Name, ri, rt.Consumer)
		}
		for _, c := range rt.Cols {
			if c < 0 || c >= len(ch.Exprs) {
				return nil, fmt.Errorf("channel %s route %d: column %d of %d", ch.Name, ri, c, len(ch.Exprs))
			}
		}
		x.inputs = append(x.inputs, k)
	}
	for _, c := range ch.Key {
		if c < 0 || c >= len(ch.Exprs) {
			return nil, fmt.Errorf("channel %s: key column %d of %d", ch.Name, c, len(ch.Exprs))
		}
	}
	return x, nil
}

// Route sends the rows of b, a batch of the producer's input, to send:
// per route, to each receiving instance, one batch. Each row's receiving
// instance is computed once for every route, and a route's rows are its
// columns gathered once per instance (no copy of rows its condition
// drops, or of columns it does not carry).
func (x *Exchange) Route(b *exec.Batch, send func(route, to int, b *exec.Batch) error) error {
	if b.N == 0 {
		return nil
	}
	var dest []int32 // each row's receiving instance; nil: all to 0
	if len(x.ch.Key) > 0 && x.to > 1 {
		keys := make([]*plan.Expr, len(x.ch.Key))
		for i, c := range x.ch.Key {
			keys[i] = x.ch.Exprs[c]
		}
		kb, err := exec.Project(keys, []*exec.Batch{b})
		if err != nil {
			return err
		}
		dest = make([]int32, b.N)
		var key []byte
		for i := range b.N {
			key = RouteKey(key[:0], kb[0].Cols, i)
			dest[i] = int32(stage.Route(key, x.to))
		}
	}
	for ri, rt := range x.ch.Routes {
		var rows []int32 // the rows the route's condition holds for; nil: all
		if rt.Cond != nil {
			var err error
			if rows, err = exec.TrueRows(rt.Cond, b); err != nil {
				return err
			}
			if len(rows) == 0 {
				continue
			}
			if len(rows) == b.N {
				rows = nil
			}
		}
		exprs := make([]*plan.Expr, len(rt.Cols))
		for i, c := range rt.Cols {
			exprs[i] = x.ch.Exprs[c]
		}
		cols, err := exec.Project(exprs, []*exec.Batch{b})
		if err != nil {
			return err
		}
		if dest == nil {
			out := cols[0]
			if rows != nil {
				out = out.Rows(rows)
			}
			if err := send(ri, 0, out); err != nil {
				return err
			}
			continue
		}
		byTo := make([][]int32, x.to)
		if rows == nil {
			for i, t := range dest {
				byTo[t] = append(byTo[t], int32(i))
			}
		} else {
			for _, i := range rows {
				byTo[dest[i]] = append(byTo[dest[i]], i)
			}
		}
		for t, rs := range byTo {
			if len(rs) > 0 {
				if err := send(ri, t, cols[0].Rows(rs)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// RouteKey appends the bytes a row's key is routed by: the text itself
// for one text column (as the deployment routes a match token), else each
// value's exec.AppendKey, so that equal numbers go to one instance
// whatever their trailing zeros.
func RouteKey(dst []byte, keys []*exec.Vec, i int) []byte {
	if len(keys) == 1 && keys[0].Type == plan.Text && !keys[0].IsNull(i) {
		return append(dst, keys[0].Text(i)...)
	}
	for _, k := range keys {
		dst = exec.AppendKey(dst, k, i)
	}
	return dst
}
