package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/cmdline/epochsplit"
)

// runEpochs is the job of `wololo local run --epochs N`: o's job as a
// standing job on the durable cluster, through the client as a user
// would run it, its input in n appends: each file and table cut into n
// contiguous runs of records (epochsplit.SplitCSV, as `wololo demo
// --epochs N` cuts its tables), the first runs submitted with
// --standing, each next one appended. It prints a line per version (each
// query's rows, and its change from the version before), then closes the
// job and writes its final results into o.Out as a batch submit does:
// the batch job's answers. The parts are written to a temporary
// directory, removed at the end.
func runEpochs(ctx context.Context, o client.SubmitOptions, n int, stdout io.Writer) (*client.Summary, error) {
	start := time.Now()
	dir, err := os.MkdirTemp("", "wololo-epochs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	matches, players := make([]string, n), make([]string, n) // none for a job of tables only
	if o.Matches != "" {
		if matches, err = epochsplit.SplitCSV(o.Matches, dir, n); err != nil {
			return nil, err
		}
		if players, err = epochsplit.SplitCSV(o.Players, dir, n); err != nil {
			return nil, err
		}
	}
	tables := make([][]string, len(o.Tables))
	for i, t := range o.Tables {
		tdir := filepath.Join(dir, fmt.Sprintf("table%d", i)) // two tables' files may share a name
		if err := os.Mkdir(tdir, 0o755); err != nil {
			return nil, err
		}
		if tables[i], err = epochsplit.SplitCSV(t.Path, tdir, n); err != nil {
			return nil, fmt.Errorf("table %s: %w", t.Name, err)
		}
	}
	gw, err := client.Open(o.Server, o.TLS, o.Reach)
	if err != nil {
		return nil, err
	}
	defer gw.Close()
	names := queries.Names
	if len(o.Queries) > 0 {
		names = nil
		for _, q := range o.Queries {
			names = append(names, q.Name)
		}
	}
	epochsplit.Header(stdout, n)
	var upload time.Duration // every epoch's
	for k := range n {
		e := o
		e.Matches, e.Players, e.Out = matches[k], players[k], filepath.Join(dir, "version")
		e.Tables = nil
		for i, t := range o.Tables {
			e.Tables = append(e.Tables, client.Table{Name: t.Name, Path: tables[i][k]})
		}
		var sum *client.Summary
		if k == 0 {
			e.Standing = true
			sum, err = client.Submit(ctx, e)
		} else {
			sum, err = client.Append(ctx, e)
		}
		if err != nil {
			return sum, fmt.Errorf("epoch %d of %d: %w", k+1, n, err)
		}
		o.JobID = sum.JobID
		upload += sum.Upload
		if err := versionLine(ctx, gw, stdout, sum, names); err != nil {
			return sum, err
		}
	}
	sum, err := client.Finish(ctx, o)
	if sum != nil {
		sum.Upload, sum.Total = upload, time.Since(start)
	}
	return sum, err
}

// versionLine prints the line of the version sum waited for: its rows of
// each query (names, in order), and its change's size, which the gateway
// streams as `watch --answers` does.
func versionLine(ctx context.Context, gw *client.Session, w io.Writer, sum *client.Summary, names []string) error {
	in, out, err := gw.ChangeSizes(ctx, sum.JobID, sum.Epoch)
	if err != nil {
		return fmt.Errorf("the change of epoch %d: %w", sum.Epoch, err)
	}
	qs := make([]epochsplit.Query, len(names))
	for i, name := range names {
		qs[i] = epochsplit.Query{Name: name, Rows: sum.Job.GetResultRows()[name+".csv"], In: in[name], Out: out[name]}
	}
	epochsplit.Line(w, sum.Epoch, qs)
	return nil
}
