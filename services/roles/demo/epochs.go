package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/wololo/wololo/services/cmdline/epochsplit"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// runEpochs is `wololo demo --epochs N`: the job run as a standing job
// (sqlops.RunEpochs) whose tables come in n appends, each table's records
// cut into n contiguous runs, the k-th run of every table in epoch k. It
// prints a line per version (each query's rows, and its change from the
// version before: rows in, rows out), and returns the final answers,
// which are the batch job's.
func runEpochs(ctx context.Context, job *sqljob.Job, feeds []sqlops.Feed, n int, stdout io.Writer) (*sqlops.Result, error) {
	epochs := make([]map[string]*exec.Table, n)
	for k := range epochs {
		epochs[k] = map[string]*exec.Table{}
	}
	for _, f := range feeds {
		var batches []*exec.Batch
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
			batches = append(batches, b)
		}
		cols := make([]plan.Column, len(f.Columns))
		for i, c := range f.Columns {
			cols[i] = plan.Column{Name: c, Type: plan.Text}
		}
		all := exec.Concat(cols, batches)
		for k := range n {
			from, to := epochsplit.Run(all.N, n, k)
			rows := make([]int32, 0, to-from)
			for i := from; i < to; i++ {
				rows = append(rows, int32(i))
			}
			epochs[k][f.Table] = &exec.Table{Columns: f.Columns, Batches: []*exec.Batch{all.Rows(rows)}}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := sqlops.RunEpochs(job.Plan, epochs)
	if err != nil {
		return nil, err
	}
	epochsplit.Header(stdout, n)
	for k, vs := range res.Versions {
		var qs []epochsplit.Query
		for _, q := range job.Logical {
			v := vs[q.Name]
			in, out := epochsplit.ChangeSize(v.Change)
			qs = append(qs, epochsplit.Query{Name: q.Name, Rows: int64(bytes.Count(v.CSV, []byte("\n")) - 1), In: in, Out: out})
		}
		epochsplit.Line(stdout, int64(k+1), qs)
	}
	return &sqlops.Result{Files: res.Files, Stats: res.Stats}, nil
}
