package gateway

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/transport"
)

// Two queries over the required columns, which the test headers hold.
var (
	civsQuery = &wololov1.Query{Name: "civs", Sql: "SELECT civ, COUNT(*) AS n FROM match_players GROUP BY civ"}
	mapsQuery = &wololov1.Query{Name: "by-map", Sql: "SELECT map, COUNT(*) AS n FROM matches GROUP BY map"}
)

// queryRequest is createRequest with queries.
func queryRequest(id string, queries ...*wololov1.Query) *wololov1.CreateJobRequest {
	req := createRequest(id)
	req.Queries = queries
	return req
}

// wantExplain is what CreateJob must answer for queries over the test
// headers on the default topology: sqljob's plans, as `wololo explain`
// prints them.
func wantExplain(t *testing.T, queries ...*wololov1.Query) (string, []byte) {
	t.Helper()
	shape, err := physical.ShapeOf(deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	cat := sql.Catalog{"matches": schema.RequiredColumns[schema.Matches], "match_players": schema.RequiredColumns[schema.Players]}
	job, err := sqljob.Plan(queriesOf(queries), cat, shape)
	if err != nil {
		t.Fatal(err)
	}
	b, err := job.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return job.Explain(), b
}

// TestQueriesRefused: a query the SQL engine refuses is InvalidArgument
// naming the query, the construct and its line:column; a name that is
// not one is InvalidArgument too; too many queries, or too many bytes of
// them, are ResourceExhausted naming the flag. Nothing is created.
func TestQueriesRefused(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGatewayWith(t, store, Config{MaxQueries: 3, MaxQueryBytes: 200}, make(chan string, 1))
	q := func(name, text string) *wololov1.Query { return &wololov1.Query{Name: name, Sql: text} }
	cases := []struct {
		name    string
		queries []*wololov1.Query
		code    codes.Code
		want    string
	}{
		{"unsupported construct", []*wololov1.Query{civsQuery, q("lj", "SELECT token\nFROM matches m NATURAL JOIN match_players p")}, codes.InvalidArgument, "query lj: 2:16: NATURAL JOIN: not supported"},
		{"unknown column", []*wololov1.Query{q("col", "SELECT nope FROM matches")}, codes.InvalidArgument, `matches.csv: no column "nope" (read by query col at`},
		{"unknown table", []*wololov1.Query{q("tab", "SELECT civ FROM civs")}, codes.InvalidArgument, "query tab: 1:17: table civs"},
		{"syntax error", []*wololov1.Query{q("syn", "SELECT civ FROM match_players WHERE")}, codes.InvalidArgument, "query syn: 1:"},
		{"a column of no header", []*wololov1.Query{q("hdr", "SELECT patch FROM matches")}, codes.InvalidArgument, `matches.csv: no column "patch" (read by query hdr at`},
		{"a name with a dot", []*wololov1.Query{q("a.b", "SELECT civ FROM match_players")}, codes.InvalidArgument, `"a.b"`},
		{"an empty name", []*wololov1.Query{q("", "SELECT civ FROM match_players")}, codes.InvalidArgument, "query name"},
		{"a name twice", []*wololov1.Query{civsQuery, civsQuery}, codes.InvalidArgument, "query civs is named twice"},
		{"too many queries", []*wololov1.Query{q("a", "x"), q("b", "x"), q("c", "x"), q("d", "x")}, codes.ResourceExhausted, "4 queries, more than a job may have (3, --max-queries)"},
		{"too many bytes", []*wololov1.Query{q("a", strings.Repeat(" ", 150)+"SELECT civ FROM match_players"), q("b", strings.Repeat(" ", 50))}, codes.ResourceExhausted, "queries of 229 bytes together, more than a job may have (200, --max-query-bytes)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := svc.CreateJob(context.Background(), queryRequest("j", c.queries...))
			if status.Code(err) != c.code || !strings.Contains(status.Convert(err).Message(), c.want) {
				t.Fatalf("CreateJob: %v; want %v saying %q", err, c.code, c.want)
			}
		})
	}
	if img, _ := store.Load(); len(img.Jobs) != 0 {
		t.Fatalf("refused jobs were stored: %d jobs", len(img.Jobs))
	}
	// The syntax error names its construct and position as the engine does.
	_, err := svc.CreateJob(context.Background(), queryRequest("j", q("syn", "SELEC civ FROM match_players")))
	if msg := status.Convert(err).Message(); !strings.HasPrefix(msg, "query syn: 1:1: syntax") {
		t.Errorf("syntax error: %q", msg)
	}
	// The tables' columns are the headers': with patch in it, it is known.
	req := queryRequest("j", q("hdr", "SELECT patch FROM matches"))
	req.Matches.Columns = append(req.Matches.Columns, "patch")
	if _, err := svc.CreateJob(context.Background(), req); err != nil {
		t.Errorf("a query of a column of the header: %v", err)
	}
}

// collect is a GetResults stream that keeps what it is sent.
type collect struct {
	grpc.ServerStream
	names []string
	files map[string][]byte
}

func (c *collect) Context() context.Context { return context.Background() }
func (c *collect) Send(r *wololov1.GetResultsResponse) error {
	if c.files == nil {
		c.files = map[string][]byte{}
	}
	if _, ok := c.files[r.Name]; !ok {
		c.names = append(c.names, r.Name)
	}
	c.files[r.Name] = append(c.files[r.Name], r.Data...)
	return nil
}

// TestJobOfQueries: a job of queries answers with its plans, records its
// queries and plan, shows the names in its views, keeps all of it over a
// restart, resumes with the same queries and refuses others, and its
// results are NAME.csv of each query, in order.
func TestJobOfQueries(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGateway(t, store, time.Hour, make(chan string, 1))
	explain, plan := wantExplain(t, civsQuery, mapsQuery)
	r, err := svc.CreateJob(context.Background(), queryRequest("sql", civsQuery, mapsQuery))
	if err != nil {
		t.Fatal(err)
	}
	if r.Resumed || r.Explain != explain {
		t.Fatalf("CreateJob: resumed %v, explain:\n%s\nwant:\n%s", r.Resumed, r.Explain, explain)
	}
	names := []string{"civs", "by-map"}
	check := func(t *testing.T, svc wololov1.JobServiceServer) {
		t.Helper()
		g := svc.(jobService).g
		id := internalID(t, g, "sql")
		if got, ok := g.PlanOf(id); !ok || !bytes.Equal(got, plan) {
			t.Errorf("PlanOf: %d bytes (%v), want the plan of %d", len(got), ok, len(plan))
		}
		v, err := svc.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "sql"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(v.Job.Queries, names) {
			t.Errorf("GetJob queries %q, want %q", v.Job.Queries, names)
		}
		cj := g.ClusterJobs()
		if len(cj) != 1 || !slices.Equal(cj[0].Queries, names) {
			t.Errorf("ClusterJobs %v, want queries %q", cj, names)
		}
	}
	check(t, svc)
	img, _ := store.Load()
	for id, ji := range img.Jobs {
		rec, err := decodeJobRecord(ji.Records[recordMeta])
		if err != nil || len(rec.Queries) != 2 || rec.Queries[1].Sql != mapsQuery.Sql || !bytes.Equal(rec.Plan, plan) {
			t.Fatalf("job %s's record: %v (%v)", id, rec, err)
		}
	}

	// Restarted on the same store.
	svc = testGateway(t, store, time.Hour, make(chan string, 1))
	check(t, svc)
	r, err = svc.CreateJob(context.Background(), queryRequest("sql", civsQuery, mapsQuery))
	if err != nil || !r.Resumed || r.Explain != explain {
		t.Fatalf("resume with the same queries: %v, %v", r, err)
	}
	other := &wololov1.Query{Name: "by-map", Sql: mapsQuery.Sql + " ORDER BY n"}
	for what, qs := range map[string][]*wololov1.Query{
		"another text":  {civsQuery, other},
		"another order": {mapsQuery, civsQuery},
		"one less":      {civsQuery},
		"none":          nil,
	} {
		_, err := svc.CreateJob(context.Background(), queryRequest("sql", qs...))
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "other queries (civs, by-map then)") {
			t.Errorf("resume with %s: %v; want FailedPrecondition naming the queries", what, err)
		}
	}

	// The sink's results are NAME.csv of each query: committed, as the
	// sink does, and handed to the gateway.
	g := svc.(jobService).g
	id := internalID(t, g, "sql")
	results := map[string][]byte{
		schema.ResultRecord("civs.csv"):   []byte("civ,n\nAztecs,2\nBritons,1\n"),
		schema.ResultRecord("by-map.csv"): []byte("map,n\n"),
	}
	if err := store.Commit(&transport.Commit{Job: id, Records: results}); err != nil {
		t.Fatal(err)
	}
	g.Finished(id, results)
	v, err := svc.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "sql"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"civs.csv": 2, "by-map.csv": 0}; v.Job.State != wololov1.JobState_JOB_STATE_DONE || len(v.Job.ResultRows) != 2 || v.Job.ResultRows["civs.csv"] != 2 || v.Job.ResultRows["by-map.csv"] != 0 {
		t.Errorf("done job: %v, result rows %v; want %v", v.Job.State, v.Job.ResultRows, want)
	}
	var c collect
	if err := svc.GetResults(&wololov1.GetResultsRequest{JobId: "sql"}, &c); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.names, []string{"civs.csv", "by-map.csv"}) || string(c.files["civs.csv"]) != "civ,n\nAztecs,2\nBritons,1\n" {
		t.Errorf("GetResults sent %q: %q", c.names, c.files)
	}

	// Restarted once done: the results are found under the queries' names.
	svc = testGateway(t, store, time.Hour, make(chan string, 1))
	c = collect{}
	if err := svc.GetResults(&wololov1.GetResultsRequest{JobId: "sql"}, &c); err != nil {
		t.Fatalf("GetResults after a restart: %v", err)
	}
	if !slices.Equal(c.names, []string{"civs.csv", "by-map.csv"}) || string(c.files["by-map.csv"]) != "map,n\n" {
		t.Errorf("GetResults after a restart sent %q: %q", c.names, c.files)
	}
}

// TestDefaultQueriesRunAsSQL: a job that gives no queries runs the four of
// queries/ as SQL: its record holds them and their plan, its explain is
// theirs, its results are q1..q4; a resume without queries, or with the
// four default files given as queries, is the same job; and the quotas,
// which bound
// the client's own queries, do not refuse the default ones.
func TestDefaultQueriesRunAsSQL(t *testing.T) {
	store := transport.NewMemStore()
	small := testGatewayWith(t, transport.NewMemStore(), Config{MaxQueries: 1, MaxQueryBytes: 10}, make(chan string, 1))
	if _, err := small.CreateJob(context.Background(), createRequest("d")); err != nil {
		t.Errorf("the default queries on a gateway of --max-queries 1: %v", err)
	}
	svc := testGateway(t, store, time.Hour, make(chan string, 1))
	r, err := svc.CreateJob(context.Background(), createRequest("d"))
	if err != nil || !strings.Contains(r.Explain, "query q4, logical plan") {
		t.Fatalf("CreateJob: %v, %v", r, err)
	}
	g := svc.(jobService).g
	id := internalID(t, g, "d")
	img, _ := store.Load()
	rec, err := decodeJobRecord(img.Jobs[id].Records[recordMeta])
	if err != nil || len(rec.Queries) != 4 || len(rec.Plan) == 0 {
		t.Fatalf("the default job's record: %d queries, a plan of %d bytes (%v)", len(rec.GetQueries()), len(rec.GetPlan()), err)
	}
	for i, q := range rec.Queries {
		if text, _ := queries.Text(queries.Names[i]); q.Name != queries.Names[i] || q.Sql != text {
			t.Errorf("query %d recorded as %q, want %s.sql", i, q.Name, queries.Names[i])
		}
	}
	if plan, ok := g.PlanOf(id); !ok || !bytes.Equal(plan, rec.Plan) {
		t.Errorf("PlanOf the default job: %d bytes, %v", len(plan), ok)
	}
	if r, err := svc.CreateJob(context.Background(), createRequest("d")); err != nil || !r.Resumed {
		t.Errorf("resumed without queries: %v, %v", r, err)
	}
	given := createRequest("d")
	given.Queries = defaultQueries
	if r, err := svc.CreateJob(context.Background(), given); err != nil || !r.Resumed {
		t.Errorf("resumed with the default files as queries: %v, %v", r, err)
	}
	g.Finished(id, headerOnlyResults())
	var c collect
	if err := svc.GetResults(&wololov1.GetResultsRequest{JobId: "d"}, &c); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.names, schema.ResultFiles(queries.Names)) {
		t.Errorf("GetResults sent %q, want %q", c.names, schema.ResultFiles(queries.Names))
	}
}

// TestIntroducedWithThePlan: a job of queries is introduced with its plan.
func TestIntroducedWithThePlan(t *testing.T) {
	svc := testGateway(t, transport.NewMemStore(), time.Hour, make(chan string, 1))
	if _, err := svc.CreateJob(context.Background(), queryRequest("sql", civsQuery)); err != nil {
		t.Fatal(err)
	}
	_, plan := wantExplain(t, civsQuery)
	g := svc.(jobService).g
	j, err := g.jobs.lookup("", "sql")
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	g.SetIntroducer(func(_ context.Context, job string, p []byte) error {
		got = p
		return nil
	})
	if err := g.introduce(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plan) {
		t.Errorf("introduced with a plan of %d bytes, want its %d", len(got), len(plan))
	}
}
