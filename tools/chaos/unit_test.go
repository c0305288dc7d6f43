package chaos

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/roles/local"
)

func TestPlanCoversEveryKindAndIsSeeded(t *testing.T) {
	top := deploy.Default()
	for seed := uint64(1); seed <= 50; seed++ {
		pre, post := plan(top, 20, rand.New(rand.NewPCG(seed, 1)))
		if len(pre)+len(post) != 20 || len(post) < 2 {
			t.Fatalf("seed %d: %d + %d kills", seed, len(pre), len(post))
		}
		if missing := uncovered(top, pre); len(missing) > 0 {
			t.Fatalf("seed %d: the upload-time kills miss %v", seed, missing)
		}
		leaders := 0
		for _, name := range append(append([]string(nil), pre...), post...) {
			if name == LeaderTarget {
				leaders++
				continue
			}
			in, err := deploy.ParseInstance(name)
			if err != nil || in.Index >= top.Replicas(in.Stage) {
				t.Fatalf("seed %d: bad victim %q", seed, name)
			}
		}
		if leaders != 3 { // 20/10 during the upload, 1 after it
			t.Fatalf("seed %d: %d leader kills planned, want 3", seed, leaders)
		}
		for _, name := range post {
			if name == LeaderTarget {
				continue
			}
			in, _ := deploy.ParseInstance(name)
			if st, _ := top.Stage(in.Stage); st.Role == "filter" {
				t.Fatalf("seed %d: a filter (%s) among the after-upload kills", seed, name)
			}
		}
		pre2, post2 := plan(top, 20, rand.New(rand.NewPCG(seed, 1)))
		if strings.Join(pre, ",") != strings.Join(pre2, ",") || strings.Join(post, ",") != strings.Join(post2, ",") {
			t.Fatalf("seed %d: the plan is not a function of the seed", seed)
		}
	}
	if pre, post := plan(top, 0, rand.New(rand.NewPCG(1, 1))); len(pre)+len(post) != 0 {
		t.Fatalf("0 kills planned as %v %v", pre, post)
	}
	if pre, post := plan(top, 3, rand.New(rand.NewPCG(1, 1))); len(pre) != 1 || len(post) != 2 {
		t.Fatalf("3 kills planned as %v %v", pre, post)
	}
	top.Masters = 0
	pre, post := plan(top, 20, rand.New(rand.NewPCG(1, 1)))
	if slices.Contains(pre, LeaderTarget) || slices.Contains(post, LeaderTarget) {
		t.Fatalf("a leader kill planned without masters: %v %v", pre, post)
	}
}

func TestDiffSummary(t *testing.T) {
	if d := diffSummary("q1.csv", []byte("a\nb\n"), []byte("a\nb\n")); d != "" {
		t.Fatalf("equal files: %q", d)
	}
	d := diffSummary("q3.csv", []byte("civ,n\nFranks,3\nHuns,2\n"), []byte("civ,n\nFranks,2\nHuns,2\nMayans,1\n"))
	for _, want := range []string{"q3.csv", "got 3 lines", "want 4 lines", "line 2", `"Franks,3"`, `"Franks,2"`, "1 lines only in the output", "2 only in the reference"} {
		if !strings.Contains(d, want) {
			t.Errorf("summary lacks %q: %s", want, d)
		}
	}
	d = diffSummary("q1.csv", []byte("t\nb\na\n"), []byte("t\na\nb\n"))
	if !strings.Contains(d, "different order") {
		t.Errorf("reordered: %s", d)
	}
}

func TestPacer(t *testing.T) {
	p := pacer{rate: 1e6}
	start := time.Now()
	for i := 0; i < 5; i++ {
		if err := p.wait(context.Background(), 100_000); err != nil {
			t.Fatal(err)
		}
	}
	// 5 × 100 kB at 1 MB/s: the first goes at once, the fifth at 0.4 s
	// at the earliest (only the lower bound is the pacer's promise; a
	// loaded machine may take longer).
	if d := time.Since(start); d < 350*time.Millisecond {
		t.Fatalf("500 kB at 1 MB/s took %s", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.wait(ctx, 10_000_000)
	if err := p.wait(ctx, 1); err == nil {
		t.Fatal("a cancelled wait returned nil")
	}
	free := pacer{}
	if err := free.wait(context.Background(), 1<<30); err != nil {
		t.Fatal(err)
	}
}

// fakeGateway records the upload frames it receives.
type fakeGateway struct {
	wololov1.UnimplementedJobServiceServer
	mu     sync.Mutex
	frames [][]byte
	start  *wololov1.UploadStart
	size   int64
}

func (f *fakeGateway) Upload(stream wololov1.JobService_UploadServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.start = first.GetStart()
	f.mu.Unlock()
	if err := stream.Send(&wololov1.UploadResponse{Offset: 0}); err != nil {
		return err
	}
	var off int64
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if d := r.GetData(); d != nil {
			f.mu.Lock()
			f.frames = append(f.frames, d)
			f.mu.Unlock()
			off += int64(len(d))
			if err := stream.Send(&wololov1.UploadResponse{Offset: off}); err != nil {
				return err
			}
			continue
		}
		f.mu.Lock()
		f.size = r.GetFinish().GetSize()
		f.mu.Unlock()
		return stream.Send(&wololov1.UploadResponse{Offset: off, Done: true})
	}
}

func (f *fakeGateway) GetJob(ctx context.Context, r *wololov1.GetJobRequest) (*wololov1.GetJobResponse, error) {
	if r.JobId == "known" {
		return &wololov1.GetJobResponse{Job: &wololov1.Job{JobId: "known", State: wololov1.JobState_JOB_STATE_RUNNING}}, nil
	}
	return nil, status.Errorf(codes.NotFound, "no job %q", r.JobId)
}

func TestShaperSplitsPacesAndForwards(t *testing.T) {
	fake := &fakeGateway{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	wololov1.RegisterJobServiceServer(srv, fake)
	go srv.Serve(lis)
	defer srv.Stop()

	sh, err := newShaper(lis.Addr().String(), nil, 2_000_000, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	conn, err := client.Dial(sh.Addr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	jobs := wololov1.NewJobServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Unary calls pass through, statuses included.
	r, err := jobs.GetJob(ctx, &wololov1.GetJobRequest{JobId: "known"})
	if err != nil || r.Job.State != wololov1.JobState_JOB_STATE_RUNNING {
		t.Fatalf("GetJob through the proxy: %v, %v", r, err)
	}
	if _, err := jobs.GetJob(ctx, &wololov1.GetJobRequest{JobId: "nope"}); status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("GetJob of an unknown job through the proxy: %v", err)
	}

	// The upload arrives whole, in frames of at most 10 kB, paced.
	payload := bytes.Repeat([]byte("0123456789abcdef"), 25_000) // 400 kB
	start := time.Now()
	stream, err := jobs.Upload(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stream.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: "known", File: wololov1.InputFile_INPUT_FILE_PLAYERS}}})
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(payload); off += 150_000 {
		stream.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: payload[off:min(off+150_000, len(payload))]}})
	}
	stream.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: int64(len(payload))}}})
	for {
		r, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if r.Done {
			if r.Offset != int64(len(payload)) {
				t.Fatalf("done at offset %d", r.Offset)
			}
			break
		}
	}
	elapsed := time.Since(start)
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if fake.start.GetJobId() != "known" || fake.start.GetFile() != wololov1.InputFile_INPUT_FILE_PLAYERS || fake.size != int64(len(payload)) {
		t.Fatalf("start %v, finish size %d", fake.start, fake.size)
	}
	var got []byte
	for _, f := range fake.frames {
		if len(f) > 10_000 {
			t.Fatalf("a %d-byte frame went through", len(f))
		}
		got = append(got, f...)
	}
	if !bytes.Equal(got, payload) {
		t.Fatalf("the gateway got %d bytes, not the %d sent", len(got), len(payload))
	}
	if len(fake.frames) != 40 || sh.frames.Load() != 40 { // 150k + 150k + 100k in 10k pieces
		t.Fatalf("%d frames arrived, the proxy counted %d; want 40", len(fake.frames), sh.frames.Load())
	}
	if elapsed < 150*time.Millisecond {
		t.Fatalf("400 kB at 2 MB/s arrived in %s", elapsed)
	}
}

func TestWithExitMarkers(t *testing.T) {
	startedAt := time.Date(2026, 11, 23, 12, 47, 52, 990_000_000, time.UTC)
	acting := strings.TrimSuffix(actingStartedLine(startedAt, MasterView{Instance: "master-2", ID: 2, Term: 1}), "\n")
	listening := `{"@level":"info","@message":"election: listening for a leader","@module":"master","@timestamp":"2026-11-23T12:47:58.695000Z","id":2,"instance":"master-2","term":1}`
	log := acting + "\n" +
		"  a continuation line\n" +
		"2026-11-23T12:47:57.000Z [INFO]  not JSON: no time taken from it\n" +
		listening + "\n"
	died := time.Date(2026, 11, 23, 12, 47, 55, 500_000_000, time.UTC)
	late := time.Date(2026, 11, 23, 12, 49, 0, 0, time.UTC)
	got := string(withExitMarkers([]byte(log), "master-2", []time.Time{late, died}))
	want := acting + "\n" +
		"  a continuation line\n" +
		"2026-11-23T12:47:57.000Z [INFO]  not JSON: no time taken from it\n" +
		"---- wololo local 2026-11-23T12:47:55.5Z: pid 0 of master-2 exited (container died) after 0s\n" +
		listening + "\n" +
		"---- wololo local 2026-11-23T12:49:00Z: pid 0 of master-2 exited (container died) after 0s\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	ml := ParseMasterLog("master-2", []byte(got), late.Add(time.Minute))
	if len(ml.Intervals) != 1 || !ml.Intervals[0].Start.Equal(startedAt) || !ml.Intervals[0].End.Equal(died) || ml.Intervals[0].Term != 1 {
		t.Fatalf("the preface's acting interval does not run from %s to the death: %+v", startedAt, ml.Intervals)
	}
}

func TestDeathTime(t *testing.T) {
	at := func(s float64) time.Time { return time.Unix(1000, 0).Add(time.Duration(s * float64(time.Second))) }
	cases := []struct {
		name      string
		kills     []time.Time
		event     time.Time
		want      time.Time
		remaining int
	}{
		{"a death nobody caused", nil, at(5), at(5), 0},
		{"a kill reported late", []time.Time{at(4.4)}, at(5), at(4.4), 0},
		{"a kill whose call returned after the engine saw the exit", []time.Time{at(5.2)}, at(5), at(5), 0},
		{"a kill long after the event is another death's", []time.Time{at(9)}, at(5), at(5), 1},
		{"a stale kill is dropped, not used", []time.Time{at(1), at(20.3)}, at(20.5), at(20.3), 0},
		{"only the stale kill", []time.Time{at(1)}, at(20), at(20), 0},
	}
	for _, c := range cases {
		got, rest := deathTime(c.kills, c.event)
		if !got.Equal(c.want) || len(rest) != c.remaining {
			t.Errorf("%s: %v with %d kills left, want %v and %d", c.name, got, len(rest), c.want, c.remaining)
		}
	}
}

// procsOnly is a target that only lists processes.
type procsOnly struct {
	target
	procs []local.Proc
}

func (p procsOnly) Processes() []local.Proc { return p.procs }

// TestLateKillsSpareTheMasters: a late random kill picks among the graph's
// instances, never a master (with few graph processes, picking masters at
// random killed all three within 150 ms, and nothing was left to restart
// anything).
func TestLateKillsSpareTheMasters(t *testing.T) {
	top := deploy.Default()
	var procs []local.Proc
	for _, in := range append(top.Instances(), top.MasterInstances()...) {
		procs = append(procs, local.Proc{Instance: in.Name(), Alive: true})
	}
	k := &killer{cl: procsOnly{procs: procs}, top: top, rng: rand.New(rand.NewPCG(1, 2))}
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		seen[k.live("shard-0", true)] = true
	}
	for name := range seen {
		if strings.HasPrefix(name, deploy.MasterStage+"-") || name == "" {
			t.Fatalf("a late kill picked %q", name)
		}
	}
	if len(seen) != len(top.Instances()) {
		t.Errorf("late kills picked %v, want every graph instance", seen)
	}
}

// TestDiskLossesSpareTheMasters: the kills picked to lose their victim's
// disk are as many as asked (while there are victims to pick), distinct,
// and never a master's or the leader's: a master's disk holds what
// restarts the others.
func TestDiskLossesSpareTheMasters(t *testing.T) {
	top := deploy.Default()
	for seed := uint64(1); seed <= 20; seed++ {
		pre, post := plan(top, 30, rand.New(rand.NewPCG(seed, 1)))
		victims := append(append([]string(nil), pre...), post...)
		for _, n := range []int{0, 3, 100} {
			lose := pickDiskLosses(top, victims, n, rand.New(rand.NewPCG(seed, 2)))
			eligible := 0
			for _, v := range victims {
				if v != LeaderTarget && !strings.HasPrefix(v, deploy.MasterStage+"-") {
					eligible++
				}
			}
			if want := min(n, eligible); len(lose) != want {
				t.Fatalf("seed %d: %d disk losses picked of %d asked, want %d", seed, len(lose), n, want)
			}
			for k := range lose {
				if k < 1 || k > len(victims) {
					t.Fatalf("seed %d: kill number %d of %d", seed, k, len(victims))
				}
				if v := victims[k-1]; v == LeaderTarget || strings.HasPrefix(v, deploy.MasterStage+"-") {
					t.Fatalf("seed %d: kill %d of %s picked to lose its disk", seed, k, v)
				}
			}
		}
	}
}
