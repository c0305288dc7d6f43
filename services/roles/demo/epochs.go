package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

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
			from, to := all.N*k/n, all.N*(k+1)/n
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
	fmt.Fprintf(stdout, "standing job: %d appends, a version of each query after each\n", n)
	for k, vs := range res.Versions {
		var parts []string
		for _, q := range job.Logical {
			v := vs[q.Name]
			in, out := changeSize(v.Change)
			parts = append(parts, fmt.Sprintf("%s %d rows (+%d -%d)", q.Name, bytes.Count(v.CSV, []byte("\n"))-1, in, out))
		}
		fmt.Fprintf(stdout, "version %d: %s\n", k+1, strings.Join(parts, ", "))
	}
	return &sqlops.Result{Files: res.Files, Stats: res.Stats}, nil
}

// changeSize is the rows a change's CSV (its last field each row's
// weight, +n or -n) adds and takes away.
func changeSize(change []byte) (in, out int64) {
	_, body, _ := bytes.Cut(change, []byte("\n"))
	for l := range strings.Lines(string(body)) {
		w, err := strconv.ParseInt(strings.TrimSpace(l[strings.LastIndexByte(l, ',')+1:]), 10, 64)
		switch {
		case err != nil:
		case w > 0:
			in += w
		default:
			out -= w
		}
	}
	return in, out
}
