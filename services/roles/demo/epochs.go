package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/wololo/wololo/services/base/cpuprofile"
	"github.com/wololo/wololo/services/cmdline/epochsplit"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// runEpochs is `wololo demo --epochs N`: the job run as a standing job
// (sqlops.RunEpochsEach) whose tables come in n appends, each table's
// rows cut into n contiguous runs (epochsplit.RunLast: the last holding
// lastPercent of them when above 0), the k-th run of every table in
// epoch k, read from its feed as the epoch starts (count is each table's
// rows, found before the first epoch). It prints a line per version as
// its epoch ends (each query's rows, and its change from the version
// before: rows in, rows out; and what the epoch cost, its reading
// included), and returns the final answers, which are the batch job's.
// As the last version is out, with its state live, it writes a heap
// profile to memProfile (none when empty).
func runEpochs(ctx context.Context, job *sqljob.Job, feeds []sqlops.Feed, count func(table string) (int, error), n int, lastPercent float64, memProfile string, stdout io.Writer) (*sqlops.Result, error) {
	feed := sqlops.EpochFeed{Columns: map[string][]string{}, Epochs: n}
	cutters := make([]*feedCutter, len(feeds))
	for i, f := range feeds {
		total, err := count(f.Table)
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", f.Table, err)
		}
		feed.Columns[f.Table] = f.Columns
		cutters[i] = &feedCutter{f: f, total: total}
	}
	feed.Next = func(k int) (map[string]*exec.Table, error) {
		tables := map[string]*exec.Table{}
		for _, c := range cutters {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			_, to := epochsplit.RunLast(c.total, n, k-1, lastPercent)
			bs, err := c.upTo(to)
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", c.f.Table, err)
			}
			tables[c.f.Table] = &exec.Table{Columns: c.f.Columns, Batches: bs}
			if k == n {
				if err := c.atEnd(); err != nil {
					return nil, fmt.Errorf("table %s: %w", c.f.Table, err)
				}
			}
		}
		return tables, nil
	}
	epochsplit.Header(stdout, n)
	cpu, wall := processCPU(), time.Now()
	res, err := sqlops.RunEpochsEach(job.Plan, feed, func(k int64, vs map[string]sqlops.Version) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		nowCPU, now := processCPU(), time.Now()
		var qs []epochsplit.Query
		for _, q := range job.Logical {
			v := vs[q.Name]
			in, out := epochsplit.ChangeSize(v.Change)
			qs = append(qs, epochsplit.Query{Name: q.Name, Rows: int64(bytes.Count(v.CSV, []byte("\n")) - 1), In: in, Out: out})
		}
		epochsplit.CostLine(stdout, k, qs, nowCPU-cpu, now.Sub(wall))
		if k == int64(n) {
			if err := cpuprofile.WriteHeap(memProfile); err != nil {
				return err
			}
		}
		cpu, wall = processCPU(), time.Now() // the profile's writing is no epoch's
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &sqlops.Result{Files: res.Files, Stats: res.Stats}, nil
}

// feedCutter reads a table's feed an epoch at a time.
type feedCutter struct {
	f     sqlops.Feed
	total int         // the table's rows
	read  int         // the rows handed out so far
	carry *exec.Batch // the rest of a batch astride two epochs
}

// upTo is the rows after those handed out so far up to row to (not
// included), read from the feed: its batches as they are, but the one
// astride the end, whose rest is kept for the next call.
func (c *feedCutter) upTo(to int) ([]*exec.Batch, error) {
	var out []*exec.Batch
	for c.read < to {
		b := c.carry
		c.carry = nil
		if b == nil {
			var err error
			if b, err = c.f.Next(); err != nil {
				return nil, err
			}
			if b == nil {
				return nil, fmt.Errorf("%d rows, where %d were counted", c.read, c.total)
			}
		}
		if c.read+b.N > to {
			head := to - c.read
			out = append(out, rowRange([]*exec.Batch{b}, 0, head)...)
			c.carry = rowRange([]*exec.Batch{b}, head, b.N)[0]
			c.read = to
			break
		}
		out = append(out, b)
		c.read += b.N
	}
	return out, nil
}

// atEnd refuses a feed with rows after those counted.
func (c *feedCutter) atEnd() error {
	b := c.carry
	if b == nil {
		var err error
		if b, err = c.f.Next(); err != nil {
			return err
		}
	}
	if b != nil {
		return fmt.Errorf("more rows than the %d counted", c.total)
	}
	return nil
}

// processCPU is the CPU time, user and system, this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rowRange is the rows [from, to) of the batches taken in order: the
// batches wholly inside the range as they are, the rows of the others
// copied.
func rowRange(batches []*exec.Batch, from, to int) []*exec.Batch {
	var out []*exec.Batch
	at := 0 // the first row of b
	for _, b := range batches {
		lo, hi := max(from-at, 0), min(to-at, b.N)
		at += b.N
		switch {
		case lo >= hi:
		case lo == 0 && hi == b.N:
			out = append(out, b)
		default:
			rows := make([]int32, 0, hi-lo)
			for i := lo; i < hi; i++ {
				rows = append(rows, int32(i))
			}
			out = append(out, b.Rows(rows))
		}
	}
	return out
}
