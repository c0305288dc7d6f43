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
// records cut into n contiguous runs as its file is read (epochsplit.Cuts,
// exec.NewCSVReaderCut: runs[i] is the run of the batch feeds[i] returned
// last), the k-th run of every table in epoch k, read from its feed as
// the epoch starts. It prints a line per version as its epoch ends (each
// query's rows, and its change from the version before: rows in, rows
// out; and what the epoch cost, its reading included), and returns the
// final answers, which are the batch job's. As the last version is out,
// with its state live, it writes a heap profile to memProfile (none when
// empty).
func runEpochs(ctx context.Context, job *sqljob.Job, feeds []sqlops.Feed, runs []func() int, n int, memProfile string, stdout io.Writer) (*sqlops.Result, error) {
	feed := sqlops.EpochFeed{Columns: map[string][]string{}, Epochs: n}
	cutters := make([]*feedCutter, len(feeds))
	for i, f := range feeds {
		feed.Columns[f.Table] = f.Columns
		cutters[i] = &feedCutter{f: f, run: runs[i]}
	}
	feed.Next = func(k int) (map[string]*exec.Table, error) {
		tables := map[string]*exec.Table{}
		for _, c := range cutters {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			bs, err := c.upTo(k - 1)
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", c.f.Table, err)
			}
			tables[c.f.Table] = &exec.Table{Columns: c.f.Columns, Batches: bs}
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
	run   func() int  // the run of the batch f.Next returned last
	carry *exec.Batch // a batch of a run after those handed out
	at    int         // carry's run
	ended bool        // f.Next returned the end
}

// upTo is the batches of the runs up to run (included) not handed out
// yet, read from the feed; the first batch of a later run is kept for
// the next call. The last epoch's call (run n-1) reads the feed to its
// end.
func (c *feedCutter) upTo(run int) ([]*exec.Batch, error) {
	var out []*exec.Batch
	for {
		if c.carry == nil {
			if c.ended {
				return out, nil
			}
			b, err := c.f.Next()
			if err != nil {
				return nil, err
			}
			if b == nil {
				c.ended = true
				return out, nil
			}
			c.carry, c.at = b, c.run()
		}
		if c.at > run {
			return out, nil
		}
		out = append(out, c.carry)
		c.carry = nil
	}
}

// processCPU is the CPU time, user and system, this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
