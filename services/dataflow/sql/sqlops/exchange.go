package sqlops

import (
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// Exchange writes an operator's output rows on a channel: each row that
// some route's condition holds for, once, as the channel's columns, with
// the routes it is for, to the receiving instance the hash of the row's
// key picks (stage.Route of the key's one form: a text key's bytes, else
// its values' AppendKey). The receiving Task hands each route's consumer
// its rows and columns (Task.Receive).
type Exchange struct {
	ch *physical.Channel
	to int // receiving instances
	// send takes the batches Apply routes, as ColumnBatches.
	send Sender
}

// Apply routes a batch to send (the Task's Sender): per receiving
// instance, its rows in chunks, each row once with the routes it is for.
func (x *Exchange) Apply(_ int, b *exec.Batch, _ Out) error {
	if x.send == nil {
		return fmt.Errorf("exchange to %s: nowhere to send", x.ch.Name)
	}
	return x.Route(b, func(to int, b *exec.Batch, routes []uint64) error {
		for _, r := range chunkRanges(b) {
			c, rs := b, routes
			if r[0] != 0 || r[1] != b.N {
				c = b.Rows(span(r[0], r[1]))
				if rs != nil {
					rs = rs[r[0]:r[1]]
				}
			}
			if err := x.send(x.ch, to, ToRoutedRows(c, rs)); err != nil {
				return err
			}
		}
		return nil
	})
}

// span is the rows start..end-1.
func span(start, end int) []int32 {
	rows := make([]int32, 0, end-start)
	for r := start; r < end; r++ {
		rows = append(rows, int32(r))
	}
	return rows
}

// Chunks bound what one message carries: at most chunkRows rows and
// about chunkBytes of values, well within a message of the transport
// (services/wire/rpc.MaxMessageBytes, 4 MiB), whatever an operator made
// of its input (a join's rows are as wide as both sides').
const (
	chunkRows  = 8192
	chunkBytes = 1 << 20
)

// chunkRanges cuts b's rows into runs within the chunk bounds (of rows of
// about the batch's average width), as [start, end) pairs: one run of
// all its rows when it is within them.
func chunkRanges(b *exec.Batch) [][2]int {
	size := batchBytes(b)
	per := chunkRows
	if size > chunkBytes {
		per = min(per, max(1, int(int64(b.N)*chunkBytes/int64(size))))
	}
	out := make([][2]int, 0, (b.N+per-1)/per)
	for start := 0; start < b.N; start += per {
		out = append(out, [2]int{start, min(start+per, b.N)})
	}
	return out
}

// batchBytes is about the bytes of b's values: a text column's text and
// offsets, 8 bytes a number or a boolean.
func batchBytes(b *exec.Batch) int {
	size := 0
	for _, v := range b.Cols {
		switch {
		case v.Type == plan.Text && b.N > 0:
			size += int(v.Ends[b.N-1]) + 4*b.N
		default:
			size += 8 * b.N
		}
	}
	return size
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
		if !slices.Contains(p.Ops[rt.Consumer].Inputs, physical.Input{Channel: ch.Name, Route: ri}) {
			return nil, fmt.Errorf("channel %s route %d: #%d does not read it", ch.Name, ri, rt.Consumer)
		}
		for _, c := range rt.Cols {
			if c < 0 || c >= len(ch.Exprs) {
				return nil, fmt.Errorf("channel %s route %d: column %d of %d", ch.Name, ri, c, len(ch.Exprs))
			}
		}
	}
	for _, c := range ch.Key {
		if c < 0 || c >= len(ch.Exprs) {
			return nil, fmt.Errorf("channel %s: key column %d of %d", ch.Name, c, len(ch.Exprs))
		}
	}
	return x, nil
}

// Route sends the rows of b, a batch of the producer's input, to send:
// to each receiving instance one batch of the rows any route's condition
// holds for, each once, as the channel's columns, with the routes each
// is for (nil when the channel has one route: every row is its). Each
// row's receiving instance is computed once, and the columns once for
// the rows that go anywhere.
func (x *Exchange) Route(b *exec.Batch, send func(to int, b *exec.Batch, routes []uint64) error) error {
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
	// Which routes each row is for.
	var masks []uint64
	many := len(x.ch.Routes) > 1
	if many {
		masks = make([]uint64, b.N)
	}
	all := true // every row is for some route
	for ri, rt := range x.ch.Routes {
		if rt.Cond == nil {
			if many {
				for i := range masks {
					masks[i] |= 1 << ri
				}
			}
			continue
		}
		rows, err := exec.TrueRows(rt.Cond, b)
		if err != nil {
			return err
		}
		if !many {
			if len(rows) == 0 {
				return nil
			}
			if len(rows) < b.N {
				b, all = b.Rows(rows), true // the kept rows only, from here on
				if dest != nil {
					kept := make([]int32, len(rows))
					for i, r := range rows {
						kept[i] = dest[r]
					}
					dest = kept
				}
			}
			continue
		}
		for _, r := range rows {
			masks[r] |= 1 << ri
		}
	}
	var keep []int32 // the rows some route is for, when not all are
	if many {
		for _, m := range masks {
			if m == 0 {
				all = false
				break
			}
		}
		if !all {
			for i, m := range masks {
				if m != 0 {
					keep = append(keep, int32(i))
				}
			}
			if len(keep) == 0 {
				return nil
			}
		}
	}
	cols, err := exec.Project(x.ch.Exprs, []*exec.Batch{b})
	if err != nil {
		return err
	}
	out := cols[0]
	if dest == nil {
		if keep != nil {
			out = out.Rows(keep)
			masks = pick(masks, keep)
		}
		return send(0, out, masks)
	}
	byTo := make([][]int32, x.to)
	if keep == nil {
		for i, t := range dest {
			byTo[t] = append(byTo[t], int32(i))
		}
	} else {
		for _, i := range keep {
			byTo[dest[i]] = append(byTo[dest[i]], i)
		}
	}
	for t, rs := range byTo {
		if len(rs) > 0 {
			if err := send(t, out.Rows(rs), pick(masks, rs)); err != nil {
				return err
			}
		}
	}
	return nil
}

// pick is masks' values at rows (nil for nil masks).
func pick(masks []uint64, rows []int32) []uint64 {
	if masks == nil {
		return nil
	}
	out := make([]uint64, len(rows))
	for i, r := range rows {
		out[i] = masks[r]
	}
	return out
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
