package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
)

// standingGateway is a gateway of one standing job of the query q: each
// epoch's files are in at once and its version out at once (version K of
// q.csv is "n\nK\n", its change "n,diff\nK,+1\n", and from epoch 2 on
// also "K-1,-1"), as the gateway's API says it.
type standingGateway struct {
	wololov1.UnimplementedJobServiceServer

	mu     sync.Mutex
	req    *wololov1.CreateJobRequest
	starts []*wololov1.UploadStart
	epochs int64
	// appendEnds is the last epoch of each append: an append with
	// --epoch-every makes two epochs here (a cut, then its end).
	appendEnds []int64
	closed     bool
	deletes    int
	failed     string // the job failed, why
}

func (g *standingGateway) CreateJob(_ context.Context, req *wololov1.CreateJobRequest) (*wololov1.CreateJobResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.req == nil {
		g.epochs, g.appendEnds = 1, []int64{1}
	}
	resumed := g.req != nil
	g.req = req
	return &wololov1.CreateJobResponse{JobId: req.JobId, Resumed: resumed}, nil
}

func (g *standingGateway) Upload(stream wololov1.JobService_UploadServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.starts = append(g.starts, first.GetStart())
	g.mu.Unlock()
	return stream.Send(&wololov1.UploadResponse{Offset: 1, Done: true})
}

func (g *standingGateway) AppendJob(_ context.Context, req *wololov1.AppendJobRequest) (*wololov1.AppendJobResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, status.Errorf(codes.FailedPrecondition, "job %q is closed: it takes no more appends", req.JobId)
	}
	g.epochs++
	if req.EpochEveryMs > 0 {
		g.epochs++
	}
	g.appendEnds = append(g.appendEnds, g.epochs)
	return &wololov1.AppendJobResponse{Epoch: int64(len(g.appendEnds))}, nil
}

func (g *standingGateway) CloseJob(context.Context, *wololov1.CloseJobRequest) (*wololov1.CloseJobResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return &wololov1.CloseJobResponse{Epochs: g.epochs}, nil
}

func (g *standingGateway) job(id string) *wololov1.Job {
	g.mu.Lock()
	defer g.mu.Unlock()
	j := &wololov1.Job{JobId: id, State: wololov1.JobState_JOB_STATE_RUNNING, Queries: []string{"q"}, Standing: true, Open: !g.closed,
		Epochs: g.epochs, EpochsCommitted: g.epochs, EpochsPublished: g.epochs}
	j.AppendEpochs = slices.Clone(g.appendEnds)
	if g.failed != "" {
		j.State, j.Message = wololov1.JobState_JOB_STATE_FAILED, g.failed
	}
	return j
}

func (g *standingGateway) GetJob(_ context.Context, req *wololov1.GetJobRequest) (*wololov1.GetJobResponse, error) {
	return &wololov1.GetJobResponse{Job: g.job(req.JobId)}, nil
}

func (g *standingGateway) WatchJob(req *wololov1.WatchJobRequest, stream wololov1.JobService_WatchJobServer) error {
	if err := stream.Send(&wololov1.WatchJobResponse{Job: g.job(req.JobId)}); err != nil {
		return err
	}
	<-stream.Context().Done() // an open job: the client ends the watch
	return nil
}

func (g *standingGateway) GetResults(req *wololov1.GetResultsRequest, stream wololov1.JobService_GetResultsServer) error {
	g.mu.Lock()
	epochs := g.epochs
	g.mu.Unlock()
	k := req.Epoch
	if k == 0 {
		k = epochs
	}
	if k > epochs {
		return status.Errorf(codes.NotFound, "job %q has no version %d: epochs 1 to %d are published", req.JobId, k, epochs)
	}
	rows := map[string]int64{"matches": 10 * k, "match_players": 30 * k} // what version k is over
	return stream.Send(&wololov1.GetResultsResponse{Name: "q.csv", Data: fmt.Appendf(nil, "n\n%d\n", k), Epoch: k, Rows: rows})
}

func (g *standingGateway) WatchAnswers(req *wololov1.WatchAnswersRequest, stream wololov1.JobService_WatchAnswersServer) error {
	g.mu.Lock()
	epochs, failed := g.epochs, g.failed
	g.mu.Unlock()
	if failed != "" {
		return status.Errorf(codes.FailedPrecondition, "job %q failed: %s", req.JobId, failed)
	}
	for k := max(req.FromEpoch, 1); k <= epochs; k++ {
		change := fmt.Sprintf("n,diff\n%d,+1\n", k)
		if k > 1 {
			change += fmt.Sprintf("%d,-1\n", k-1)
		}
		// In two pieces, as a large change is sent.
		for _, piece := range []string{change[:3], change[3:]} {
			if err := stream.Send(&wololov1.WatchAnswersResponse{Epoch: k, Query: "q", Data: []byte(piece)}); err != nil {
				return err
			}
		}
		if err := stream.Send(&wololov1.WatchAnswersResponse{Epoch: k, EndOfEpoch: true}); err != nil {
			return err
		}
	}
	return stream.Send(&wololov1.WatchAnswersResponse{Closed: true})
}

func (g *standingGateway) ListJobs(context.Context, *wololov1.ListJobsRequest) (*wololov1.ListJobsResponse, error) {
	j := g.job("j")
	return &wololov1.ListJobsResponse{Jobs: []*wololov1.JobSummary{{Name: "j", Id: "id-j", State: j.State, Standing: true, Open: j.Open, EpochsPublished: j.EpochsPublished}}}, nil
}

func (g *standingGateway) DeleteJob(context.Context, *wololov1.DeleteJobRequest) (*wololov1.DeleteJobResponse, error) {
	g.mu.Lock()
	g.deletes++
	g.mu.Unlock()
	return &wololov1.DeleteJobResponse{}, nil
}

// TestStandingCommands: submit --standing, append, results --epoch,
// watch --answers (text and --json) and close, as a user types them:
// what each sends, writes and prints, and that none releases the open
// job.
func TestStandingCommands(t *testing.T) {
	g := &standingGateway{}
	addr := serveJobs(t, g)
	_, args := queryFiles(t)
	args = args[:4] // the two files
	base := []string{"--insecure", "--server", addr, "--job", "j"}
	first := t.TempDir()
	stdout, _, err := runClient(t, append(append([]string{"submit", "--standing", "--quiet", "--out", first}, base...), args...)...)
	if err != nil {
		t.Fatal(err)
	}
	if !g.req.Standing || !strings.HasPrefix(stdout, "job j: version of epoch 1 out") || readFile(t, first, "q.csv") != "n\n1\n" {
		t.Fatalf("submit --standing: standing %v, stdout %q, q.csv %q", g.req.Standing, stdout, readFile(t, first, "q.csv"))
	}
	// Again, resumed, with --json: the object says which version it wrote.
	stdout, _, err = runClient(t, append(append([]string{"submit", "--standing", "--quiet", "--json", "--out", t.TempDir()}, base...), args...)...)
	var sr SubmitReport
	if err != nil || json.Unmarshal([]byte(stdout), &sr) != nil || sr.Epoch != 1 || !sr.Standing || len(sr.Outputs) != 1 || sr.Outputs[0].Rows != 1 {
		t.Fatalf("submit --standing --json: %v, %s", err, stdout)
	}
	second := t.TempDir()
	if stdout, _, err = runClient(t, append(append([]string{"append", "--quiet", "--out", second}, base...), args...)...); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "job j: version of epoch 2 out") || readFile(t, second, "q.csv") != "n\n2\n" {
		t.Fatalf("append: stdout %q, q.csv %q", stdout, readFile(t, second, "q.csv"))
	}
	var epochs []int64
	for _, s := range g.starts {
		epochs = append(epochs, s.Epoch)
	}
	if fmt.Sprint(epochs) != "[1 1 1 1 2 2]" {
		t.Fatalf("the uploads' epochs: %v; want the two submits' files in epoch 1, the append's in 2", epochs)
	}
	older := t.TempDir()
	if stdout, _, err = runClient(t, append([]string{"results", "--epoch", "1", "--out", older}, base...)...); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "version of epoch 1 (over match_players 30 rows, matches 10 rows):\nwrote ") || readFile(t, older, "q.csv") != "n\n1\n" {
		t.Fatalf("results --epoch 1: stdout %q, q.csv %q", stdout, readFile(t, older, "q.csv"))
	}
	// The latest, without --epoch: the job is open, so it is kept.
	if stdout, _, err = runClient(t, append([]string{"results", "--out", t.TempDir()}, base...)...); err != nil || strings.Contains(stdout, "released") {
		t.Fatalf("results of an open standing job: %v, %q", err, stdout)
	}
	_, _, err = runClient(t, append([]string{"results", "--epoch", "9", "--out", t.TempDir()}, base...)...)
	if cli.ExitCode(err) != cli.ExitRefused || !strings.Contains(err.Error(), "epochs 1 to 2 are published") {
		t.Fatalf("results --epoch 9: %v (exit %d); want refused, naming the epochs", err, cli.ExitCode(err))
	}
	if stdout, _, err = runClient(t, append([]string{"watch", "--answers"}, base...)...); err != nil {
		t.Fatal(err)
	}
	if want := "epoch query diff row\n1 q +1 1\n2 q +1 2\n2 q -1 1\n"; stdout != want {
		t.Fatalf("watch --answers:\n%s\nwant\n%s", stdout, want)
	}
	if stdout, _, err = runClient(t, append([]string{"watch", "--answers", "--json", "--from", "2"}, base...)...); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var c AnswerChange
	if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &c) != nil || c.Epoch != 2 || c.Query != "q" || c.Diff != -1 || fmt.Sprint(c.Columns, c.Row) != "[n] [1]" {
		t.Fatalf("watch --answers --json --from 2:\n%s", stdout)
	}
	if stdout, _, err = runClient(t, append([]string{"status", "--json"}, base...)...); err != nil {
		t.Fatal(err)
	}
	var r JobReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || !r.Standing || !r.Open || r.Epochs != 2 || r.EpochsCommitted != 2 || r.EpochsPublished != 2 {
		t.Fatalf("status --json of a standing job: %v, %s", err, stdout)
	}
	if stdout, _, err = runClient(t, append([]string{"status"}, base...)...); err != nil || !strings.Contains(stdout, "\n  standing, open, 2 epochs (2 committed), 2 published\n") {
		t.Fatalf("status of a standing job: %v, %q", err, stdout)
	}
	if stdout, _, err = runClient(t, "list", "--insecure", "--server", addr); err != nil || !strings.Contains(stdout, "running (standing, 2 published)") {
		t.Fatalf("list: %v, %q", err, stdout)
	}
	// An append with --epoch-every: it waits for, and writes, the
	// version of its last epoch (Job.append_epochs), not its number's.
	third := t.TempDir()
	if stdout, _, err = runClient(t, append(append([]string{"append", "--quiet", "--epoch-every", "1s", "--out", third}, base...), args...)...); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "job j: version of epoch 4 out") || readFile(t, third, "q.csv") != "n\n4\n" || g.starts[len(g.starts)-1].Epoch != 3 {
		t.Fatalf("append --epoch-every: stdout %q, q.csv %q, uploads of append %d", stdout, readFile(t, third, "q.csv"), g.starts[len(g.starts)-1].Epoch)
	}
	if stdout, _, err = runClient(t, append([]string{"close"}, base...)...); err != nil || !strings.HasPrefix(stdout, "closed job j after 4 epochs") {
		t.Fatalf("close: %v, %q", err, stdout)
	}
	_, _, err = runClient(t, append(append([]string{"append", "--quiet", "--out", t.TempDir()}, base...), args...)...)
	if cli.ExitCode(err) != cli.ExitRefused || !strings.Contains(err.Error(), "is closed") {
		t.Fatalf("append to a closed job: %v (exit %d); want refused", err, cli.ExitCode(err))
	}
	if g.deletes != 0 {
		t.Fatalf("a standing job was released %d times", g.deletes)
	}
}

// TestWatchAnswersOfAFailedJob: watch --answers of a standing job that
// failed exits as a failed job (3) with its reason, not as a refusal.
func TestWatchAnswersOfAFailedJob(t *testing.T) {
	addr := serveJobs(t, &standingGateway{epochs: 1, failed: "a process lost this standing job's state"})
	_, _, err := runClient(t, "watch", "--answers", "--job", "j", "--insecure", "--server", addr)
	if cli.ExitCode(err) != cli.ExitJobFailed || !strings.Contains(err.Error(), "lost this standing job's state") {
		t.Fatalf("watch --answers of a failed job: %v (exit %d); want exit %d with its reason", err, cli.ExitCode(err), cli.ExitJobFailed)
	}
}

// TestStandingFlags: the usage errors of the standing commands' flags,
// before any gateway is reached, and their help.
func TestStandingFlags(t *testing.T) {
	for _, args := range [][]string{
		{"append", "--matches", "m", "--players", "p", "--out", "o"}, // no --job
		{"append", "--job", "j", "--players", "p", "--out", "o"},     // no --matches
		{"close"},
		{"results", "--job", "j", "--out", "o", "--epoch", "-1"},
		{"watch", "--job", "j", "--from", "2"},
		{"watch", "--job", "j", "--answers", "--from", "-1"},
		{"submit", "--matches", "m", "--players", "p", "--out", "o", "--epoch-every", "1s"},                 // a batch job
		{"submit", "--matches", "m", "--players", "p", "--out", "o", "--standing", "--epoch-every", "10us"}, // under 1ms
		{"append", "--job", "j", "--matches", "m", "--players", "p", "--out", "o", "--epoch-every", "-1s"},
	} {
		_, _, err := runClient(t, append(args, "--insecure", "--server", "127.0.0.1:1")...)
		if cli.ExitCode(err) != cli.ExitUsage {
			t.Errorf("%q: %v (exit %d); want a usage error", args, err, cli.ExitCode(err))
		}
	}
	for _, cmd := range [][]string{{"append", "-h"}, {"close", "-h"}, {"watch", "-h"}, {"results", "-h"}, {"submit", "-h"}} {
		_, stderr, err := runClient(t, cmd...)
		if cli.ExitCode(err) != 0 {
			t.Fatalf("%q: %v", cmd, err)
		}
		for _, s := range []string{"usage: wololo client " + cmd[0], EnvServer, cli.ExitCodes} {
			if !strings.Contains(stderr, s) {
				t.Errorf("%q help lacks %q", cmd, s)
			}
		}
	}
	stdout, _, _ := runClient(t, "help")
	for _, s := range []string{"\n  append ", "\n  close ", "--standing", "--answers", "--epoch"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("client help lacks %q:\n%s", s, stdout)
		}
	}
}

// TestChangeRows: a change's CSV read as rows: quoted fields kept whole,
// a count of more than one, and a change that is not one refused.
func TestChangeRows(t *testing.T) {
	rows, err := changeRows(3, "q2", []byte("match,n,diff\n\"a,b\",2,+2\nc,1,-1\n"))
	if err != nil || len(rows) != 2 || rows[0].line() != `3 q2 +2 "a,b",2` || rows[1].line() != "3 q2 -1 c,1" {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	for _, bad := range []string{"match,n\nx,1\n", "match,diff\nx,y\n", "match,diff\nx\n"} {
		if _, err := changeRows(1, "q", []byte(bad)); err == nil {
			t.Errorf("%q: read as a change", bad)
		}
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, name))
	return string(b)
}

// serveJobs serves a JobService on a loopback port and returns its
// address.
func serveJobs(t *testing.T, s wololov1.JobServiceServer) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	wololov1.RegisterJobServiceServer(srv, s)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return l.Addr().String()
}
