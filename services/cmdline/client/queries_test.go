package client

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/dataflow/schema"
)

// queryGateway is a gateway that takes a job of queries whole: CreateJob
// answers with an explain text (or refuses with refuse), each upload is
// done at once, the job is done at once with the results named, and
// GetResults sends them.
type queryGateway struct {
	wololov1.UnimplementedJobServiceServer
	refuse  error             // CreateJob's answer, if set
	results map[string]string // result file → content
	sent    []string          // the result files GetResults sends, in order

	mu      sync.Mutex
	req     *wololov1.CreateJobRequest
	uploads []*wololov1.UploadStart // the uploads' starts, in order
}

const fakeExplain = "query civs, logical plan:\nscan match_players\n\nphysical plan on gateway[1] and shard[2]:\n"

func (g *queryGateway) CreateJob(_ context.Context, req *wololov1.CreateJobRequest) (*wololov1.CreateJobResponse, error) {
	g.mu.Lock()
	g.req = req
	g.mu.Unlock()
	if g.refuse != nil {
		return nil, g.refuse
	}
	return &wololov1.CreateJobResponse{JobId: req.JobId, Explain: fakeExplain}, nil
}

func (g *queryGateway) Upload(stream wololov1.JobService_UploadServer) error {
	start, err := stream.Recv()
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.uploads = append(g.uploads, start.GetStart())
	size := g.req.Matches.Size
	if start.GetStart().GetFile() == wololov1.InputFile_INPUT_FILE_PLAYERS {
		size = g.req.Players.Size
	}
	for _, t := range g.req.Tables {
		if t.Name == start.GetStart().GetTable() {
			size = t.Header.Size
		}
	}
	g.mu.Unlock()
	return stream.Send(&wololov1.UploadResponse{Offset: size, Done: true})
}

func (g *queryGateway) WatchJob(req *wololov1.WatchJobRequest, stream wololov1.JobService_WatchJobServer) error {
	job := &wololov1.Job{JobId: req.JobId, State: wololov1.JobState_JOB_STATE_DONE, ResultRows: map[string]int64{}}
	g.mu.Lock()
	for _, q := range g.req.Queries {
		job.Queries = append(job.Queries, q.Name)
	}
	g.mu.Unlock()
	for name, data := range g.results {
		job.ResultRows[name] = int64(schema.ResultRows([]byte(data)))
	}
	return stream.Send(&wololov1.WatchJobResponse{Job: job})
}

func (g *queryGateway) GetResults(_ *wololov1.GetResultsRequest, stream wololov1.JobService_GetResultsServer) error {
	for _, name := range g.sent {
		if err := stream.Send(&wololov1.GetResultsResponse{Name: name, Data: []byte(g.results[name])}); err != nil {
			return err
		}
	}
	return nil
}

func (g *queryGateway) DeleteJob(context.Context, *wololov1.DeleteJobRequest) (*wololov1.DeleteJobResponse, error) {
	return &wololov1.DeleteJobResponse{}, nil
}

// serveQueries serves g on a loopback port and returns its address.
func serveQueries(t *testing.T, g *queryGateway) string {
	t.Helper()
	return serveJobs(t, g)
}

// queryFiles writes the two input files and two query files.
func queryFiles(t *testing.T) (dir string, args []string) {
	t.Helper()
	dir = t.TempDir()
	files := map[string]string{
		"matches.csv":       "token,ladder,mirror,average_rating,map,server,duration\nt,RM_1v1,False,1000,arabia,ukwest,100\n",
		"match_players.csv": "token,match,rating,color,civ,team,winner\np,t,1000,Red,franks,1,True\n",
		"civs.sql":          "SELECT civ, COUNT(*) AS n FROM match_players GROUP BY civ",
		"maps.sql":          "SELECT map FROM matches",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, []string{"--matches", filepath.Join(dir, "matches.csv"), "--players", filepath.Join(dir, "match_players.csv"),
		"--query", "civs=" + filepath.Join(dir, "civs.sql"), "--query", "by-map=" + filepath.Join(dir, "maps.sql")}
}

func runClient(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// TestSubmitQueries: --query sends each query's name and text, in order;
// --explain prints the gateway's plans before anything else on stdout;
// the results written are NAME.csv of each query, listed in the queries'
// order; with --json the object carries the plans and the names.
func TestSubmitQueries(t *testing.T) {
	results := map[string]string{"civs.csv": "civ,n\nfranks,1\n", "by-map.csv": "map\narabia\n"}
	g := &queryGateway{results: results, sent: []string{"civs.csv", "by-map.csv"}}
	addr := serveQueries(t, g)
	_, args := queryFiles(t)
	out := t.TempDir()
	stdout, _, err := runClient(t, append([]string{"submit", "--insecure", "--server", addr, "--quiet", "--explain", "--out", out, "--job", "j"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var names, texts []string
	g.mu.Lock()
	for _, q := range g.req.Queries {
		names, texts = append(names, q.Name), append(texts, q.Sql)
	}
	g.mu.Unlock()
	if !slices.Equal(names, []string{"civs", "by-map"}) || !strings.HasPrefix(texts[0], "SELECT civ") || texts[1] != "SELECT map FROM matches" {
		t.Errorf("CreateJob got queries %q %q", names, texts)
	}
	if !strings.HasPrefix(stdout, fakeExplain+"job j: done") {
		t.Errorf("stdout does not start with the plans, then the summary:\n%s", stdout)
	}
	if i, j := strings.Index(stdout, "civs.csv "), strings.Index(stdout, "by-map.csv "); i < 0 || j < i {
		t.Errorf("the summary lists the results out of the queries' order:\n%s", stdout)
	}
	for name, want := range results {
		if got, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q (%v), want %q", name, got, err, want)
		}
	}

	stdout, _, err = runClient(t, append([]string{"submit", "--insecure", "--server", addr, "--quiet", "--explain", "--json", "--out", t.TempDir(), "--job", "j"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var r SubmitReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("--json --explain: not one object (%v): %q", err, stdout)
	}
	if r.Explain != fakeExplain || !slices.Equal(r.Queries, []string{"civs", "by-map"}) || len(r.Outputs) != 2 || r.Outputs[0].Name != "civs.csv" || r.Outputs[1].Rows != 1 {
		t.Errorf("--json --explain: explain %q queries %q outputs %+v", r.Explain, r.Queries, r.Outputs)
	}
	// Without --explain the object has none.
	stdout, _, err = runClient(t, append([]string{"submit", "--insecure", "--server", addr, "--quiet", "--json", "--out", t.TempDir(), "--job", "j"}, args...)...)
	if err != nil || strings.Contains(stdout, `"explain"`) {
		t.Errorf("--json without --explain: %v, %s", err, stdout)
	}
}

// TestSubmitQueryRefused: a query the gateway refuses exits as a refusal
// with the gateway's message (construct and line:column), and --json says
// so in its object.
func TestSubmitQueryRefused(t *testing.T) {
	msg := "query civs: 1:8: column nope: no such column"
	addr := serveQueries(t, &queryGateway{refuse: status.Error(codes.InvalidArgument, msg)})
	_, args := queryFiles(t)
	_, _, err := runClient(t, append([]string{"submit", "--insecure", "--server", addr, "--quiet", "--out", t.TempDir()}, args...)...)
	if cli.ExitCode(err) != cli.ExitRefused || err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("refused query: %v (exit %d), want exit %d with %q", err, cli.ExitCode(err), cli.ExitRefused, msg)
	}
	stdout, _, err := runClient(t, append([]string{"submit", "--insecure", "--server", addr, "--quiet", "--json", "--out", t.TempDir()}, args...)...)
	var r SubmitReport
	if jerr := json.Unmarshal([]byte(stdout), &r); jerr != nil || cli.ExitCode(err) != cli.ExitRefused || r.Error != msg || r.State != "unknown" {
		t.Errorf("--json, refused query: %v (exit %d), object %+v (%v)", err, cli.ExitCode(err), r, jerr)
	}
}

// TestSubmitQueryFlags: the flags' mistakes are found before the gateway
// is called.
func TestSubmitQueryFlags(t *testing.T) {
	dir, files := queryFiles(t)
	base := []string{"submit", "--insecure", "--server", closedAddr(t), "--out", t.TempDir(), "--matches", files[1], "--players", files[3]}
	cases := []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"--query", "a.b=" + filepath.Join(dir, "civs.sql")}, cli.ExitUsage, `"a.b"`},
		{[]string{"--query", "rejects=" + filepath.Join(dir, "civs.sql")}, cli.ExitUsage, "reserved"},
		{[]string{"--query", "civs"}, cli.ExitUsage, "want NAME=FILE"},
		{[]string{"--query", "a=" + filepath.Join(dir, "civs.sql"), "--query", "a=" + filepath.Join(dir, "civs.sql")}, cli.ExitUsage, "query a is named twice"},
		{[]string{"--query", "q=" + filepath.Join(dir, "missing.sql")}, cli.ExitError, "query q: open"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, _, err := runClient(t, append(slices.Clone(base), c.args...)...)
			if cli.ExitCode(err) != c.exit || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v (exit %d), want exit %d saying %q", err, cli.ExitCode(err), c.exit, c.want)
			}
		})
	}
}

// TestResultNames: what the gateway names a result file is written only
// if it is NAME.csv of a query name; FetchResults writes nothing else.
func TestResultNames(t *testing.T) {
	for _, c := range []struct {
		file string
		ok   bool
	}{
		{"q1.csv", true}, {"by-map.csv", true}, {"civs", false}, {"../x.csv", false}, {"a/b.csv", false},
		{".csv", false}, {"rejects.csv", false}, {"x.csv.csv", false},
	} {
		if err := ResultName(c.file); (err == nil) != c.ok {
			t.Errorf("ResultName(%q) = %v, want ok %v", c.file, err, c.ok)
		}
	}
	out := t.TempDir()
	if _, err := WriteResults(out, map[string][]byte{"good.csv": []byte("a\n"), "../evil.csv": []byte("b\n")}); err == nil {
		t.Fatal("WriteResults wrote ../evil.csv")
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("WriteResults refused a name, yet wrote %v", entries)
	}
	if got := ResultFiles(nil); !slices.Equal(got, schema.ResultFiles(queries.Names)) {
		t.Errorf("ResultFiles(nil) = %q", got)
	}
	if got := ResultFiles(&wololov1.Job{Queries: []string{"b", "a"}}); !slices.Equal(got, []string{"b.csv", "a.csv"}) {
		t.Errorf("ResultFiles of queries b, a = %q", got)
	}
}
