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

// runEpochs is the job of `wololo local run --epochs N` (and of
// --epoch-every D): o's job as a standing job on the durable cluster,
// through the client as a user would run it, its input in n appends:
// each file and table cut into n contiguous runs of records
// (epochsplit.SplitCSV, at the byte offsets where `wololo demo --epochs
// N` cuts them too),
// the first runs submitted with --standing, each next one appended; with
// o.EpochEvery the gateway also cuts epochs while each uploads. From the
// job's creation on it follows the job's versions as `client watch
// --answers` does and prints a line for each as it is published (each
// query's rows, its change from the version before, and when it came
// out), then closes the job and writes its final results into o.Out as a
// batch submit does: the batch job's answers. The parts are written to a
// temporary directory, removed at the end (with n = 1 the files are read
// as they are).
func runEpochs(ctx context.Context, o client.SubmitOptions, n int, stdout io.Writer) (*client.Summary, error) {
	start := time.Now()
	dir, err := os.MkdirTemp("", "wololo-epochs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	parts, err := splitInputs(o, dir, n)
	if err != nil {
		return nil, err
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
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w := &versionWatch{out: stdout, names: names, rows: map[string]int64{}, began: time.Now()}
	follow := client.Follow(watchCtx, gw, w.version)
	var upload time.Duration // every epoch's
	for k := range n {
		e := parts.epoch(o, k)
		e.Out = filepath.Join(dir, "version")
		e.Created = follow.Created
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
	}
	keep := o.Keep
	o.Keep = true // released below, once every version is printed
	sum, err := client.Finish(ctx, o)
	if err != nil {
		return sum, err
	}
	if err := follow.Wait(ctx); err != nil { // it ends with the job's last version
		return sum, fmt.Errorf("follow the versions of job %s: %w", o.JobID, err)
	}
	if !keep {
		if err := gw.Delete(ctx, o.JobID); err != nil {
			fmt.Fprintf(stdout, "warning: could not release job %s at the gateway (%v)\n", o.JobID, err)
		}
	}
	fmt.Fprintf(stdout, "first version out %s after the upload began; %d versions\n", w.first.Round(time.Millisecond), w.last)
	sum.Upload, sum.Total = upload, time.Since(start)
	return sum, nil
}

// epochParts are the paths of each epoch's part of each input.
type epochParts struct {
	matches, players []string
	tables           [][]string // by table of o.Tables, then by epoch
}

// splitInputs cuts o's files and tables into n parts each in dir (n = 1:
// the files themselves).
func splitInputs(o client.SubmitOptions, dir string, n int) (*epochParts, error) {
	p := &epochParts{tables: make([][]string, len(o.Tables))}
	if n == 1 {
		p.matches, p.players = []string{o.Matches}, []string{o.Players}
		for i, t := range o.Tables {
			p.tables[i] = []string{t.Path}
		}
		return p, nil
	}
	var err error
	p.matches, p.players = make([]string, n), make([]string, n) // none for a job of tables only
	if o.Matches != "" {
		if p.matches, err = epochsplit.SplitCSV(o.Matches, dir, n); err != nil {
			return nil, err
		}
		if p.players, err = epochsplit.SplitCSV(o.Players, dir, n); err != nil {
			return nil, err
		}
	}
	for i, t := range o.Tables {
		tdir := filepath.Join(dir, fmt.Sprintf("table%d", i)) // two tables' files may share a name
		if err := os.Mkdir(tdir, 0o755); err != nil {
			return nil, err
		}
		if p.tables[i], err = epochsplit.SplitCSV(t.Path, tdir, n); err != nil {
			return nil, fmt.Errorf("table %s: %w", t.Name, err)
		}
	}
	return p, nil
}

// epoch is o with its inputs those of epoch k.
func (p *epochParts) epoch(o client.SubmitOptions, k int) client.SubmitOptions {
	e := o
	e.Matches, e.Players = p.matches[k], p.players[k]
	e.Tables = nil
	for i, t := range o.Tables {
		e.Tables = append(e.Tables, client.Table{Name: t.Name, Path: p.tables[i][k]})
	}
	return e
}

// versionWatch prints a standing job's versions as they are published:
// each query's rows (the sum of its changes so far: a change is the
// difference from the version before), its change, and the time since
// began.
type versionWatch struct {
	out   io.Writer
	names []string
	rows  map[string]int64
	began time.Time
	first time.Duration // when version 1 came out
	last  int64         // the last version printed
}

func (w *versionWatch) version(epoch int64, changes []client.AnswerChange) error {
	at := time.Since(w.began)
	if w.last == 0 {
		w.first = at
	}
	w.last = epoch
	in, out := map[string]int64{}, map[string]int64{}
	for _, c := range changes {
		if c.Diff > 0 {
			in[c.Query] += c.Diff
		} else {
			out[c.Query] -= c.Diff
		}
	}
	qs := make([]epochsplit.Query, len(w.names))
	for i, name := range w.names {
		w.rows[name] += in[name] - out[name]
		qs[i] = epochsplit.Query{Name: name, Rows: w.rows[name], In: in[name], Out: out[name]}
	}
	epochsplit.LineAt(w.out, epoch, qs, at)
	return nil
}
