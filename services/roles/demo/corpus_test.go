package demo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/roles/demo"
	"github.com/wololo/wololo/services/roles/node"
)

// corpusJob is one job of testdata/jobs.json: its two files' headers
// (nil: the generator's), its tables, its queries (none: the four
// default ones), and the verdict every way of running it must give.
type corpusJob struct {
	What             string
	Matches, Players []string
	Tables           []struct {
		Name   string
		Header []string
	}
	Queries []struct {
		Name, SQL string
		Default   string // the text of this default query instead of SQL
	}
	// NoFiles is a job of its tables only: no matches.csv, no
	// match_players.csv (Matches and Players are not read).
	NoFiles bool
	Repeat  int // the first query this many times, named q1..qN
	Pad     int // a comment of this many bytes after the first query, on a line of its own
	Want    string
	Msg     string // the refusal's message, when given
}

// kind is the verdict of an error of the job's checks: "ok", or the
// kind of refusal.
func kind(err error) string {
	var se *sql.Error
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, sqljob.ErrName):
		return "name"
	case errors.Is(err, sqljob.ErrTable):
		return "table"
	case errors.Is(err, sqljob.ErrColumn):
		return "column"
	case errors.Is(err, sqljob.ErrLimit):
		return "limit"
	case errors.As(err, &se):
		return "query"
	}
	return "other: " + err.Error()
}

// statusKind is the verdict of a CreateJob's answer: "ok", or the kind
// want if the status has want's code and says core; else what it is.
func statusKind(err error, want, core string) string {
	if err == nil {
		return "ok"
	}
	st := status.Convert(err)
	code := codes.InvalidArgument
	if want == "limit" {
		code = codes.ResourceExhausted
	}
	if st.Code() == code && strings.Contains(st.Message(), core) {
		return want
	}
	return fmt.Sprintf("other: %s: %s", st.Code(), st.Message())
}

// TestCorpus: every job of testdata/jobs.json gets the same verdict,
// accepted or refused with the same kind and message, from the job's
// checks (sqljob.Check), `wololo explain`, `wololo demo`, the gateway's
// CreateJob (a cluster in this process) and `wololo local run`'s path
// (the client's request, client.Request, sent to that CreateJob).
func TestCorpus(t *testing.T) {
	t.Setenv(deploy.EnvTopology, "")
	b, err := os.ReadFile("testdata/jobs.json")
	if err != nil {
		t.Fatal(err)
	}
	var jobs []corpusJob
	if err := json.Unmarshal(b, &jobs); err != nil {
		t.Fatal(err)
	}
	if len(jobs) < 40 {
		t.Fatalf("%d jobs in the corpus, want at least 40", len(jobs))
	}
	top := deploy.Default()
	shape, err := physical.ShapeOf(top)
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := node.StartCluster(top, node.ClusterOptions{Insecure: true, Log: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	conn, err := client.Dial(cluster.GatewayAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	js := wololov1.NewJobServiceClient(conn)
	ctx := context.Background()
	// createJob sends req to the gateway's CreateJob and deletes the job
	// it makes, so that the client's quota of jobs is never reached.
	createJob := func(req *wololov1.CreateJobRequest) error {
		resp, err := js.CreateJob(ctx, req)
		if err == nil {
			_, err = js.DeleteJob(ctx, &wololov1.DeleteJobRequest{JobId: resp.GetJobId()})
			if err != nil {
				t.Fatalf("delete job %s: %v", resp.GetJobId(), err)
			}
		}
		return err
	}
	kinds := map[string]int{}
	for i, j := range jobs {
		kinds[j.Want]++
		t.Run(j.What, func(t *testing.T) {
			f := writeJob(t, j)
			direct, err := sqljob.Check(f.spec, sqljob.DefaultLimits, shape)
			if got := kind(err); got != j.Want {
				t.Fatalf("sqljob.Check: %s (%v), want %s", got, err, j.Want)
			}
			core := ""
			if err != nil {
				core = err.Error()
				var se *sql.Error
				if errors.As(err, &se) { // its query's label names the file in explain and demo
					core = se.Error()
				}
				if j.Msg != "" && core != j.Msg {
					t.Errorf("sqljob.Check says %q, want %q", core, j.Msg)
				}
			} else if direct == nil {
				t.Fatal("sqljob.Check: no job and no error")
			}
			same := func(who, got string, err error) {
				t.Helper()
				if got != j.Want || (err != nil && !strings.Contains(err.Error(), core)) {
					t.Errorf("%s: %s (%v), want %s saying %q", who, got, err, j.Want, core)
				}
			}
			err = explain.Run(ctx, f.args, io.Discard, io.Discard)
			same("wololo explain", kind(err), err)
			err = demo.Run(ctx, append(f.args, "--out", filepath.Join(f.dir, "out")), io.Discard, io.Discard)
			same("wololo demo", kind(err), err)
			err = createJob(f.request(fmt.Sprintf("gw-%d", i)))
			same("the gateway's CreateJob", statusKind(err, j.Want, core), err)
			o := client.SubmitOptions{Matches: f.matches, Players: f.players, Queries: f.queries, JobID: fmt.Sprintf("local-%d", i)}
			for _, tb := range f.tables {
				o.Tables = append(o.Tables, client.Table{Name: tb[0], Path: tb[1]})
			}
			req, err := client.Request(o)
			if err == nil {
				err = createJob(req)
				same("wololo local run (client and gateway)", statusKind(err, j.Want, core), err)
			} else {
				same("wololo local run (the client's checks)", kind(err), err)
			}
		})
	}
	for _, k := range []string{"ok", "name", "table", "column", "limit", "query"} {
		if kinds[k] == 0 {
			t.Errorf("the corpus has no job of verdict %s", k)
		}
	}
}

// jobFiles is a corpus job written as files and described as each way of
// running it takes it.
type jobFiles struct {
	dir, matches, players string
	tables                [][2]string // name, path
	queries               []sqljob.Query
	spec                  sqljob.Spec
	args                  []string // explain's and demo's
	headers               [][]string
}

func writeJob(t *testing.T, j corpusJob) *jobFiles {
	t.Helper()
	f := &jobFiles{dir: t.TempDir()}
	m, p := datagen.Headers()
	if j.Matches != nil {
		m = j.Matches
	}
	if j.Players != nil {
		p = j.Players
	}
	write := func(name, text string) string {
		path := filepath.Join(f.dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	f.headers = [][]string{m, p}
	f.spec = sqljob.Spec{Matches: m, Players: p}
	if j.NoFiles {
		f.spec = sqljob.Spec{NoFiles: true}
	} else {
		f.matches = write("matches.csv", strings.Join(m, ",")+"\n")
		f.players = write("match_players.csv", strings.Join(p, ",")+"\n")
		f.args = []string{"--matches", f.matches, "--players", f.players}
	}
	for i, tb := range j.Tables {
		path := write(fmt.Sprintf("table%d.csv", i), strings.Join(tb.Header, ",")+"\n")
		f.tables = append(f.tables, [2]string{tb.Name, path})
		f.headers = append(f.headers, tb.Header)
		f.spec.Tables = append(f.spec.Tables, sqljob.Table{Name: tb.Name, Columns: tb.Header})
		f.args = append(f.args, "--table", tb.Name+"="+path)
	}
	type query struct{ name, text string }
	var qs []query
	for _, q := range j.Queries {
		text := q.SQL
		if q.Default != "" {
			var ok bool
			if text, ok = queries.Text(q.Default); !ok {
				t.Fatalf("no default query %s", q.Default)
			}
		}
		qs = append(qs, query{q.Name, text})
	}
	if j.Pad > 0 {
		qs[0].text += "\n-- " + strings.Repeat("x", j.Pad-3)
	}
	for i := 1; i < j.Repeat; i++ {
		qs = append(qs, query{fmt.Sprintf("q%d", i+1), qs[0].text})
	}
	if j.Repeat > 0 {
		qs[0].name = "q1"
	}
	for i, q := range qs {
		path := write(fmt.Sprintf("query%d.sql", i), q.text)
		f.queries = append(f.queries, sqljob.Query{Name: q.name, From: path, Text: q.text})
		f.args = append(f.args, "--query", q.name+"="+path)
	}
	f.spec.Queries, f.spec.Own = f.queries, len(f.queries) > 0
	if !f.spec.Own {
		for _, name := range queries.Names {
			text, _ := queries.Text(name)
			f.spec.Queries = append(f.spec.Queries, sqljob.Query{Name: name, Text: text})
		}
	}
	return f
}

// request is the job as a CreateJob of the gateway's own API: its
// headers (none for a job of tables only), its queries, its tables.
func (f *jobFiles) request(id string) *wololov1.CreateJobRequest {
	header := func(cols []string) *wololov1.FileHeader {
		n := int64(len(strings.Join(cols, ",")) + 1)
		return &wololov1.FileHeader{Columns: cols, Size: n, DataOffset: n}
	}
	req := &wololov1.CreateJobRequest{JobId: id}
	if !f.spec.NoFiles {
		req.Matches, req.Players = header(f.headers[0]), header(f.headers[1])
	}
	for i, tb := range f.tables {
		req.Tables = append(req.Tables, &wololov1.Table{Name: tb[0], Header: header(f.headers[2+i])})
	}
	for _, q := range f.queries {
		req.Queries = append(req.Queries, &wololov1.Query{Name: q.Name, Sql: q.Text})
	}
	return req
}
