package sqlops

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
)

// EpochResult is what RunEpochs returns: every version of every query,
// and the final answers.
type EpochResult struct {
	// Versions are, per epoch (Versions[k-1] is epoch k's), each
	// query's version, by query name.
	Versions []map[string]Version
	// Files are each query's final NAME.csv (a batch job's over every
	// row).
	Files map[string][]byte
	// Stats are the scans' counts of the values that read as NULL.
	Stats []exec.ColumnStats
}

// RunEpochs runs a job's physical plan as a standing job in this
// process: every instance of every task as an EpochTask, the tables
// given to the gateway as epochs (epochs[k-1] is epoch k's rows of each
// table; a table missing from an epoch has none in it), each epoch's
// marker given on every table after its rows, then the end of every
// table. What an instance's exchanges write travels as it does in a
// deployment, as bytes (EncodeEpochRows of the wire codec's RowBatch,
// EncodeEpochMarker), to the receiving instance's queue; the instances
// take their messages one at a time, the shards first. A table's
// batches must have the columns of its first.
func RunEpochs(p *physical.Plan, epochs []map[string]*exec.Table) (*EpochResult, error) {
	return runEpochs(p, epochs, epochOptions{})
}

// EpochFeed is a standing job's input as RunEpochsEach takes it, an
// epoch at a time, a batch at a time.
type EpochFeed struct {
	// Columns are each table's columns: those of its every batch.
	Columns map[string][]string
	// Epochs is how many epochs there are.
	Epochs int
	// Next gives epoch k's rows of table (k from 1) to yield, a batch at
	// a time, in order (none: the table has no rows in the epoch). It is
	// called once per epoch and table, the epochs in order, each once
	// epoch k-1 is done, the tables in the plan's scan order; an error
	// yield returns ends it, and Next returns it.
	Next func(k int, table string, yield func(*exec.Batch) error) error
}

// RunEpochsEach runs the plan as RunEpochs does, but one epoch at a
// time: epoch k's rows are asked of the feed, and given with their
// markers, once every instance is done with epoch k-1's, and each is
// called with epoch k's versions (by query name) once every instance is
// idle, before epoch k+1 starts: what it measures between two calls is
// one epoch's work (the feed's Next included). Each batch the feed
// yields goes through every instance before the next is asked for, so
// that the run holds an epoch's rows only as its operators keep them
// (folding, epochfold.go), not the epoch whole: a first epoch of 99% of
// the full dataset held 1.9 GB of rows. The versions are not kept: the
// result's Versions is nil.
func RunEpochsEach(p *physical.Plan, feed EpochFeed, each func(epoch int64, versions map[string]Version) error) (*EpochResult, error) {
	return runFeed(p, feed, epochOptions{each: each})
}

// epochOptions are how the tests run a standing plan; RunEpochs uses
// none.
type epochOptions struct {
	// pick chooses which of n instances with something queued takes its
	// next message; nil: the last (the shards before the gateway).
	pick func(n int) int
	// restart, when not nil, is asked before each message whether to
	// restart its instance from its snapshot first.
	restart func() bool
	budget  Budget
	// scanned gives the gateway its tables' rows read as their scans'
	// columns (EpochTask.Scanned, a Source's way), not as text.
	scanned bool
	// unmarked ends the tables after the last epoch's rows with no
	// marker of it: its rows are the final answer's, in no version.
	unmarked bool
	// observe, when not nil, is shown each instance before it takes a
	// message.
	observe func(*epochInstance) error
	// each, when not nil, runs the epochs one at a time and is given
	// each epoch's versions, which are not kept (RunEpochsEach).
	each func(epoch int64, versions map[string]Version) error
}

// epochMessage is what waits in an instance's queue: a table's batch,
// the end of its epoch or its end; or a channel's bytes or end.
type epochMessage struct {
	table    string
	batch    *exec.Batch
	epochEnd bool
	ch       string
	sender   int
	encoded  []byte
	end      bool
}

// epochInstance is an instance of a task and its queue.
type epochInstance struct {
	t       *EpochTask
	cfg     EpochConfig
	queue   []epochMessage
	scanned bool // Options.scanned
}

func runEpochs(p *physical.Plan, epochs []map[string]*exec.Table, opt epochOptions) (*EpochResult, error) {
	columns := map[string][]string{}
	for _, e := range epochs {
		for _, name := range scanOrder(p, nil) {
			if t := e[name]; t != nil && columns[name] == nil {
				columns[name] = t.Columns
			}
		}
	}
	next := func(k int, table string, yield func(*exec.Batch) error) error {
		t := epochs[k-1][table]
		if t == nil {
			return nil
		}
		if !slices.Equal(t.Columns, columns[table]) {
			return fmt.Errorf("table %s: an epoch's columns %v, not %v", table, t.Columns, columns[table])
		}
		for _, b := range t.Batches {
			if err := yield(b); err != nil {
				return err
			}
		}
		return nil
	}
	return runFeed(p, EpochFeed{Columns: columns, Epochs: len(epochs), Next: next}, opt)
}

// runFeed runs the plan over the feed's epochs (runEpochs, RunEpochsEach).
func runFeed(p *physical.Plan, feed EpochFeed, opt epochOptions) (*EpochResult, error) {
	if p.Gateway.Replicas != 1 {
		return nil, fmt.Errorf("run epochs: the gateway task has %d replicas; the runner parses the files in one", p.Gateway.Replicas)
	}
	tables := scanOrder(p, nil)
	columns := feed.Columns
	for _, name := range tables {
		if columns[name] == nil {
			return nil, fmt.Errorf("run epochs: no table %q", name)
		}
	}
	res := &EpochResult{Versions: make([]map[string]Version, feed.Epochs), Files: map[string][]byte{}}
	byTask := map[string][]*epochInstance{}
	var all []*epochInstance
	var w wire.Writer
	tasks := []physical.Task{p.Gateway}
	if p.Shard.Name != p.Gateway.Name {
		tasks = append(tasks, p.Shard)
	}
	for _, task := range tasks {
		for i := range task.Replicas {
			in := &epochInstance{}
			out := EpochOut{
				Send: func(ch *physical.Channel, to int, epoch int64, rows *Rows) error {
					dest := byTask[ch.To]
					if to < 0 || to >= len(dest) {
						return fmt.Errorf("channel %s: no instance %d of %s", ch.Name, to, ch.To)
					}
					m := epochMessage{ch: ch.Name, sender: i, end: rows == nil}
					if rows != nil {
						m.encoded = w.Append(EncodeEpochHead(nil, epoch), rows.b, rows.s, rows.routes)
					}
					dest[to].queue = append(dest[to].queue, m)
					return nil
				},
				Marker: func(ch *physical.Channel, to int, epoch int64) error {
					dest := byTask[ch.To]
					if to < 0 || to >= len(dest) {
						return fmt.Errorf("channel %s: no instance %d of %s", ch.Name, to, ch.To)
					}
					dest[to].queue = append(dest[to].queue, epochMessage{ch: ch.Name, sender: i, encoded: EncodeEpochMarker(nil, epoch)})
					return nil
				},
				Version: func(v Version) error {
					if v.Final {
						res.Files[v.Query] = v.CSV
						return nil
					}
					if v.Epoch < 1 || int(v.Epoch) > len(res.Versions) {
						return fmt.Errorf("a version of %s of epoch %d, of %d", v.Query, v.Epoch, len(res.Versions))
					}
					if res.Versions[v.Epoch-1] == nil {
						res.Versions[v.Epoch-1] = map[string]Version{}
					}
					res.Versions[v.Epoch-1][v.Query] = v
					return nil
				},
			}
			in.cfg = EpochConfig{Plan: p, Task: task.Name, Index: i, Columns: columns, Out: out, Budget: opt.budget}
			t, err := NewEpochTask(in.cfg)
			if err != nil {
				return nil, fmt.Errorf("run epochs: %w", err)
			}
			in.t, in.scanned = t, opt.scanned
			all = append(all, in)
			byTask[task.Name] = append(byTask[task.Name], in)
		}
	}
	gw := byTask[p.Gateway.Name][0]
	var ready []*epochInstance
	// drain runs the instances until none has a message.
	drain := func() error {
		for {
			ready = ready[:0]
			for _, in := range all {
				if len(in.queue) > 0 {
					ready = append(ready, in)
				}
			}
			if len(ready) == 0 {
				return nil
			}
			k := len(ready) - 1
			if opt.pick != nil {
				k = opt.pick(len(ready))
			}
			in := ready[k]
			m := in.queue[0]
			in.queue = in.queue[1:]
			if opt.observe != nil {
				if err := opt.observe(in); err != nil {
					return fmt.Errorf("run epochs: %w", err)
				}
			}
			if opt.restart != nil && opt.restart() {
				if err := in.restart(); err != nil {
					return fmt.Errorf("run epochs: restart: %w", err)
				}
			}
			if err := in.deliver(m); err != nil {
				return fmt.Errorf("run epochs: task %s[%d]: %w", in.cfg.Task, in.cfg.Index, err)
			}
		}
	}
	for k := range feed.Epochs {
		for _, name := range tables {
			err := feed.Next(k+1, name, func(b *exec.Batch) error {
				gw.queue = append(gw.queue, epochMessage{table: name, batch: b})
				if opt.each == nil {
					return nil // RunEpochs: queued, the tests' schedules pick among them
				}
				return drain()
			})
			if err != nil {
				return nil, fmt.Errorf("run epochs: epoch %d: table %s: %w", k+1, name, err)
			}
		}
		if opt.unmarked && k == feed.Epochs-1 {
			res.Versions = res.Versions[:k]
			break
		}
		for _, name := range tables {
			gw.queue = append(gw.queue, epochMessage{table: name, epochEnd: true})
		}
		if opt.each == nil {
			continue
		}
		if err := drain(); err != nil {
			return nil, err
		}
		if v := res.Versions[k]; len(v) != len(p.Queries) {
			return nil, fmt.Errorf("run epochs: epoch %d has versions of %d queries, of %d", k+1, len(v), len(p.Queries))
		}
		if err := opt.each(int64(k+1), res.Versions[k]); err != nil {
			return nil, err
		}
		res.Versions[k] = nil
	}
	for _, name := range tables {
		gw.queue = append(gw.queue, epochMessage{table: name, end: true})
	}
	if err := drain(); err != nil {
		return nil, err
	}
	if opt.each != nil {
		res.Versions = nil
	}
	for _, in := range all {
		if !in.t.Done() {
			return nil, fmt.Errorf("run epochs: task %s[%d]: an operator's inputs never ended", in.cfg.Task, in.cfg.Index)
		}
		res.Stats = append(res.Stats, in.t.Stats()...)
	}
	for k, v := range res.Versions {
		if len(v) != len(p.Queries) {
			return nil, fmt.Errorf("run epochs: epoch %d has versions of %d queries, of %d", k+1, len(v), len(p.Queries))
		}
	}
	return res, nil
}

// deliver applies a message to the instance's task.
func (in *epochInstance) deliver(m epochMessage) error {
	t := in.t
	switch {
	case m.table != "" && m.end:
		return t.EndTable(m.table)
	case m.table != "" && m.epochEnd:
		return t.EndTableEpoch(m.table)
	case m.table != "" && in.scanned:
		u, err := t.scan(m.table)
		if err != nil {
			return err
		}
		n := u.bottom().Node
		idx, err := exec.ScanIndex(n, in.cfg.Columns[m.table])
		if err != nil {
			return err
		}
		b := &exec.Batch{N: m.batch.N, Cols: make([]*exec.Vec, len(idx))}
		for i, j := range idx {
			b.Cols[i] = exec.ReadAs(m.batch.Cols[j], n.Output[i], &exec.ColumnStats{})
		}
		return t.Scanned(m.table, b)
	case m.table != "":
		return t.Table(m.table, m.batch)
	case m.end:
		return t.End(m.ch, m.sender)
	}
	_, err := t.ReceiveEncoded(m.ch, m.encoded)
	return err
}

// restart replaces the instance's task by a fresh one restored from its
// snapshot, which must write the same snapshot again.
func (in *epochInstance) restart() error {
	snap, err := in.t.AppendSnapshot(nil)
	if err != nil {
		return err
	}
	fresh, err := NewEpochTask(in.cfg)
	if err != nil {
		return err
	}
	if err := fresh.Restore(slices.Clone(snap)); err != nil {
		return err
	}
	again, err := fresh.AppendSnapshot(nil)
	if err != nil {
		return err
	}
	if !bytes.Equal(again, snap) {
		return fmt.Errorf("task %s[%d]: restored, it snapshots %d bytes where it restored %d others", in.cfg.Task, in.cfg.Index, len(again), len(snap))
	}
	in.t = fresh
	return nil
}
