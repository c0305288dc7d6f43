package stage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
)

// Link is one operator of a chain: the logical stage it runs and its spec.
type Link struct {
	Stage string
	Spec  Spec
}

// Chain returns the spec of a task that runs several operators chained
// (deploy.Plan decides which): links upstream first, and the streams that
// pass between them inside the task. The task reads the links' inputs and
// writes their outputs that are not internal; to the runtime it is one
// operator, so one commit covers the input batch, every chained
// operator's change and the rows that leave the task.
//
// Inside the task, what an operator emits on an internal stream goes to
// the operator that reads it by a call, with no encoding, channel or store
// in between: row by row, as it is emitted, when the reader is a RowSink;
// otherwise collected while the writer runs and handed on as one in-memory
// batch as soon as it returns. A chained operator ends when every one of its
// inputs has ended: its Finish runs then, and its internal outputs end
// with it, so that a joiner learns its matches are complete as soon as the
// matches of the task's input have all arrived.
func Chain(links []Link, internal []string) (Spec, error) {
	if len(links) == 0 {
		return Spec{}, errors.New("chain: no operators")
	}
	c := chainSpec{links: links, consumer: map[string]int{}, producer: map[string]int{}}
	inner := map[string]bool{}
	for _, s := range internal {
		inner[s] = true
	}
	spec := Spec{Stateless: true}
	for i, l := range links {
		if l.Spec.New == nil {
			return Spec{}, fmt.Errorf("chain: %s has no operator", l.Stage)
		}
		spec.Stateless = spec.Stateless && l.Spec.Stateless
		for _, s := range l.Spec.Inputs {
			if _, dup := c.consumer[s]; dup {
				return Spec{}, fmt.Errorf("chain: stream %s read twice", s)
			}
			c.consumer[s] = i
			if !inner[s] {
				spec.Inputs = append(spec.Inputs, s)
			}
		}
		for _, s := range l.Spec.Outputs {
			c.producer[s] = i
			if !inner[s] {
				spec.Outputs = append(spec.Outputs, s)
			}
		}
	}
	for _, s := range internal {
		p, okp := c.producer[s]
		k, okc := c.consumer[s]
		if !okp || !okc {
			return Spec{}, fmt.Errorf("chain: internal stream %s has no producer or no consumer among the chain", s)
		}
		if p >= k {
			return Spec{}, fmt.Errorf("chain: internal stream %s runs from %s back to %s: links must come upstream first", s, links[p].Stage, links[k].Stage)
		}
	}
	c.internal = internal
	spec.New = c.new
	if c.snapshots() {
		spec.New = func() Operator { return &snapChain{c.new().(*chain)} }
	}
	return spec, nil
}

// snapshots reports whether every stateful link can snapshot its state, so
// that the chain can snapshot its own.
func (c *chainSpec) snapshots() bool {
	for _, l := range c.links {
		if _, ok := l.Spec.New().(Snapshotter); !ok && !l.Spec.Stateless {
			return false
		}
	}
	return true
}

// chainSpec is what every job's chain shares.
type chainSpec struct {
	links    []Link
	internal []string
	consumer map[string]int // stream → the link that reads it
	producer map[string]int // stream → the link that writes it
}

// chain is the operator of one job at a task.
type chain struct {
	spec *chainSpec
	// drive drives each link's operator: its inputs, internal or not,
	// have one sender each, the chain.
	drive []*Driver
	emit  []*linkEmitter
	// inner takes a row emitted on an internal stream: the reader's own
	// functions when it is a RowSink, else ones that add the row to the
	// stream's pending batch.
	inner map[string]RowFuncs
	// pending holds the rows emitted on each batched internal stream and
	// not yet handed on, in the order of spec.internal.
	pending map[string]*batch.Builders
	out     Emitter // where rows leaving the task go, for the current call
	err     error
}

func (c *chainSpec) new() Operator {
	ch := &chain{spec: c, inner: map[string]RowFuncs{}, pending: map[string]*batch.Builders{}}
	for _, l := range c.links {
		senders := map[string]int{}
		for _, in := range l.Spec.Inputs {
			senders[in] = 1
		}
		ch.drive = append(ch.drive, NewDriver(l.Spec.New(), senders))
		ch.emit = append(ch.emit, &linkEmitter{c: ch})
	}
	for _, s := range c.internal {
		if sink, ok := ch.drive[c.consumer[s]].op.(RowSink); ok {
			ch.inner[s] = sink.Rows(ch.emit[c.consumer[s]])
			continue
		}
		p := &batch.Builders{}
		ch.pending[s] = p
		ch.inner[s] = pendingFuncs(p)
	}
	return ch
}

// pendingFuncs add rows to a stream's pending batches.
func pendingFuncs(p *batch.Builders) RowFuncs {
	return RowFuncs{
		Match:  func(_ string, m *batch.Match) { p.Match.Add(m) },
		Player: func(_ string, pl *batch.Player) { p.Player.Add(pl) },
		Token:  func(_ string, t []byte) { p.Token.Add(t) },
		Civ:    func(_ string, civ string, wins, count int64) { p.Civ.Add(civ, wins, count) },
	}
}

// Apply hands a batch of one of the task's inputs to the operator that
// reads it, then the rows that operator emitted inside the task to theirs.
func (c *chain) Apply(stream string, rows *wololov1.RowBatch, out Emitter) error {
	c.out, c.err = out, nil
	i, ok := c.spec.consumer[stream]
	if !ok {
		return fmt.Errorf("chain: no operator reads stream %s", stream)
	}
	// Not the link's Driver.Apply: the error goes up to the task's
	// Driver, which drops and counts the batch once.
	err := c.drive[i].op.Apply(stream, rows, c.emit[i])
	if err != nil {
		err = fmt.Errorf("%s: %w", c.spec.links[i].Stage, err)
	} else {
		err = c.flush()
	}
	if err != nil {
		// The batch is dropped (see the package doc): so are the rows it
		// left on the task's internal streams, as the runtime drops those
		// it emitted.
		for _, p := range c.pending {
			p.Reset()
		}
	}
	return err
}

// EndStream ends one of the task's inputs; operators whose inputs have all
// ended finish, and so on down the chain.
func (c *chain) EndStream(stream string, out Emitter) error {
	c.out, c.err = out, nil
	if err := c.end(stream); err != nil {
		return err
	}
	return c.err
}

// Finish finishes every operator not finished yet, upstream first (all
// the task's inputs have ended, so normally none is left).
func (c *chain) Finish(out Emitter) error {
	c.out, c.err = out, nil
	var errs []error
	for i, d := range c.drive {
		if !d.Finished() {
			errs = append(errs, c.finish(i))
		}
	}
	errs = append(errs, c.err)
	return errors.Join(errs...)
}

// end ends a stream for its reader (a chained operator hears it as a
// StreamEnder), and finishes the reader once all its inputs have ended.
func (c *chain) end(stream string) error {
	i, ok := c.spec.consumer[stream]
	if !ok {
		return nil
	}
	due, err := c.drive[i].End(stream, "", c.emit[i])
	if err != nil {
		return fmt.Errorf("%s: %w", c.spec.links[i].Stage, err)
	}
	if err := c.flush(); err != nil {
		return err
	}
	if !due {
		return nil
	}
	return c.finish(i)
}

// finish runs a link's Finish, hands on what it emitted and ends its
// outputs.
func (c *chain) finish(i int) error {
	if err := c.drive[i].Finish(c.emit[i]); err != nil {
		return fmt.Errorf("%s: %w", c.spec.links[i].Stage, err)
	}
	if err := c.flush(); err != nil {
		return err
	}
	for _, s := range c.spec.links[i].Spec.Outputs {
		if c.internal(s) {
			if err := c.end(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush hands every internal stream's pending rows to its reader, in
// chain order, until none are left (a reader may emit further down).
func (c *chain) flush() error {
	for again := true; again; {
		again = false
		for _, s := range c.spec.internal {
			p := c.pending[s]
			if p == nil {
				continue // handed on row by row
			}
			if p.Len() == 0 {
				continue
			}
			again = true
			i := c.spec.consumer[s]
			if c.drive[i].Finished() {
				return fmt.Errorf("chain: %s emitted on %s after %s finished", c.spec.links[c.spec.producer[s]].Stage, s, c.spec.links[i].Stage)
			}
			if err := p.BuildErr(func(rb *wololov1.RowBatch) error { return c.drive[i].op.Apply(s, rb, c.emit[i]) }); err != nil {
				return fmt.Errorf("%s: %w", c.spec.links[i].Stage, err)
			}
		}
	}
	return c.err
}

// internal reports whether a stream runs inside the task.
func (c *chain) internal(stream string) bool {
	_, ok := c.inner[stream]
	return ok
}

// misrouted records a row of a kind its reader does not take: the chain
// was planned against the operators' specs, so this is a bug, reported as
// the operator's error rather than a crash.
func (c *chain) misrouted(stream, kind string) {
	if c.err == nil {
		c.err = fmt.Errorf("chain: %s emitted a %s row on %s, which %s does not take", c.spec.links[c.spec.producer[stream]].Stage, kind, stream, c.spec.links[c.spec.consumer[stream]].Stage)
	}
}

// linkEmitter is the Emitter of one chained operator: rows on an internal
// stream go to their reader through inner, the others leave the task.
// It remembers what it has looked up: an operator emits on a handful of
// streams, so a scan of them (names compared as strings, which are most
// often the very same constant) is cheaper per row than the map.
type linkEmitter struct {
	c      *chain
	routes []linkRoute
}

type linkRoute struct {
	stream string
	f      RowFuncs
	inner  bool
}

// route returns the reader's functions of an internal stream, or false
// for a stream that leaves the task.
func (e *linkEmitter) route(stream string) (RowFuncs, bool) {
	for i := range e.routes {
		if r := &e.routes[i]; r.stream == stream {
			return r.f, r.inner
		}
	}
	f, ok := e.c.inner[stream]
	e.routes = append(e.routes, linkRoute{stream: stream, f: f, inner: ok})
	return f, ok
}

func (e *linkEmitter) Match(stream string, m *batch.Match) {
	if f, ok := e.route(stream); !ok {
		e.c.out.Match(stream, m)
	} else if f.Match == nil {
		e.c.misrouted(stream, "match")
	} else {
		f.Match(stream, m)
	}
}

func (e *linkEmitter) Player(stream string, p *batch.Player) {
	if f, ok := e.route(stream); !ok {
		e.c.out.Player(stream, p)
	} else if f.Player == nil {
		e.c.misrouted(stream, "player")
	} else {
		f.Player(stream, p)
	}
}

func (e *linkEmitter) Token(stream string, token []byte) {
	if f, ok := e.route(stream); !ok {
		e.c.out.Token(stream, token)
	} else if f.Token == nil {
		e.c.misrouted(stream, "token")
	} else {
		f.Token(stream, token)
	}
}

func (e *linkEmitter) Civ(stream string, civ string, wins, count int64) {
	if f, ok := e.route(stream); !ok {
		e.c.out.Civ(stream, civ, wins, count)
	} else if f.Civ == nil {
		e.c.misrouted(stream, "civ")
	} else {
		f.Civ(stream, civ, wins, count)
	}
}

func (e *linkEmitter) Record(key string, value []byte) { e.c.out.Record(key, value) }

// Batch hands a built batch on when its stream leaves the task; the
// chained operators take rows, not built batches, inside it.
func (e *linkEmitter) Batch(stream string, to int, rows *wololov1.RowBatch) {
	if _, ok := e.route(stream); ok {
		e.c.misrouted(stream, "built batch")
		return
	}
	e.c.out.Batch(stream, to, rows)
}

// End ends a stream that leaves the task; inside it, a reader's inputs
// end when the writer finishes.
func (e *linkEmitter) End(stream string) {
	if _, ok := e.route(stream); ok {
		e.c.misrouted(stream, "end")
		return
	}
	e.c.out.End(stream)
}

// snapChain is a chain whose stateful operators can all snapshot: its
// snapshot is the streams that have ended, which operators have finished,
// and the snapshot of every operator still running.
type snapChain struct{ *chain }

// AppendSnapshot implements Snapshotter. Each operator appends its state
// in place, after a length field of fixed width that is filled in once the
// state's size is known (a uvarint padded to lengthWidth bytes, which
// readBytes reads like any other), so that no operator's state is copied.
func (c *snapChain) AppendSnapshot(b []byte) ([]byte, error) {
	var ended []string
	for i, l := range c.spec.links {
		for _, s := range l.Spec.Inputs {
			if c.drive[i].Ended(s) {
				ended = append(ended, s)
			}
		}
	}
	sort.Strings(ended)
	b = binary.AppendUvarint(b, uint64(len(ended)))
	for _, s := range ended {
		b = appendBytes(b, []byte(s))
	}
	for i, d := range c.drive {
		snap, ok := d.op.(Snapshotter)
		if d.Finished() || !ok {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		at := len(b)
		b = append(b, make([]byte, lengthWidth)...)
		var err error
		if b, err = snap.AppendSnapshot(b); err != nil {
			return nil, fmt.Errorf("%s: %w", c.spec.links[i].Stage, err)
		}
		putPaddedUvarint(b[at:at+lengthWidth], uint64(len(b)-at-lengthWidth))
	}
	return b, nil
}

// lengthWidth is the width of a padded uvarint: 9 bytes of 7 bits and a
// tenth of one carry any uint64.
const lengthWidth = binary.MaxVarintLen64

// putPaddedUvarint writes v into b (lengthWidth bytes) as a uvarint that
// uses every byte: binary.Uvarint reads it as v, as it reads the shortest
// form.
func putPaddedUvarint(b []byte, v uint64) {
	for i := 0; i < lengthWidth-1; i++ {
		b[i] = byte(v) | 0x80
		v >>= 7
	}
	b[lengthWidth-1] = byte(v)
}

// Restore implements Snapshotter, on a chain just made.
func (c *snapChain) Restore(state []byte) error {
	bad := fmt.Errorf("chain snapshot is corrupt")
	n, k := binary.Uvarint(state)
	if k <= 0 || n > uint64(len(state)) {
		return bad
	}
	state = state[k:]
	for ; n > 0; n-- {
		var s []byte
		if s, state = readBytes(state); s == nil {
			return bad
		}
		if i, ok := c.spec.consumer[string(s)]; ok {
			c.drive[i].Restore(string(s), "")
		}
	}
	for i, d := range c.drive {
		if len(state) == 0 {
			return bad
		}
		has := state[0]
		state = state[1:]
		if has == 0 {
			// Finished, or stateless: finished when all its inputs ended.
			if d.AllEnded() {
				d.finished, d.op = true, nil
			}
			continue
		}
		var b []byte
		if b, state = readBytes(state); b == nil {
			return bad
		}
		snap, ok := d.op.(Snapshotter)
		if !ok {
			return fmt.Errorf("chain snapshot holds state for %s, which keeps none", c.spec.links[i].Stage)
		}
		if err := snap.Restore(b); err != nil {
			return fmt.Errorf("%s: %w", c.spec.links[i].Stage, err)
		}
	}
	if len(state) > 0 {
		return bad
	}
	return nil
}

func appendBytes(b, p []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(p))), p...)
}

// readBytes reads what appendBytes wrote: nil if it cannot.
func readBytes(b []byte) (p, rest []byte) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil
	}
	return b[k : k+int(n) : k+int(n)], b[k+int(n):]
}
