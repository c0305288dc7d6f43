package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/wololo/wololo/services/cmdline/epochsplit"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// runEpochs is `wololo demo --epochs N`: the job run as a standing job
// (sqlops.RunEpochsEach) whose tables come in n appends, each table's
// rows cut into n contiguous runs (epochsplit.RunLast: the last holding
// lastPercent of them when above 0), the k-th run of every table in
// epoch k. It prints a line per version as its epoch ends (each query's
// rows, and its change from the version before: rows in, rows out; and
// the epoch's cost, epochCost), and returns the final answers, which are
// the batch job's.
func runEpochs(ctx context.Context, job *sqljob.Job, feeds []sqlops.Feed, n int, lastPercent float64, stdout io.Writer) (*sqlops.Result, error) {
	epochs := make([]map[string]*exec.Table, n)
	for k := range epochs {
		epochs[k] = map[string]*exec.Table{}
	}
	rows := make([]int, n) // per epoch, its rows of every table
	all := 0
	readCPU := processCPU()
	for _, f := range feeds {
		var batches []*exec.Batch
		total := 0
		for {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("table %s: %w", f.Table, err)
			}
			b, err := f.Next()
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", f.Table, err)
			}
			if b == nil {
				break
			}
			batches, total = append(batches, b), total+b.N
		}
		for k := range n {
			from, to := epochsplit.RunLast(total, n, k, lastPercent)
			epochs[k][f.Table] = &exec.Table{Columns: f.Columns, Batches: rowRange(batches, from, to)}
			rows[k] += to - from
		}
		all += total
	}
	readCPU = processCPU() - readCPU
	epochsplit.Header(stdout, n)
	cost := epochCost{readCPU: readCPU, allRows: all, cpu: processCPU(), wall: time.Now()}
	res, err := sqlops.RunEpochsEach(job.Plan, epochs, func(k int64, vs map[string]sqlops.Version) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		cpu, wall := cost.next(rows[k-1])
		var qs []epochsplit.Query
		for _, q := range job.Logical {
			v := vs[q.Name]
			in, out := epochsplit.ChangeSize(v.Change)
			qs = append(qs, epochsplit.Query{Name: q.Name, Rows: int64(bytes.Count(v.CSV, []byte("\n")) - 1), In: in, Out: out})
		}
		epochsplit.CostLine(stdout, k, qs, cpu, wall)
		epochs[k-1] = nil // its rows are the runner's now, and let go when it is done with them
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &sqlops.Result{Files: res.Files, Stats: res.Stats}, nil
}

// epochCost is what each epoch costs the process, as a version's line
// shows it: the CPU time (user and system) and the wall time from the
// end of the epoch before to its own, and its share, by rows, of the
// CPU time that reading every table took before the first epoch (the
// demo reads the input whole, then appends it; a deployment reads each
// append as it comes).
type epochCost struct {
	readCPU time.Duration
	allRows int
	cpu     time.Duration // at the end of the epoch before
	wall    time.Time     // at the end of the epoch before
}

// next is the cost of the epoch that just ended, of rows rows.
func (c *epochCost) next(rows int) (cpu, wall time.Duration) {
	nowCPU, now := processCPU(), time.Now()
	cpu, wall = nowCPU-c.cpu, now.Sub(c.wall)
	if c.allRows > 0 {
		cpu += time.Duration(float64(c.readCPU) * float64(rows) / float64(c.allRows))
	}
	c.cpu, c.wall = nowCPU, now
	return cpu, wall
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
