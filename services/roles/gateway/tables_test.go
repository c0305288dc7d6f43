package gateway

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/transport"
)

// regionsQuery joins match_players with the table regions.
var regionsQuery = &wololov1.Query{Name: "regions", Sql: "SELECT r.region, COUNT(*) AS n FROM match_players p JOIN regions r ON p.civ = r.civ GROUP BY r.region"}

// csvFile is a file of a header row and a body: its header as CreateJob
// takes it, and its bytes.
type csvFile struct {
	cols []string
	body string
}

func (f csvFile) head() string { return strings.Join(f.cols, ",") + "\n" }

func (f csvFile) size() int64 { return int64(len(f.head()) + len(f.body)) }

func (f csvFile) header() *wololov1.FileHeader {
	return &wololov1.FileHeader{Columns: f.cols, DataOffset: int64(len(f.head())), Size: f.size()}
}

// The files of TestJobWithATable: two players, a regions table with one
// malformed record.
var (
	tMatches = csvFile{schema.RequiredColumns[schema.Matches], matchRows(0, 2)}
	tPlayers = csvFile{schema.RequiredColumns[schema.Players], "tok0000,1200,Aztecs,True\ntok0000,1100,Britons,False\ntok0001,1000,Aztecs,False\n"}
	tRegions = csvFile{[]string{"civ", "region"}, "Aztecs,Americas\nBritons,Europe\nnot,a,row\n"}
)

// tableRequest is a job of the regions query over the test files and the
// regions table.
func tableRequest(id string) *wololov1.CreateJobRequest {
	regions := tRegions.header()
	regions.Fingerprint = []byte("regions")
	return &wololov1.CreateJobRequest{JobId: id, Matches: tMatches.header(), Players: tPlayers.header(),
		Queries: []*wololov1.Query{regionsQuery}, Tables: []*wololov1.Table{{Name: "regions", Header: regions}}}
}

// uploadInput uploads an input of job id from its data offset to the
// end (finish: with its Finish frame), and reports the gateway's last
// acknowledgement.
func uploadInput(g wololov1.JobServiceServer, id string, start *wololov1.UploadStart, f csvFile, finish bool) (*wololov1.UploadResponse, error) {
	start.JobId = id
	frames := []*wololov1.UploadRequest{{Frame: &wololov1.UploadRequest_Start{Start: start}}, {Frame: &wololov1.UploadRequest_Data{Data: []byte(f.body)}}}
	if finish {
		frames = append(frames, &wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: f.size()}}})
	}
	s := &fakeUpload{ctx: context.Background(), in: frames}
	err := g.Upload(s)
	if len(s.sent) == 0 {
		return nil, err
	}
	return s.sent[len(s.sent)-1], err
}

// TestTablesRefused: what CreateJob refuses of a job's tables, before
// anything is stored: tables without queries, names that are not a
// table's (reserved, given twice, not identifiers), a table without a
// header or with a bad one, more tables than --max-tables, sizes past the
// job's byte quota, a query of a column its header lacks.
func TestTablesRefused(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGatewayWith(t, store, Config{MaxTables: 2, MaxJobBytes: 1000, MaxHeaderBytes: 100}, make(chan string, 1))
	regions := func(edit func(*wololov1.Table)) *wololov1.Table {
		tb := &wololov1.Table{Name: "regions", Header: tRegions.header()}
		if edit != nil {
			edit(tb)
		}
		return tb
	}
	named := func(name string) *wololov1.Table { return regions(func(tb *wololov1.Table) { tb.Name = name }) }
	cases := []struct {
		name   string
		edit   func(*wololov1.CreateJobRequest)
		code   codes.Code
		saying string
	}{
		{"a table without queries", func(r *wololov1.CreateJobRequest) { r.Queries = nil }, codes.InvalidArgument, "no queries"},
		{"matches", func(r *wololov1.CreateJobRequest) { r.Tables = append(r.Tables, named("matches")) }, codes.InvalidArgument, "the table of matches.csv"},
		{"match_players in capitals", func(r *wololov1.CreateJobRequest) { r.Tables = append(r.Tables, named("MATCH_PLAYERS")) }, codes.InvalidArgument, "the table of match_players.csv"},
		{"a name twice", func(r *wololov1.CreateJobRequest) { r.Tables = append(r.Tables, named("Regions")) }, codes.InvalidArgument, "given twice"},
		{"a leading digit", func(r *wololov1.CreateJobRequest) { r.Tables = append(r.Tables, named("2nd")) }, codes.InvalidArgument, "not starting with a digit"},
		{"a dash", func(r *wololov1.CreateJobRequest) { r.Tables = append(r.Tables, named("a-b")) }, codes.InvalidArgument, "letters, digits and '_' only"},
		{"a path", func(r *wololov1.CreateJobRequest) { r.Tables = append(r.Tables, named("../x")) }, codes.InvalidArgument, "letters, digits and '_' only"},
		{"an empty name", func(r *wololov1.CreateJobRequest) { r.Tables = append(r.Tables, named("")) }, codes.InvalidArgument, "1 to 64"},
		{"no header", func(r *wololov1.CreateJobRequest) {
			r.Tables = append(r.Tables, regions(func(tb *wololov1.Table) { tb.Name, tb.Header = "other", nil }))
		}, codes.InvalidArgument, `table "other": no header`},
		{"too many tables", func(r *wololov1.CreateJobRequest) { r.Tables = append(r.Tables, named("b"), named("c")) }, codes.ResourceExhausted, "3 tables, more than a job may have (2, --max-tables)"},
		{"a negative size", func(r *wololov1.CreateJobRequest) { r.Tables[0].Header.Size = -1 }, codes.InvalidArgument, "table regions: a file of -1 bytes"},
		{"a long header row", func(r *wololov1.CreateJobRequest) {
			r.Tables[0].Header.Columns = append(r.Tables[0].Header.Columns, strings.Repeat("x", 100))
		}, codes.ResourceExhausted, "table regions: a header row of"},
		{"past the job's bytes", func(r *wololov1.CreateJobRequest) { r.Tables[0].Header.Size = 1000 }, codes.ResourceExhausted, "--max-job-bytes"},
		{"sizes that wrap together", func(r *wololov1.CreateJobRequest) { r.Tables[0].Header.Size = 1<<63 - 1 }, codes.ResourceExhausted, "--max-job-bytes"},
		{"a column the table lacks", func(r *wololov1.CreateJobRequest) { r.Tables[0].Header.Columns = []string{"civ", "area"} }, codes.InvalidArgument, `table regions: no column "region" (read by query regions at`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := tableRequest("j")
			c.edit(req)
			_, err := svc.CreateJob(context.Background(), req)
			if status.Code(err) != c.code || !strings.Contains(status.Convert(err).Message(), c.saying) {
				t.Fatalf("CreateJob: %v; want %v saying %q", err, c.code, c.saying)
			}
		})
	}
	if img, _ := store.Load(); len(img.Jobs) != 0 {
		t.Fatalf("refused jobs were stored: %d jobs", len(img.Jobs))
	}
	if _, err := svc.CreateJob(context.Background(), tableRequest("j")); err != nil {
		t.Fatalf("the job as it is: %v", err)
	}
}

// TestJobWithATable: a job's table is uploaded by name after the two
// files, its malformed records counted and listed as theirs; the job runs
// only once the table is in too; the views report it and count its bytes;
// a restarted gateway keeps all of it; a resume with other tables is
// refused, and an upload names a table of the job or nothing.
func TestJobWithATable(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGateway(t, store, time.Hour, make(chan string, 1))
	if _, err := svc.CreateJob(context.Background(), tableRequest("t")); err != nil {
		t.Fatal(err)
	}
	for what, start := range map[string]*wololov1.UploadStart{
		"an unknown table":   {Table: "nope"},
		"a file and a table": {Table: "regions", File: wololov1.InputFile_INPUT_FILE_MATCHES},
		"neither":            {},
	} {
		if _, err := uploadInput(svc, "t", start, tRegions, true); status.Code(err) != codes.InvalidArgument {
			t.Errorf("upload of %s: %v, want InvalidArgument", what, err)
		}
	}
	for _, in := range []struct {
		start *wololov1.UploadStart
		f     csvFile
	}{{&wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES}, tMatches}, {&wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_PLAYERS}, tPlayers}} {
		if _, err := uploadInput(svc, "t", in.start, in.f, true); err != nil {
			t.Fatal(err)
		}
	}
	if job := getJob(t, svc, "t"); job.State != wololov1.JobState_JOB_STATE_UPLOADING {
		t.Fatalf("both files in, the table not: %v, want uploading", job.State)
	}
	// The table's rows before its last record, then a restart.
	cut := strings.Index(tRegions.body, "not,")
	part := csvFile{tRegions.cols, tRegions.body[:cut]}
	if r, err := uploadInput(svc, "t", &wololov1.UploadStart{Table: "regions"}, part, false); err != nil || r.Offset != int64(len(tRegions.head())+cut) {
		t.Fatalf("the table's first rows: %v, %v", r, err)
	}
	svc = testGateway(t, store, time.Hour, make(chan string, 1))
	if job := getJob(t, svc, "t"); len(job.Tables) != 1 || job.Tables[0].Offset != int64(len(tRegions.head())+cut) || job.Tables[0].Rows != 2 {
		t.Fatalf("after a restart: the table's report %v, want 2 rows at offset %d", job.Tables, len(tRegions.head())+cut)
	}
	rest := csvFile{tRegions.cols, tRegions.body[cut:]}
	if r, err := uploadInput(svc, "t", &wololov1.UploadStart{Table: "regions"}, rest, false); err != nil || !strings.HasPrefix(tRegions.body[cut:], "not,") {
		t.Fatalf("the table's last record: %v, %v", r, err)
	}
	fin := []*wololov1.UploadRequest{
		{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: "t", Table: "regions"}}},
		{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: tRegions.size()}}},
	}
	if err := svc.Upload(&fakeUpload{ctx: context.Background(), in: fin}); err != nil {
		t.Fatalf("the table's end: %v", err)
	}
	check := func(t *testing.T, when string, svc wololov1.JobServiceServer) {
		t.Helper()
		job := getJob(t, svc, "t")
		if job.State != wololov1.JobState_JOB_STATE_RUNNING {
			t.Errorf("%s: %v, want running once the table is in", when, job.State)
		}
		if len(job.Tables) != 1 {
			t.Fatalf("%s: %d table reports, want 1", when, len(job.Tables))
		}
		r := job.Tables[0]
		if r.File != "regions" || r.Rows != 3 || r.Malformed != 1 || !r.Done || r.Size != tRegions.size() || r.Offset != tRegions.size() {
			t.Errorf("%s: the table's report %v", when, r)
		}
		cj := svc.(jobService).g.ClusterJobs()
		want := tMatches.size() + tPlayers.size() + tRegions.size()
		if len(cj) != 1 || cj[0].BytesTotal != want || cj[0].BytesUploaded != want || !cj[0].InputComplete {
			t.Errorf("%s: ClusterJobs %v, want %d bytes of %d, input complete", when, cj, want, want)
		}
	}
	check(t, "live", svc)
	svc = testGateway(t, store, time.Hour, make(chan string, 1))
	check(t, "after a restart", svc)
	// A failed job lists its rejects: the table's is listed under its name.
	g := svc.(jobService).g
	j, err := g.jobs.lookup("", "t")
	if err != nil {
		t.Fatal(err)
	}
	j.fail("for the test", time.Now(), false)
	job := getJob(t, svc, "t")
	if rj := job.Tables[0].Rejects; len(rj) != 1 || string(rj[0].Head) != "not,a,row\n" || rj[0].Reason != schema.RejectFieldCount {
		t.Errorf("the table's rejects: %v", rj)
	}

	// Resumes: the same tables resume, others are refused; without the
	// table its query does not compile.
	if r, err := svc.CreateJob(context.Background(), tableRequest("t")); err != nil || !r.Resumed {
		t.Fatalf("resume with the same table: %v, %v", r, err)
	}
	for _, c := range []struct {
		what string
		edit func(*wololov1.CreateJobRequest)
		code codes.Code
	}{
		{"no table", func(r *wololov1.CreateJobRequest) { r.Tables = nil }, codes.InvalidArgument},
		{"another name", func(r *wololov1.CreateJobRequest) { r.Tables[0].Name = "zones" }, codes.InvalidArgument},
		{"another size", func(r *wololov1.CreateJobRequest) { r.Tables[0].Header.Size++ }, codes.FailedPrecondition},
		{"another content", func(r *wololov1.CreateJobRequest) { r.Tables[0].Header.Fingerprint = []byte("zones") }, codes.FailedPrecondition},
		{"one table more", func(r *wololov1.CreateJobRequest) {
			r.Tables = append(r.Tables, &wololov1.Table{Name: "x", Header: tRegions.header()})
		}, codes.FailedPrecondition},
	} {
		req := tableRequest("t")
		c.edit(req)
		if _, err := svc.CreateJob(context.Background(), req); status.Code(err) != c.code {
			t.Errorf("resume with %s: %v, want %v", c.what, err, c.code)
		}
	}
}

// TestTableMalformedLimit: a table past the job's --max-malformed fails
// the job at the end of its upload, naming the table.
func TestTableMalformedLimit(t *testing.T) {
	svc := testGateway(t, transport.NewMemStore(), time.Hour, make(chan string, 1))
	req := tableRequest("m")
	limit := 0.0 // past schema.MalformedGrace, any share
	req.MaxMalformed = &limit
	if _, err := svc.CreateJob(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_, err := uploadInput(svc, "m", &wololov1.UploadStart{Table: "regions"}, tRegions, true)
	const want = "table regions: 1 of 3 records malformed (33.3%), more than --max-malformed 0%"
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), want) {
		t.Fatalf("upload: %v, want FailedPrecondition saying %q", err, want)
	}
	if job := getJob(t, svc, "m"); job.State != wololov1.JobState_JOB_STATE_FAILED || !strings.HasPrefix(job.Message, want) {
		t.Fatalf("job %v %q", job.State, job.Message)
	}
}

// TestInputKeys: the inputs' store keys, the two files' then each
// table's.
func TestInputKeys(t *testing.T) {
	var got []string
	for _, in := range inputsOf(tableRequest("x")) {
		got = append(got, in.in.key)
	}
	if !slices.Equal(got, []string{"matches.csv", "match_players.csv", "table/regions"}) {
		t.Errorf("the inputs' store keys: %q", got)
	}
}

// salesQuery reads the table sales alone.
var salesQuery = &wololov1.Query{Name: "by_region", Sql: "SELECT region, COUNT(*) AS n FROM sales GROUP BY region"}

// tablesOnlyRequest is a job of its table sales only: no matches.csv,
// no match_players.csv.
func tablesOnlyRequest(id string) *wololov1.CreateJobRequest {
	return &wololov1.CreateJobRequest{JobId: id, Queries: []*wololov1.Query{salesQuery},
		Tables: []*wololov1.Table{{Name: "sales", Header: tRegions.header()}}}
}

// TestTablesOnlyJob: a job of tables only is created without the two
// files, which it reports as nothing; it runs once its tables are in,
// also after a restart; an upload of either file is refused, as is a
// resume with the files, a query reading their tables (at creation) and
// one file without the other.
func TestTablesOnlyJob(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGateway(t, store, time.Hour, make(chan string, 1))
	tRegions := csvFile{[]string{"civ", "region"}, tRegions.body}
	refused := []struct {
		what, saying string
		edit         func(*wololov1.CreateJobRequest)
	}{
		{"a query of matches", "this job has no matches.csv: query m", func(r *wololov1.CreateJobRequest) {
			r.Queries = append(r.Queries, &wololov1.Query{Name: "m", Sql: "SELECT COUNT(*) AS n FROM matches"})
		}},
		{"matches alone", "both file headers are required, or neither", func(r *wololov1.CreateJobRequest) { r.Matches = tMatches.header() }},
		{"match_players alone", "both file headers are required, or neither", func(r *wololov1.CreateJobRequest) { r.Players = tPlayers.header() }},
		{"no table", "no table", func(r *wololov1.CreateJobRequest) { r.Tables = nil }},
	}
	for _, c := range refused {
		req := tablesOnlyRequest("o")
		req.Tables[0].Header = tRegions.header()
		c.edit(req)
		if _, err := svc.CreateJob(context.Background(), req); status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), c.saying) {
			t.Errorf("%s: %v, want InvalidArgument saying %q", c.what, err, c.saying)
		}
	}
	if img, _ := store.Load(); len(img.Jobs) != 0 {
		t.Fatalf("refused jobs were stored: %d jobs", len(img.Jobs))
	}
	if _, err := svc.CreateJob(context.Background(), tablesOnlyRequest("o")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []wololov1.InputFile{wololov1.InputFile_INPUT_FILE_MATCHES, wololov1.InputFile_INPUT_FILE_PLAYERS} {
		if _, err := uploadInput(svc, "o", &wololov1.UploadStart{File: f}, tMatches, true); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "a job of tables only") {
			t.Errorf("upload of %v: %v, want InvalidArgument", f, err)
		}
	}
	if job := getJob(t, svc, "o"); job.State != wololov1.JobState_JOB_STATE_UPLOADING || job.Matches != nil || job.Players != nil || len(job.Tables) != 1 {
		t.Fatalf("before its table: %v, matches %v, players %v, tables %d", job.State, job.Matches, job.Players, len(job.Tables))
	}
	if _, err := uploadInput(svc, "o", &wololov1.UploadStart{Table: "sales"}, tRegions, true); err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"live", "after a restart"} {
		if when != "live" {
			svc = testGateway(t, store, time.Hour, make(chan string, 1))
		}
		job := getJob(t, svc, "o")
		if job.State != wololov1.JobState_JOB_STATE_RUNNING || job.Matches != nil || job.Players != nil || len(job.Tables) != 1 || job.Tables[0].Rows != 3 {
			t.Fatalf("%s: %v, matches %v, players %v, tables %v", when, job.State, job.Matches, job.Players, job.Tables)
		}
		cj := svc.(jobService).g.ClusterJobs()
		if len(cj) != 1 || cj[0].BytesTotal != tRegions.size() || !cj[0].InputComplete {
			t.Fatalf("%s: ClusterJobs %v, want %d bytes, input complete", when, cj, tRegions.size())
		}
	}
	if r, err := svc.CreateJob(context.Background(), tablesOnlyRequest("o")); err != nil || !r.Resumed {
		t.Fatalf("resume: %v, %v", r, err)
	}
	withFiles := tablesOnlyRequest("o")
	withFiles.Matches, withFiles.Players = tMatches.header(), tPlayers.header()
	if _, err := svc.CreateJob(context.Background(), withFiles); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("resume with the two files: %v, want FailedPrecondition", err)
	}
}

// TestTablesOnlyStanding: a standing job of tables only takes appends of
// its tables, and refuses one that gives the two files (or one of them).
func TestTablesOnlyStanding(t *testing.T) {
	svc := testGateway(t, transport.NewMemStore(), time.Hour, make(chan string, 1))
	ctx := context.Background()
	req := tablesOnlyRequest("s")
	req.Standing = true
	if _, err := svc.CreateJob(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := uploadInput(svc, "s", &wololov1.UploadStart{Table: "sales", Epoch: 1}, tRegions, true); err != nil {
		t.Fatal(err)
	}
	sales := []*wololov1.Table{{Name: "sales", Header: tRegions.header()}}
	for what, a := range map[string]*wololov1.AppendJobRequest{
		"both files":   {Matches: tMatches.header(), Players: tPlayers.header(), Tables: sales},
		"matches only": {Matches: tMatches.header(), Tables: sales},
	} {
		a.JobId = "s"
		if _, err := svc.AppendJob(ctx, a); status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "a job of tables only") {
			t.Errorf("an append of %s: %v, want InvalidArgument", what, err)
		}
	}
	r, err := svc.AppendJob(ctx, &wololov1.AppendJobRequest{JobId: "s", Tables: sales})
	if err != nil || r.Epoch != 2 {
		t.Fatalf("an append of its table: %v, %v", r, err)
	}
	if _, err := uploadInput(svc, "s", &wololov1.UploadStart{Table: "sales", Epoch: 2}, tRegions, true); err != nil {
		t.Fatal(err)
	}
	if job := getJob(t, svc, "s"); job.Matches != nil || len(job.Tables) != 1 || job.Tables[0].Rows != 6 {
		t.Fatalf("after 2 epochs: matches %v, tables %v", job.Matches, job.Tables)
	}
}
