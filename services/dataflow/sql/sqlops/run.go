package sqlops

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Result is what Run returns: each query's NAME.csv, and the scans'
// counts of the values that read as NULL.
type Result struct {
	Files map[string][]byte
	Stats []exec.ColumnStats
}

// Run runs a job's physical plan over its tables (by name) in this
// process: every instance of every task (the gateway's one, the shard
// task's p.Shard.Replicas) as a Task, each operator driven by a
// stage.Driver as the stage runtime drives its operators. What an
// instance's exchanges write goes to the receiving instance's queue as
// the ColumnBatch itself, not marshalled, each row to the instance
// stage.Route picks by its key, as the deployment routes (no exchange
// modifies a batch once sent, nor the memory its text may share with the
// batch it was cut from, which no operator modifies either); every
// instance of a channel's producing task ends it, and an operator
// finishes once each of its inputs has ended on every sender. It returns
// each query's output file.
//
// The gateway's instance is given each table's batches, then its end;
// each instance takes what arrives in the order it was sent. Run runs
// every instance on a goroutine of its own (parallel), as the deployment
// runs them in processes of their own, so that a job uses every core; the
// tests take the instances one at a time in random orders, restarting
// operators from their snapshots on the way, and get the same answers.
//
// order names the tables in the order the gateway is given them, as a
// client uploads a job's inputs (its two files, then its tables); the
// scans of the tables it does not name come after, in the plan's order.
// The answers do not depend on it, but what an operator holds does: a
// join holds its left rows until its right input has ended, so a right
// table given first (matches before match_players) holds none.
func Run(p *physical.Plan, tables map[string]*exec.Table, order ...string) (*Result, error) {
	res, _, err := run(p, tableFeeds(p, tables, order), options{})
	return res, err
}

// Feed is a table given to RunFeeds batch by batch: its name, its
// header's columns, and Next, which returns its batches (text Vecs, one
// per column, as exec.CSVReader reads them) in order, then nil.
type Feed struct {
	Table   string
	Columns []string
	Next    func() (*exec.Batch, error)
	// Part, when not nil, is the part of the batch Next returned last,
	// its records parted as RouteOf says (exec.CSVReader.Part): the
	// receiving instance of them all.
	Part func() int
}

// partOf is a message's part of batch b, the batch Next returned last:
// its Part + 1, or 0 for a feed not parted or its end.
func (f Feed) partOf(b *exec.Batch) int {
	if f.Part == nil || b == nil {
		return 0
	}
	return f.Part() + 1
}

// RunFeeds is Run over tables given batch by batch, in the order of
// feeds (Run's order: see there why it matters), each batch taken when
// the gateway's instance is about to want it, a few batches ahead of it
// at most: the tables need not be held whole, and the reading of one
// overlaps the running of the plan. The feeds of tables p does not scan
// are not read.
func RunFeeds(p *physical.Plan, feeds []Feed) (*Result, error) {
	return RunFeedsContext(context.Background(), p, feeds)
}

// RunFeedsContext is RunFeeds that ctx stops: once it is done no feed is
// read and no message delivered any more, and it returns, soon (after
// the batch each instance is at), an error wrapping ctx.Err() (a
// program's Ctrl-C: see main's signal context).
func RunFeedsContext(ctx context.Context, p *physical.Plan, feeds []Feed) (*Result, error) {
	return RunFeedsBudget(ctx, p, feeds, Budget{})
}

// RunFeedsBudget is RunFeedsContext with every instance held to budget b
// (its zero fields at their defaults; its SpillDir, where the instances
// spill state past b.StateBytes: `wololo demo`'s).
func RunFeedsBudget(ctx context.Context, p *physical.Plan, feeds []Feed, b Budget) (*Result, error) {
	res, _, err := run(p, feeds, options{ctx: ctx, budget: b})
	return res, err
}

// tableFeeds is the feeds of the tables p scans, in scanOrder.
func tableFeeds(p *physical.Plan, tables map[string]*exec.Table, order []string) []Feed {
	var feeds []Feed
	for _, name := range scanOrder(p, order) {
		t, ok := tables[name]
		if !ok {
			continue // run refuses the plan
		}
		next := 0
		feeds = append(feeds, Feed{Table: name, Columns: t.Columns, Next: func() (*exec.Batch, error) {
			if next == len(t.Batches) {
				return nil, nil
			}
			next++
			return t.Batches[next-1], nil
		}})
	}
	return feeds
}

// scannedFeeds is the feeds of the tables p scans, in their order (the
// first of a table's), refusing a plan that scans a table with none.
func scannedFeeds(p *physical.Plan, feeds []Feed) ([]Feed, error) {
	scanned := scanOrder(p, nil)
	has := func(fs []Feed, table string) bool {
		return slices.ContainsFunc(fs, func(f Feed) bool { return f.Table == table })
	}
	var out []Feed
	for _, f := range feeds {
		if slices.Contains(scanned, f.Table) && !has(out, f.Table) {
			out = append(out, f)
		}
	}
	for _, name := range scanned {
		if !has(out, name) {
			return nil, fmt.Errorf("run: no table %q", name)
		}
	}
	return out, nil
}

// options are how the tests run a plan; Run uses none.
type options struct {
	// ctx stops the parallel runner (RunFeedsContext); nil: never.
	ctx context.Context
	// pick chooses which of n instances with something queued takes its
	// next message; nil: the first (the gateway, then the shards).
	pick func(n int) int
	// restart, when not nil, is asked before each arrival at an operator
	// with state (a stage.Snapshotter) whether to restart it first: its
	// snapshot written, a fresh operator made and restored from it, a
	// fresh driver told the ends the old one had noted.
	restart func(op, instance int) bool
	// own gives every keyed operator a table of its own instead of its
	// Plan.Tables entry's.
	own bool
	// budget holds the job at every instance (its zero fields at their
	// defaults: Run's, as a deployment's).
	budget Budget
}

// message is what waits in a task instance's queue: a batch of a table
// or of a channel, or (rows nil) its end.
type message struct {
	table  string // a table's batch; else a channel's
	ch     string
	sender int
	batch  *exec.Batch // a table's or a channel's
	routes []uint64    // of a channel's batch: the routes each row is for
	end    bool
	part   int // of a table's batch of a parted feed (Feed.Part): its part + 1; 0: not parted
}

type queued struct {
	t     *Task
	queue []message
	// The parallel runner's: mu guards queue, more tells the instance's
	// goroutine that something was queued (or that the run ended).
	mu   sync.Mutex
	more chan struct{}
}

// push queues m for the instance: under its lock, with a wake-up for its
// goroutine when the run is parallel.
func (q *queued) push(m message) {
	q.mu.Lock()
	q.queue = append(q.queue, m)
	q.mu.Unlock()
	signal(q.more) // nil (in turn): no goroutine to wake
}

// pop takes the instance's next message, if it has one.
func (q *queued) pop() (message, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		return message{}, false
	}
	m := q.queue[0]
	q.queue[0] = message{}
	q.queue = q.queue[1:]
	return m, true
}

// depth is how many messages wait for the instance.
func (q *queued) depth() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// run runs p, and returns as well the number of keys its keyed
// operators' tables hold at the end, in all.
func run(p *physical.Plan, feeds []Feed, opt options) (*Result, int, error) {
	if p.Gateway.Replicas != 1 {
		return nil, 0, fmt.Errorf("run: the gateway task has %d replicas; the runner parses the files in one", p.Gateway.Replicas)
	}
	feeds, err := scannedFeeds(p, feeds)
	if err != nil {
		return nil, 0, err
	}
	columns := map[string][]string{}
	for _, f := range feeds {
		columns[f.Table] = f.Columns
	}
	in, err := newInstances(p, columns, opt)
	if err != nil {
		return nil, 0, err
	}
	gw := in.byTask[p.Gateway.Name][0]
	if opt.pick == nil && opt.restart == nil {
		ctx := opt.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		err = runParallel(ctx, in.all, gw, feeds, &in.pending)
	} else {
		// One step at a time: every table's batches queued first.
		if err := queueFeeds(gw, feeds); err != nil {
			return nil, 0, err
		}
		err = runInTurn(in.all, opt.pick)
	}
	if err != nil {
		return nil, 0, err
	}
	res, err := results(p, in.all, gw)
	if err != nil {
		return nil, 0, err
	}
	return res, in.keys(), nil
}

// instances are a run's task instances, each with its queue, and the
// key tables they share.
type instances struct {
	all    []*queued
	byTask map[string][]*queued
	// pending counts the messages queued and not yet delivered, in all.
	pending   atomic.Int64
	keyMu     sync.Mutex // keyTables, when an instance asks for a table while others run
	keyTables map[tableKey]*exec.KeyTable
}

// tableKey names a key table: of a task, a Plan.Tables entry and an
// instance.
type tableKey struct{ task, id, instance int }

// newInstances makes every instance of p's tasks, the gateway's first.
func newInstances(p *physical.Plan, columns map[string][]string, opt options) (*instances, error) {
	in := &instances{byTask: map[string][]*queued{}, keyTables: map[tableKey]*exec.KeyTable{}}
	tasks := []physical.Task{p.Gateway}
	if p.Shard.Name != p.Gateway.Name {
		tasks = append(tasks, p.Shard)
	}
	for ti, task := range tasks {
		for i := range task.Replicas {
			t, err := newTask(p, task.Name, i, columns, in.shared(ti, i, opt.own), in.sender(i), func(*physical.Op) bool { return true }, opt.budget)
			if err != nil {
				return nil, fmt.Errorf("run: %w", err)
			}
			t.restart = opt.restart
			q := &queued{t: t}
			in.all = append(in.all, q)
			in.byTask[task.Name] = append(in.byTask[task.Name], q)
		}
	}
	return in, nil
}

// shared gives instance i of the ti-th task the key table of a
// Plan.Tables entry (own: a table of its own each time it asks).
func (in *instances) shared(ti, i int, own bool) func(id int) *exec.KeyTable {
	return func(id int) *exec.KeyTable {
		in.keyMu.Lock()
		defer in.keyMu.Unlock()
		k := tableKey{ti, id, i}
		if own {
			k.id = -len(in.keyTables) - 1
		}
		if in.keyTables[k] == nil {
			in.keyTables[k] = exec.NewKeyTable()
		}
		return in.keyTables[k]
	}
}

// sender queues what instance i sends on a channel for its receiver.
func (in *instances) sender(i int) Sender {
	return func(ch *physical.Channel, to int, rows *Rows) error {
		dest := in.byTask[ch.To]
		if to < 0 || to >= len(dest) {
			return fmt.Errorf("channel %s: no instance %d of %s", ch.Name, to, ch.To)
		}
		in.pending.Add(1)
		b, routes := rows.Batch()
		dest[to].push(message{ch: ch.Name, sender: i, batch: b, routes: routes, end: rows == nil})
		return nil
	}
}

// keys is the number of keys the key tables hold, in all.
func (in *instances) keys() int {
	keys := 0
	for _, t := range in.keyTables {
		keys += t.Len()
	}
	return keys
}

// queueFeeds queues every batch of the feeds, and their ends, for the
// gateway.
func queueFeeds(gw *queued, feeds []Feed) error {
	for _, f := range feeds {
		for {
			b, err := f.Next()
			if err != nil {
				return fmt.Errorf("run: table %s: %w", f.Table, err)
			}
			gw.queue = append(gw.queue, message{table: f.Table, batch: b, end: b == nil, part: f.partOf(b)})
			if b == nil {
				break
			}
		}
	}
	return nil
}

// results are the query files the gateway's sinks hold and every
// instance's stats, once every instance is done.
func results(p *physical.Plan, all []*queued, gw *queued) (*Result, error) {
	res := &Result{Files: map[string][]byte{}}
	for _, q := range all {
		if !q.t.Done() {
			return nil, fmt.Errorf("run: task %s[%d]: an operator's inputs never ended", q.t.name, q.t.index)
		}
		res.Stats = append(res.Stats, q.t.Stats()...)
	}
	for _, qu := range p.Queries {
		f, ok := gw.t.Sink(qu.Sink)
		if !ok {
			return nil, fmt.Errorf("run: query %s: #%d is no finished sink of the gateway", qu.Name, qu.Sink)
		}
		res.Files[qu.Name] = f
	}
	return res, nil
}

// scanOrder is the tables p scans, those of order first, in its order,
// then the others in the order of p's scans.
func scanOrder(p *physical.Plan, order []string) []string {
	var scanned []string
	for _, o := range p.Ops {
		if o.Kind == plan.Scan {
			scanned = append(scanned, o.Node.Table)
		}
	}
	var out []string
	for _, name := range order {
		if slices.Contains(scanned, name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, name := range scanned {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// runInTurn delivers the queued messages one at a time, each to the
// instance pick chooses among those with something queued (nil: the
// last, so that the shards drain what the gateway sent before it routes
// its next batch, and what waits is bounded by one batch's worth).
func runInTurn(all []*queued, pick func(n int) int) error {
	var ready []*queued
	for {
		ready = ready[:0]
		for _, q := range all {
			if q.depth() > 0 {
				ready = append(ready, q)
			}
		}
		if len(ready) == 0 {
			return nil
		}
		k := len(ready) - 1
		if pick != nil {
			k = pick(len(ready))
		}
		m, _ := ready[k].pop()
		if err := deliver(ready[k].t, m); err != nil {
			return fmt.Errorf("run: %w", err)
		}
	}
}

// maxAhead is how many messages the parallel runner lets wait for the
// other instances before the gateway routes its next table batch: what
// waits is then a few batches' worth per instance, not a whole table's.
// It is also how many messages it lets wait for the gateway before it
// takes the next batch of a feed.
const maxAhead = 8

// runParallel delivers every instance's messages on a goroutine of its
// own until none is pending (pending counts the messages queued and not
// yet delivered, everywhere, and the feeds until the last has ended) or
// one fails; another goroutine queues the feeds' batches and ends for the
// gateway, in order. The feeds wait while more than maxAhead messages
// wait for the gateway, and the gateway waits before it routes a table
// batch while the others have more than maxAhead waiting: only they
// wait, the feeds for the gateway and the gateway for the others, which
// never wait, and no cycle of waits can form. ctx done stops it all, as
// a failure does, with ctx's error.
func runParallel(ctx context.Context, all []*queued, gw *queued, feeds []Feed, pending *atomic.Int64) error {
	r := &parallel{
		all: all, gw: gw, pending: pending,
		done:    make(chan struct{}),
		drained: make(chan struct{}, 1),
		taken:   make(chan struct{}, 1),
	}
	for _, q := range all {
		q.more = make(chan struct{}, 1)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-ctx.Done():
			r.stop(fmt.Errorf("run: stopped: %w", ctx.Err()))
		case <-r.done:
		}
	})
	pending.Add(1) // the feeds
	wg.Go(func() { r.feed(feeds) })
	for _, q := range all {
		wg.Go(func() { r.serve(q) })
	}
	wg.Wait()
	return r.first
}

// parallel is one run of runParallel.
type parallel struct {
	all     []*queued
	gw      *queued
	pending *atomic.Int64
	// done is closed by the first stop, which sets first: a failure, or
	// nil when nothing is pending any more.
	done  chan struct{}
	once  sync.Once
	first error
	// drained: another instance delivered a message; taken: the gateway
	// took a message.
	drained, taken chan struct{}
}

func (r *parallel) stop(err error) {
	r.once.Do(func() {
		r.first = err
		close(r.done)
	})
}

// stopped is whether the run failed, was stopped or ended.
func (r *parallel) stopped() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// wait waits for a signal on c; false when the run stops first.
func (r *parallel) wait(c <-chan struct{}) bool {
	select {
	case <-r.done:
		return false
	case <-c:
		return true
	}
}

// signal tells c's waiter, unless a signal is pending already.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// delivered counts one pending message (or the feeds) done; the last
// ends the run.
func (r *parallel) delivered() {
	if r.pending.Add(-1) == 0 {
		r.stop(nil)
	}
}

// feed queues the feeds' batches and ends for the gateway, in order,
// while no more than maxAhead messages wait for it.
func (r *parallel) feed(feeds []Feed) {
	for _, f := range feeds {
		for {
			if r.stopped() { // failed or stopped: read no more
				return
			}
			b, err := f.Next()
			if err != nil {
				r.stop(fmt.Errorf("run: table %s: %w", f.Table, err))
				return
			}
			for r.gw.depth() > maxAhead {
				if !r.wait(r.taken) {
					return
				}
			}
			r.pending.Add(1)
			r.gw.push(message{table: f.Table, batch: b, end: b == nil, part: f.partOf(b)})
			if b == nil {
				break
			}
		}
	}
	r.delivered()
}

// serve delivers q's messages as they arrive; the gateway routes a table
// batch only while no more than maxAhead messages wait for each other
// instance.
func (r *parallel) serve(q *queued) {
	for !r.stopped() { // failed or stopped: deliver no more
		m, ok := q.pop()
		if !ok {
			if !r.wait(q.more) {
				return
			}
			continue
		}
		if q == r.gw {
			signal(r.taken)
		}
		if q == r.gw && m.table != "" {
			for behind(r.all, r.gw) > maxAhead*(len(r.all)-1) {
				if !r.wait(r.drained) {
					return
				}
			}
		}
		if err := deliver(q.t, m); err != nil {
			r.stop(fmt.Errorf("run: %w", err))
			return
		}
		r.delivered()
		if q != r.gw {
			signal(r.drained)
		}
	}
}

// behind is how many messages wait for the instances other than gw.
func behind(all []*queued, gw *queued) int {
	n := 0
	for _, q := range all {
		if q != gw {
			n += q.depth()
		}
	}
	return n
}

// deliver gives a task instance one message.
func deliver(t *Task, m message) error {
	switch {
	case m.table != "" && m.end:
		return t.EndTable(m.table)
	case m.table != "" && m.part > 0:
		return t.TableTo(m.table, m.part-1, m.batch)
	case m.table != "":
		return t.Table(m.table, m.batch)
	case m.end:
		return t.End(m.ch, m.sender)
	}
	return t.ReceiveBatch(m.ch, m.sender, m.batch, m.routes)
}
