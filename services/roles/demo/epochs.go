package demo

import (
	"bytes"
	"context"
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
	cutters := map[string]*feedCutter{}
	for i, f := range feeds {
		feed.Columns[f.Table] = f.Columns
		cutters[f.Table] = &feedCutter{f: f, run: runs[i]}
	}
	feed.Next = func(k int, table string, yield func(*exec.Batch) error) error {
		c := cutters[table]
		if c == nil {
			return nil
		}
		return c.upTo(k-1, func(b *exec.Batch) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return yield(b)
		})
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

// upTo yields the batches of the runs up to run (included) not handed
// out yet, read from the feed as they are yielded; the first batch of a
// later run is kept for the next call. The last epoch's call (run n-1)
// reads the feed to its end.
func (c *feedCutter) upTo(run int, yield func(*exec.Batch) error) error {
	for {
		if c.carry == nil {
			if c.ended {
				return nil
			}
			b, err := c.f.Next()
			if err != nil {
				return err
			}
			if b == nil {
				c.ended = true
				return nil
			}
			c.carry, c.at = b, c.run()
		}
		if c.at > run {
			return nil
		}
		b := c.carry
		c.carry = nil
		if err := yield(b); err != nil {
			return err
		}
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
