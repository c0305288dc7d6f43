package gateway

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/transport"
)

func TestSumSizes(t *testing.T) {
	cases := []struct {
		name  string
		sizes []int64
		want  int64
		ok    bool
	}{
		{"none", nil, 0, true},
		{"two", []int64{3, 4}, 7, true},
		{"up to the largest", []int64{math.MaxInt64 - 1, 1}, math.MaxInt64, true},
		{"the largest and zero", []int64{math.MaxInt64, 0}, math.MaxInt64, true},
		{"the largest twice (wraps to -2)", []int64{math.MaxInt64, math.MaxInt64}, 0, false},
		{"one past the largest", []int64{math.MaxInt64, 1}, 0, false},
		{"overflow on the third", []int64{1 << 62, 1 << 61, 1 << 62}, 0, false},
		{"a negative one", []int64{10, -3}, 0, false},
		{"the smallest", []int64{math.MinInt64, math.MaxInt64}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := sumSizes(c.sizes...)
			if got != c.want || ok != c.ok {
				t.Fatalf("sumSizes(%v) = %d, %v; want %d, %v", c.sizes, got, ok, c.want, c.ok)
			}
		})
	}
}

// TestAdmission: the pure admission decision, quota by quota: what it
// refuses (naming the flag) and which finished jobs it drops to make room.
func TestAdmission(t *testing.T) {
	l := Limits{MaxJobs: 10, ClientMaxJobs: 2, ClientMaxHeldJobs: 4, MaxJobBytes: 100, ClientMaxBytes: 150}
	at := func(s int) time.Time { return time.Unix(int64(1000+s), 0) }
	running := func(id string, bytes int64) heldJob { return heldJob{id: id, bytes: bytes} }
	done := func(id string, s int) heldJob { return heldJob{id: id, bytes: 50, done: true, finished: at(s)} }
	cases := []struct {
		name   string
		held   []heldJob
		others []heldJob // the other clients' finished jobs
		total  int
		sizes  []int64
		drop   []string
		flag   string  // refused naming it; "" admitted
		l      *Limits // other limits than l
	}{
		{name: "a first job", sizes: []int64{40, 60}},
		{name: "one byte over a job's limit", sizes: []int64{40, 61}, flag: "--max-job-bytes"},
		{name: "one file of 2^63-1 bytes", sizes: []int64{math.MaxInt64, 10}, flag: "--max-job-bytes"},
		{name: "both of 2^63-1 (the sum wraps negative)", sizes: []int64{math.MaxInt64, math.MaxInt64}, flag: "--max-job-bytes"},
		{name: "unfinished at the limit", held: []heldJob{running("a", 1), running("b", 1)}, total: 2, sizes: []int64{1, 1}, flag: "--client-max-jobs"},
		{name: "bytes in flight over the limit", held: []heldJob{running("a", 100)}, total: 1, sizes: []int64{30, 30}, flag: "--client-max-bytes"},
		{name: "bytes in flight at the limit", held: []heldJob{running("a", 100)}, total: 1, sizes: []int64{25, 25}},
		{name: "finished jobs hold no bytes in flight", held: []heldJob{done("a", 1), done("b", 2)}, total: 2, sizes: []int64{50, 50}},
		{
			name: "in flight past 2^63-1, every limit at its largest", held: []heldJob{running("a", math.MaxInt64-5)}, total: 1, sizes: []int64{3, 3},
			flag: "--client-max-bytes", l: &Limits{MaxJobs: 10, ClientMaxJobs: 5, ClientMaxHeldJobs: 5, MaxJobBytes: math.MaxInt64, ClientMaxBytes: math.MaxInt64},
		},
		{name: "a held job whose bytes overflow the sum", held: []heldJob{running("a", math.MaxInt64)}, total: 1, sizes: []int64{1, 1}, flag: "--client-max-bytes"},
		{
			name: "held at the limit: the oldest finished is dropped",
			held: []heldJob{done("new", 9), running("r", 1), done("old", 3), done("mid", 5)}, total: 4, sizes: []int64{1, 1},
			drop: []string{"old"},
		},
		{
			name: "held over the limit (a lowered flag): enough are dropped",
			held: []heldJob{done("d5", 5), done("d1", 1), done("d4", 4), done("d2", 2), done("d3", 3), running("r", 1)}, total: 6, sizes: []int64{1, 1},
			drop: []string{"d1", "d2", "d3"},
		},
		{
			name: "finished at the same time: by id",
			held: []heldJob{done("b", 1), done("a", 1), done("c", 1), done("d", 1)}, total: 4, sizes: []int64{1, 1},
			drop: []string{"a"},
		},
		{
			name: "held at the limit, none finished",
			held: []heldJob{running("a", 1), running("b", 1), running("c", 1), running("d", 1)}, total: 4, sizes: []int64{1, 1},
			flag: "--client-max-held-jobs", l: &Limits{MaxJobs: 10, ClientMaxJobs: 5, ClientMaxHeldJobs: 4, MaxJobBytes: 100, ClientMaxBytes: 150},
		},
		{name: "the gateway full: the client's own finished job makes room", held: []heldJob{done("mine", 1)}, total: 10, sizes: []int64{1, 1}, drop: []string{"mine"}},
		{name: "the gateway full, nothing of the client's finished", held: []heldJob{running("a", 1)}, total: 10, sizes: []int64{1, 1}, flag: "--max-jobs"},
		{name: "the gateway full of unfinished jobs, the client holds nothing", total: 10, sizes: []int64{1, 1}, flag: "--max-jobs"},
		{name: "the gateway full: another client's finished job makes room", held: []heldJob{running("a", 1)}, others: []heldJob{done("theirs", 2)}, total: 10, sizes: []int64{1, 1}, drop: []string{"theirs"}},
		{name: "the gateway full, the client holds nothing: the oldest finished of the others", others: []heldJob{done("new", 7), done("old", 2)}, total: 10, sizes: []int64{1, 1}, drop: []string{"old"}},
		{name: "the gateway full: the oldest finished of any client, not the caller's first", held: []heldJob{done("mine", 5)}, others: []heldJob{done("theirs", 2)}, total: 10, sizes: []int64{1, 1}, drop: []string{"theirs"}},
		{
			name: "held at its limit and the gateway over full: its own oldest, then the oldest of any",
			held: []heldJob{done("m1", 3), done("m2", 4), done("m3", 6), done("m4", 8)}, others: []heldJob{done("t2", 5), done("t1", 1)}, total: 11, sizes: []int64{1, 1},
			drop: []string{"m1", "t1"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			limits := l
			if c.l != nil {
				limits = *c.l
			}
			drop, err := limits.admission(c.held, c.others, c.total, c.sizes)
			if c.flag != "" {
				if !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), c.flag) || drop != nil {
					t.Fatalf("admission = %v, %v; want ErrFull naming %s and nothing dropped", drop, err, c.flag)
				}
				return
			}
			if err != nil || !slices.Equal(drop, c.drop) {
				t.Fatalf("admission = %v, %v; want %v admitted", drop, err, c.drop)
			}
		})
	}
}

// TestCheckHeaders: what a CreateJob may declare of its files, refused
// before anything is counted or stored.
func TestCheckHeaders(t *testing.T) {
	l := Limits{MaxHeaderBytes: 200}
	req := func(edit func(m, p *wololov1.FileHeader)) [2]*wololov1.FileHeader {
		r := createRequest("j")
		edit(r.Matches, r.Players)
		return [2]*wololov1.FileHeader{r.Matches, r.Players}
	}
	padded := func(cols []string, to int) []string {
		pad := to - headerBytes(cols) - 1 // the pad column's own separator
		return append(slices.Clone(cols), strings.Repeat("x", pad))
	}
	cases := []struct {
		name    string
		headers [2]*wololov1.FileHeader
		want    error  // kind
		text    string // in the message
	}{
		{"as the client sends them", req(func(m, p *wololov1.FileHeader) { m.Fingerprint = make([]byte, 32) }), nil, ""},
		{"no players header", [2]*wololov1.FileHeader{header(schema.RequiredColumns[schema.Matches]), nil}, ErrInvalid, "both"},
		{"a negative size", req(func(m, p *wololov1.FileHeader) { m.Size = -1 }), ErrInvalid, "matches.csv"},
		{"the smallest size", req(func(m, p *wololov1.FileHeader) { p.Size, p.DataOffset = math.MinInt64, 0 }), ErrInvalid, "match_players.csv"},
		{"data past the end", req(func(m, p *wololov1.FileHeader) { p.DataOffset = p.Size + 1 }), ErrInvalid, "starts at byte"},
		{"a negative data offset", req(func(m, p *wololov1.FileHeader) { m.DataOffset = -5 }), ErrInvalid, "starts at byte"},
		{"a fingerprint of 64 bytes", req(func(m, p *wololov1.FileHeader) { p.Fingerprint = make([]byte, 64) }), nil, ""},
		{"a fingerprint of 65 bytes", req(func(m, p *wololov1.FileHeader) { p.Fingerprint = make([]byte, 65) }), ErrInvalid, "fingerprint"},
		{"a header row at the limit", req(func(m, p *wololov1.FileHeader) { m.Columns = padded(m.Columns, 200) }), nil, ""},
		{"a header row one byte over", req(func(m, p *wololov1.FileHeader) { p.Columns = padded(p.Columns, 201) }), ErrFull, "--max-header-bytes"},
		{"many empty columns", req(func(m, p *wololov1.FileHeader) { m.Columns = append(m.Columns, make([]string, 200)...) }), ErrFull, "--max-header-bytes"},
		// A job needs only the columns its queries read, which
		// planQueries checks.
		{"a column of the default queries missing", req(func(m, p *wololov1.FileHeader) { p.Columns = p.Columns[1:] }), nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := l.checkHeaders(inputsOf(&wololov1.CreateJobRequest{Matches: c.headers[0], Players: c.headers[1]}))
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("checkHeaders = %v; want %v naming %q", err, c.want, c.text)
			}
		})
	}
}

// TestSizesThatOverflowAreRefused: the attack of a file declared as 2^63-1
// bytes, through the JobService: refused at CreateJob naming the quota,
// whatever the other file declares, and even with every quota at its
// largest the sums neither wrap at CreateJob nor during the upload (which
// would take bytes past the declared size).
func TestSizesThatOverflowAreRefused(t *testing.T) {
	sized := func(name string, matches, players int64) *wololov1.CreateJobRequest {
		r := createRequest(name)
		r.Matches.Size, r.Players.Size = matches, players
		return r
	}
	svc := testGateway(t, transport.NewMemStore(), time.Hour, make(chan string, 1))
	for _, r := range []*wololov1.CreateJobRequest{
		sized("one", math.MaxInt64, 100),
		sized("both", math.MaxInt64, math.MaxInt64),
		sized("sum", math.MaxInt64/2+1, math.MaxInt64/2+1),
		sized("quota", DefaultMaxJobBytes, 100),
	} {
		if _, err := svc.CreateJob(as("mallory"), r); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-job-bytes") {
			t.Errorf("%s: %v; want ResourceExhausted naming --max-job-bytes", r.JobId, err)
		}
	}
	if _, err := svc.CreateJob(as("mallory"), sized("negative", -1, 100)); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a negative size: %v; want InvalidArgument", err)
	}

	// Every quota at its largest: only the checked sums stand in the way.
	svc = testGatewayWith(t, transport.NewMemStore(), Config{MaxJobBytes: math.MaxInt64, ClientMaxBytes: math.MaxInt64}, make(chan string, 1))
	huge := sized("huge", math.MaxInt64-10, 10)
	huge.Matches.DataOffset = math.MaxInt64 - 15 // the upload starts 5 bytes before the declared end
	if _, err := svc.CreateJob(as("mallory"), huge); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateJob(as("mallory"), sized("more", 20, 20)); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--client-max-bytes") {
		t.Errorf("bytes in flight past 2^63-1: %v; want ResourceExhausted naming --client-max-bytes", err)
	}
	if _, err := uploadMatchesAs(svc, "mallory", "huge", strings.Repeat("x", 1<<10)); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "declared") {
		t.Errorf("an upload whose offset would pass 2^63-1: %v; want ResourceExhausted, more than declared", err)
	}
	if _, err := svc.CreateJob(as("alice"), sized("fine", 100, 100)); err != nil {
		t.Errorf("another client beside it: %v", err)
	}
}

// finishedResults are a finished job's four (empty) answers.
func finishedResults() map[string][]byte {
	out := map[string][]byte{}
	for _, f := range schema.ResultFiles(queries.Names) {
		out[schema.ResultRecord(f)] = []byte("header\n")
	}
	return out
}

// TestHeldJobsPerClient: a client's finished jobs count against it. At its
// limit a new job drops its oldest finished one, here (NotFound), in the
// store and everywhere else (the dropper hears of it), and a restarted
// gateway does not bring it back; with none finished the new job is
// refused naming the flag. The gateway's own limit is never reached by one
// client, and another client is not affected.
func TestHeldJobsPerClient(t *testing.T) {
	store := transport.NewMemStore()
	dropped := make(chan string, 64)
	cfg := Config{MaxJobs: 8, ClientMaxJobs: 2, ClientMaxHeldJobs: 3}
	svc := testGatewayWith(t, store, cfg, dropped)
	g := svc.(jobService).g
	create := func(client, name string) error {
		_, err := svc.CreateJob(as(client), createRequest(name))
		return err
	}
	finish := func(client, name string) string {
		t.Helper()
		j, err := g.jobs.lookup(client, name)
		if err != nil {
			t.Fatal(err)
		}
		g.Finished(j.id, finishedResults())
		return j.id
	}
	var ids []string
	for i := range 10 { // more than the gateway holds
		name := "m" + string(rune('0'+i))
		if err := create("mallory", name); err != nil {
			t.Fatalf("mallory's %s: %v", name, err)
		}
		ids = append(ids, finish("mallory", name))
		testkit.NextMillisecond() // distinct finish times, in the store's milliseconds
	}
	if n := len(g.ClusterJobs()); n != 3 {
		t.Fatalf("the gateway holds %d jobs after mallory's ten; want her limit, 3", n)
	}
	for i, name := range []string{"m0", "m6", "m7", "m8", "m9"} {
		_, err := svc.GetJob(as("mallory"), &wololov1.GetJobRequest{JobId: name})
		if gone := i < 2; gone != (status.Code(err) == codes.NotFound) {
			t.Errorf("mallory's %s after ten: %v; want it dropped %v", name, err, gone)
		}
	}
	got := map[string]bool{}
	for len(got) < 7 {
		select {
		case id := <-dropped:
			got[id] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("dropped everywhere: %d of the 7 oldest", len(got))
		}
	}
	for _, id := range ids[:7] {
		if !got[id] {
			t.Errorf("job %s was not dropped everywhere", id)
		}
	}
	// Unfinished jobs are never dropped: two running and one finished, then
	// the finished one makes room, then nothing can.
	for _, name := range []string{"r1", "r2"} {
		if err := create("mallory", name); err != nil {
			t.Fatalf("mallory's %s: %v", name, err)
		}
	}
	if err := create("mallory", "r3"); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--client-max-jobs") {
		t.Fatalf("a third running job: %v; want --client-max-jobs", err)
	}
	finish("mallory", "r1")
	if err := create("mallory", "r3"); err != nil {
		t.Fatalf("r3 once r1 finished: %v", err)
	}
	if _, err := svc.GetJob(as("mallory"), &wololov1.GetJobRequest{JobId: "r1"}); err != nil {
		t.Errorf("r1, her newest finished job, was dropped: %v", err)
	}
	for _, name := range []string{"m9", "r1"} {
		if _, err := svc.DeleteJob(as("mallory"), &wololov1.DeleteJobRequest{JobId: name}); err != nil && status.Code(err) != codes.NotFound {
			t.Fatal(err)
		}
	}
	// Bob is not affected, and a restart keeps all of it.
	for _, name := range []string{"b1", "b2"} {
		if err := create("bob", name); err != nil {
			t.Fatalf("bob's %s beside mallory: %v", name, err)
		}
	}
	svc2 := testGatewayWith(t, store, cfg, make(chan string, 64))
	if n := len(svc2.(jobService).g.ClusterJobs()); n != 4 {
		t.Errorf("a restarted gateway holds %d jobs; want 4 (mallory's r2, r3; bob's b1, b2)", n)
	}
	if _, err := svc2.GetJob(as("mallory"), &wololov1.GetJobRequest{JobId: "m8"}); status.Code(err) != codes.NotFound {
		t.Errorf("a dropped job after a restart: %v; want NotFound", err)
	}

	// With ClientMaxJobs = ClientMaxHeldJobs, a client whose held jobs are
	// all unfinished is refused naming the held limit.
	svc3 := testGatewayWith(t, transport.NewMemStore(), Config{ClientMaxJobs: 2, ClientMaxHeldJobs: 2, ClientMaxBytes: 1 << 40}, make(chan string, 4))
	for _, name := range []string{"a", "b"} {
		if _, err := svc3.CreateJob(as("mallory"), createRequest(name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc3.CreateJob(as("mallory"), createRequest("c")); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a third job: %v; want ResourceExhausted", err)
	}
}

// TestHeldLimitBelowUnfinishedIsRefused: a config whose held limit is below
// its unfinished one is an error naming both flags.
func TestHeldLimitBelowUnfinishedIsRefused(t *testing.T) {
	store := transport.NewMemStore()
	committer := transport.NewCommitter(store, transport.NewOutbox(store), transport.NewInbox(), nil)
	for _, cfg := range []Config{
		{ClientMaxJobs: 10, ClientMaxHeldJobs: 9},
		{ClientMaxJobs: DefaultClientMaxHeldJobs + 1},
		{MaxHeaderBytes: schema.MaxHeaderBytes + 1},
		{MaxHeaderBytes: -1},
	} {
		cfg.Topology, cfg.Committer = deploy.Default(), committer
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v): nil error", cfg)
		}
	}
}

// recordlessStore keeps no job records: what the gateway holds of a job's
// headers is then all the heap holds of them.
type recordlessStore struct{ transport.Store }

func (s recordlessStore) Commit(c *transport.Commit) error {
	cc := *c
	cc.Records = nil
	return s.Store.Commit(&cc)
}

// TestJobsKeepNoHeaderNames: what the gateway keeps of a job in memory
// does not grow with its headers: 40 jobs whose matches.csv header is
// 1 MiB leave less than 8 MiB on the heap (it held 40 MiB when a job kept
// its column names), and the gateway still knows where each column is; a
// restarted gateway parses them again from the store.
func TestJobsKeepNoHeaderNames(t *testing.T) {
	cfg := Config{MaxHeaderBytes: schema.MaxHeaderBytes, ClientMaxJobs: 64, ClientMaxBytes: 1 << 40}
	svc := testGatewayWith(t, recordlessStore{transport.NewMemStore()}, cfg, make(chan string, 1))
	// wide is a request with a 1 MiB header of its own, as each call
	// unmarshalled by gRPC has.
	wide := func(name string) *wololov1.CreateJobRequest {
		r := createRequest(name)
		r.Matches.Columns = append(r.Matches.Columns, strings.Repeat("x", schema.MaxHeaderBytes-headerBytes(r.Matches.Columns)-1))
		return r
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 40 {
		if _, err := svc.CreateJob(context.Background(), wide(fmt.Sprintf("wide-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 8<<20 {
		t.Errorf("40 jobs with 1 MiB headers grew the heap by %d MiB", grown>>20)
	}
	// A job of the default queries keeps the names its plan reads, in
	// their places, and "" for the wide one no query reads.
	want := append(slices.Clone(schema.RequiredColumns[schema.Matches]), "")
	j, err := svc.(jobService).g.jobs.lookup("", "wide-7")
	if err != nil || !slices.Equal(j.files[schema.Matches].names, want) {
		t.Fatalf("wide-7: %v; kept columns %q, want %q", err, j.files[schema.Matches].names, want)
	}

	store := transport.NewMemStore()
	svc = testGatewayWith(t, store, cfg, make(chan string, 1))
	if _, err := svc.CreateJob(context.Background(), wide("again")); err != nil {
		t.Fatal(err)
	}
	svc = testGatewayWith(t, store, cfg, make(chan string, 1))
	if j, err := svc.(jobService).g.jobs.lookup("", "again"); err != nil || !slices.Equal(j.files[schema.Matches].names, want) {
		t.Fatalf("after a restart: %v, %q", err, j.files[schema.Matches].names)
	}
}

// TestRecoveredSizesAreChecked: a job description that no CreateJob admits
// now (one written before sizes were checked: files whose sizes overflow
// together, or negative) is dropped at recovery like an unreadable one
// (that an upload cannot start at a negative offset is the Ingest's own
// check: services/dataflow/ingest).
func TestRecoveredSizesAreChecked(t *testing.T) {
	store := transport.NewMemStore()
	file := func(f schema.File, size int64) *wololov1.FileRecord {
		return &wololov1.FileRecord{Columns: schema.RequiredColumns[f], Size: size, DataOffset: 0}
	}
	for id, sizes := range map[string][2]int64{"wraps": {math.MaxInt64, math.MaxInt64}, "negative": {-1, 10}, "fine": {10, 10}} {
		b, err := proto.Marshal(&wololov1.JobRecord{Owner: "mallory", Name: id, Files: []*wololov1.FileRecord{file(schema.Matches, sizes[0]), file(schema.Players, sizes[1])}})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Commit(&transport.Commit{Job: id, Records: map[string][]byte{recordMeta: b}}); err != nil {
			t.Fatal(err)
		}
	}
	dropped := make(chan string, 4)
	svc := testGateway(t, store, time.Hour, dropped)
	for name, want := range map[string]codes.Code{"wraps": codes.NotFound, "negative": codes.NotFound, "fine": codes.OK} {
		if _, err := svc.GetJob(as("mallory"), &wololov1.GetJobRequest{JobId: name}); status.Code(err) != want {
			t.Errorf("recovered %s: %v; want %s", name, err, want)
		}
	}
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case id := <-dropped:
			got[id] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("dropped everywhere: %v; want wraps and negative", got)
		}
	}
	if !got["wraps"] || !got["negative"] {
		t.Errorf("dropped %v; want wraps and negative", got)
	}
}

// TestNewClientIsNotLockedOutByOthersFinishedJobs: with the gateway at
// --max-jobs, every job finished and none of them a new client's, the new
// client's job is created, and the oldest finished job (another client's)
// is dropped for it, here and everywhere else; with every job unfinished
// the new client is refused naming --max-jobs, and nothing is dropped.
func TestNewClientIsNotLockedOutByOthersFinishedJobs(t *testing.T) {
	for _, finishThem := range []bool{true, false} {
		store := transport.NewMemStore()
		dropped := make(chan string, 8)
		svc := testGatewayWith(t, store, Config{MaxJobs: 4, ClientMaxJobs: 2, ClientMaxHeldJobs: 2}, dropped)
		g := svc.(jobService).g
		var oldest string
		for _, client := range []string{"alice", "bob"} {
			for _, name := range []string{"one", "two"} {
				if _, err := svc.CreateJob(as(client), createRequest(name)); err != nil {
					t.Fatalf("%s's %s: %v", client, name, err)
				}
				if !finishThem {
					continue
				}
				j, err := g.jobs.lookup(client, name)
				if err != nil {
					t.Fatal(err)
				}
				g.Finished(j.id, finishedResults())
				if oldest == "" {
					oldest = j.id
				}
				testkit.NextMillisecond() // distinct finish times, in the store's milliseconds
			}
		}
		_, err := svc.CreateJob(as("carol"), createRequest("new"))
		if !finishThem {
			if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-jobs") {
				t.Fatalf("carol's job with the gateway full of unfinished jobs: %v; want ResourceExhausted naming --max-jobs", err)
			}
			if n := len(g.ClusterJobs()); n != 4 {
				t.Fatalf("the gateway holds %d jobs after carol's refusal; want the 4 unfinished ones", n)
			}
			continue
		}
		if err != nil {
			t.Fatalf("carol's first job with the gateway full of others' finished jobs: %v", err)
		}
		if _, err := svc.GetJob(as("alice"), &wololov1.GetJobRequest{JobId: "one"}); status.Code(err) != codes.NotFound {
			t.Fatalf("alice's one, the oldest finished job: %v; want it dropped (NotFound)", err)
		}
		for _, client := range []string{"alice", "bob"} {
			for _, name := range []string{"one", "two"} {
				if client == "alice" && name == "one" {
					continue
				}
				if _, err := svc.GetJob(as(client), &wololov1.GetJobRequest{JobId: name}); err != nil {
					t.Fatalf("%s's %s, not the oldest: %v", client, name, err)
				}
			}
		}
		select {
		case id := <-dropped:
			if id != oldest {
				t.Fatalf("dropped %s everywhere; want alice's one, %s", id, oldest)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("alice's one was never dropped everywhere")
		}
	}
}
