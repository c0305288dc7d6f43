package sqlops

import (
	"fmt"
	"slices"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
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
	// conds are the conditions of the routes that have one, in one
	// pass (exec.Conds), condOf the route of each.
	conds  *exec.Conds
	condOf []int
	// send takes the batches Apply routes, as ColumnBatches.
	send Sender
}

// Apply routes a batch to send (the Task's Sender): per receiving
// instance, its rows in chunks, each row once with the routes it is for,
// written straight from the projected batch into the chunk's
// ColumnBatch (Rows), not gathered into a batch of their own first.
func (x *Exchange) Apply(_ int, b *exec.Batch, _ Out) error {
	if x.send == nil {
		return fmt.Errorf("exchange to %s: nowhere to send", x.ch.Name)
	}
	return x.Route(b, x.sendRows)
}

// ApplyTo is Apply of a batch whose rows all go to receiving instance
// to: rows whose keys route there (a Source routes each record as it
// reads it), not routed again.
func (x *Exchange) ApplyTo(to int, b *exec.Batch) error {
	if x.send == nil {
		return fmt.Errorf("exchange to %s: nowhere to send", x.ch.Name)
	}
	return x.route(b, to, x.sendRows)
}

// applyOwned is ApplyTo of a batch that is the exchange's to hand on:
// no one writes it or reads it after (Task.TableTo's, read from a
// CSVReader's fresh batch), so that the rows sent of it whole are not
// copied (Rows.Batch).
func (x *Exchange) applyOwned(to int, b *exec.Batch) error {
	if x.send == nil {
		return fmt.Errorf("exchange to %s: nowhere to send", x.ch.Name)
	}
	return x.route(b, to, func(to int, b *exec.Batch, rows []int32, routes []uint64) error {
		return x.sendChunks(to, b, rows, routes, true)
	})
}

// sendRows sends the rows of b (nil: all of them) to instance to, in
// chunks, as Apply does.
func (x *Exchange) sendRows(to int, b *exec.Batch, rows []int32, routes []uint64) error {
	return x.sendChunks(to, b, rows, routes, false)
}

// sendChunks is sendRows, of a batch owned (applyOwned) or not.
func (x *Exchange) sendChunks(to int, b *exec.Batch, rows []int32, routes []uint64, owned bool) error {
	n := b.N
	if rows != nil {
		n = len(rows)
	}
	for _, r := range ranges(n, batchBytes(b)*n/b.N) {
		s := wire.Span(r[0], r[1]-r[0])
		if rows != nil {
			s = wire.Picked(rows[r[0]:r[1]])
		}
		rs := routes
		if rs != nil {
			rs = rs[r[0]:r[1]]
		}
		if err := x.send(x.ch, to, &Rows{b: b, s: s, routes: rs, owned: owned}); err != nil {
			return err
		}
	}
	return nil
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
func chunkRanges(b *exec.Batch) [][2]int { return ranges(b.N, batchBytes(b)) }

// ranges cuts n rows of about size bytes in all into runs within the
// chunk bounds, as chunkRanges does.
func ranges(n, size int) [][2]int {
	per := chunkRows
	if size > chunkBytes {
		per = min(per, max(1, int(int64(n)*chunkBytes/int64(size))))
	}
	out := make([][2]int, 0, (n+per-1)/per)
	for start := 0; start < n; start += per {
		out = append(out, [2]int{start, min(start+per, n)})
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
	var conds []*plan.Expr
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
		if rt.Cond != nil {
			conds = append(conds, rt.Cond)
			x.condOf = append(x.condOf, ri)
		}
	}
	x.conds = exec.NewConds(conds)
	for _, c := range ch.Key {
		if c < 0 || c >= len(ch.Exprs) {
			return nil, fmt.Errorf("channel %s: key column %d of %d", ch.Name, c, len(ch.Exprs))
		}
	}
	return x, nil
}

// Route sends the rows of b, a batch of the producer's input, to send:
// to each receiving instance the rows any route's condition holds for,
// each once, as the channel's columns, with the routes each is for (nil
// when the channel has one route: every row is its). What send is given
// is a batch of the channel's columns and the rows of it that go to the
// instance (nil: all of them), not a copy of those rows: each row's
// receiving instance is computed once, the columns once, and a column
// that is one of b's is b's own.
func (x *Exchange) Route(b *exec.Batch, send func(to int, b *exec.Batch, rows []int32, routes []uint64) error) error {
	return x.route(b, -1, send)
}

// route is Route, of rows that all go to instance `to` when it is not
// -1 (none is routed by its key).
func (x *Exchange) route(b *exec.Batch, to int, send func(to int, b *exec.Batch, rows []int32, routes []uint64) error) error {
	if b.N == 0 {
		return nil
	}
	masks, keep, err := x.routes(b)
	if err != nil {
		return err
	}
	if keep != nil && len(keep) == 0 {
		return nil
	}
	if keep != nil && !plainRefs(x.ch.Exprs) {
		// The kept rows only, from here on: the columns computed for
		// them alone.
		b, masks = b.Rows(keep), pick(masks, keep)
		keep = nil
	}
	cols, err := exec.Project(x.ch.Exprs, []*exec.Batch{b})
	if err != nil {
		return err
	}
	out := cols[0]
	var dest []int32
	if to < 0 {
		to = 0
		dest = x.destinations(out, keep)
	}
	if x.ch.Broadcast { // every row to every instance (physical's subquery.go)
		for t := range x.to {
			if err := send(t, out, keep, pick(masks, keep)); err != nil {
				return err
			}
		}
		return nil
	}
	if dest == nil {
		return send(to, out, keep, pick(masks, keep))
	}
	for t, rs := range byDestination(dest, keep, x.to) {
		if len(rs) > 0 {
			if err := send(t, out, rs, pick(masks, rs)); err != nil {
				return err
			}
		}
	}
	return nil
}

// destinations is each row's receiving instance (stage.Route of its key),
// computed for the rows of keep alone (nil: all rows) from out, the
// rows as the channel's columns (its key's among them: computed once,
// where they were computed again here for the key alone, a KEY(match,
// team) of every player row); nil when every row goes to instance 0.
func (x *Exchange) destinations(out *exec.Batch, keep []int32) []int32 {
	if len(x.ch.Key) == 0 || x.to <= 1 {
		return nil
	}
	keys := make([]*exec.Vec, len(x.ch.Key))
	for i, c := range x.ch.Key {
		keys[i] = out.Cols[c]
	}
	dest := make([]int32, out.N)
	var buf []byte
	route := func(i int) {
		var key []byte
		key, buf = routeKey(buf[:0], keys, i)
		dest[i] = int32(stage.Route(key, x.to))
	}
	if keep == nil {
		for i := range out.N {
			route(i)
		}
	}
	for _, i := range keep {
		route(int(i))
	}
	return dest
}

// routes is which routes each row of b is for (masks, bit r for route r;
// nil when the channel has one route), and the rows some route is for
// (keep; nil when every row is, empty when none is).
func (x *Exchange) routes(b *exec.Batch) (masks []uint64, keep []int32, err error) {
	rows, err := x.conds.TrueRows(b)
	if err != nil {
		return nil, nil, err
	}
	if len(x.ch.Routes) == 1 {
		if len(rows) == 1 && len(rows[0]) < b.N {
			return nil, nonNil(rows[0]), nil
		}
		return nil, nil, nil
	}
	masks = make([]uint64, b.N)
	all := uint64(0) // the routes without a condition
	for ri, rt := range x.ch.Routes {
		if rt.Cond == nil {
			all |= 1 << ri
		}
	}
	if all != 0 {
		for i := range masks {
			masks[i] = all
		}
	}
	for k, rs := range rows {
		bit := uint64(1) << x.condOf[k]
		for _, r := range rs {
			masks[r] |= bit
		}
	}
	if all != 0 {
		return masks, nil, nil
	}
	keep = []int32{}
	for i, m := range masks {
		if m != 0 {
			keep = append(keep, int32(i))
		}
	}
	if len(keep) == b.N {
		keep = nil
	}
	return masks, keep, nil
}

// nonNil is rows, empty rather than nil when there are none.
func nonNil(rows []int32) []int32 {
	if rows == nil {
		return []int32{}
	}
	return rows
}

// plainRefs reports whether every expression is a column of the input,
// which a projection does not copy.
func plainRefs(exprs []*plan.Expr) bool {
	for _, e := range exprs {
		if e.Kind != plan.ColRef {
			return false
		}
	}
	return true
}

// byDestination is, per receiving instance, the rows (of keep, or all
// rows when keep is nil) dest sends to it, in order: one allocation for
// all instances, counted first.
func byDestination(dest, keep []int32, to int) [][]int32 {
	counts := make([]int, to)
	n := len(dest)
	if keep != nil {
		n = len(keep)
		for _, i := range keep {
			counts[dest[i]]++
		}
	} else {
		for _, t := range dest {
			counts[t]++
		}
	}
	all := make([]int32, n)
	out := make([][]int32, to)
	at := 0
	for t, c := range counts {
		out[t] = all[at : at : at+c]
		at += c
	}
	if keep != nil {
		for _, i := range keep {
			out[dest[i]] = append(out[dest[i]], i)
		}
		return out
	}
	for i, t := range dest {
		out[t] = append(out[t], int32(i))
	}
	return out
}

// pick is values at rows (nil for nil values, all of them for nil rows).
func pick[T any](values []T, rows []int32) []T {
	if values == nil || rows == nil {
		return values
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = values[r]
	}
	return out
}

// routeKey is the bytes row i's key is routed by: the text itself for one
// text column (as the deployment routes a match token; not copied), else
// each value's exec.AppendKey appended to buf, so that equal numbers go
// to one instance whatever their trailing zeros; buf is returned for
// reuse.
func routeKey(buf []byte, keys []*exec.Vec, i int) (key, _ []byte) {
	if len(keys) == 1 && keys[0].Type == plan.Text && !keys[0].IsNull(i) {
		return keys[0].Text(i), buf
	}
	for _, k := range keys {
		buf = exec.AppendKey(buf, k, i)
	}
	return buf, buf
}

// Sender takes what a task instance's exchanges write: a batch of
// channel ch to receiving instance to (each row once, with the routes it
// is for), or (rows nil) the end of the channel from this instance, once
// per receiving instance.
type Sender func(ch *physical.Channel, to int, rows *Rows) error

// Rows is a batch an exchange sends: some rows of a batch, with the
// routes each is for (nil: the channel's one route). The Sender makes of
// them what it hands on: a Batch of their own (Batch, the in-process
// runner's), or the bytes they travel as, written straight from the
// columns (the wire codec, a deployment's: emitOn).
type Rows struct {
	b      *exec.Batch
	s      wire.Selection
	routes []uint64
	owned  bool // b is the receiver's to keep (Exchange.applyOwned)
}

// Len is the number of rows.
func (r *Rows) Len() int { return r.s.Len() }

// bytes is about the bytes of the rows' values (batchBytes's, pro rata).
func (r *Rows) bytes() int {
	if r.b.N == 0 {
		return 0
	}
	return int(int64(batchBytes(r.b)) * int64(r.s.Len()) / int64(r.b.N))
}

// Batch is a copy of the rows (the sender may reuse its batch's memory
// once it has sent them) and the routes each is for; nil for a nil Rows
// (a channel's end). The in-process runner hands them on so, where it
// encoded them as a RowBatch and decoded that again (RowBatch,
// wire.FromRows: a tenth of the four default queries' CPU in wololo
// demo); the codec keeps every value as it is (its tests), so the
// receiver gets the same rows either way.
func (r *Rows) Batch() (*exec.Batch, []uint64) {
	if r == nil {
		return nil, nil
	}
	if r.owned && r.s.Whole(r.b.N) {
		return r.b, r.routes
	}
	return r.b.Rows(r.s.Rows()), r.routes
}

// RowBatch is the rows as a ColumnBatch (wire.ToSelectedRows); nil for a nil Rows (a
// channel's end).
func (r *Rows) RowBatch() *wololov1.RowBatch {
	if r == nil {
		return nil
	}
	return wire.ToSelectedRows(r.b, r.s, r.routes)
}
