package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	sqlflags "github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
	gw "github.com/wololo/wololo/services/roles/gateway"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/rpc"
)

// standingEpochs is how many epochs TestStandingJobThroughTheCLI makes:
// the submit's and three appends.
const standingEpochs = 4

// splitEpochs cuts a CSV file into n parts of about as many lines, each
// with the header row, into dir (NAME.K.csv, K from 1), and writes each
// prefix of them as one file (NAME.upto.K.csv): what a batch job over
// epochs 1..K reads. The bytes are the file's, lines kept whole.
func splitEpochs(t *testing.T, path, dir string, n int) (parts, prefixes []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header, body, _ := bytes.Cut(data, []byte("\n"))
	lines := bytes.SplitAfter(body, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	name := strings.TrimSuffix(filepath.Base(path), ".csv")
	prefix := append(slices.Clone(header), '\n')
	for k := 1; k <= n; k++ {
		part := append(slices.Clone(header), '\n')
		for _, l := range lines[(k-1)*len(lines)/n : k*len(lines)/n] {
			part = append(part, l...)
			prefix = append(prefix, l...)
		}
		p, q := filepath.Join(dir, fmt.Sprintf("%s.%d.csv", name, k)), filepath.Join(dir, fmt.Sprintf("%s.upto.%d.csv", name, k))
		if err := os.WriteFile(p, part, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(q, prefix, 0o644); err != nil {
			t.Fatal(err)
		}
		parts, prefixes = append(parts, p), append(prefixes, q)
	}
	return parts, prefixes
}

// rowCounts reads a result file's rows (fields joined) and their counts,
// the header left out.
func rowCounts(t *testing.T, data []byte) map[string]int64 {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, r := range recs[1:] {
		out[strings.Join(r, "\x00")]++
	}
	return out
}

// TestStandingJobThroughTheCLI: a standing job as a user runs it with
// the CLI: `submit --standing` (epoch 1), three `append`s, `watch
// --answers` from the start, `results --epoch 2`, `close`, `results`.
// Every version, written by the submit and each append, equals the SQL
// engine's answer (sqlops.Answer) over the rows of its epochs so far; the
// changes watched add up to each version; the final results are the last
// version.
func TestStandingJobThroughTheCLI(t *testing.T) {
	d := testDatasets(t)[1]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 2})
	gateway := []string{"--server", c.GatewayAddr(), "--tls-dir", clientDir(t, c, "client"), "--name", "client"}
	dir := t.TempDir()
	matches, matchesUpTo := splitEpochs(t, d.matches, dir, standingEpochs)
	players, playersUpTo := splitEpochs(t, d.players, dir, standingEpochs)
	queries := sqlflags.DefaultQueries()
	want := make([]map[string][]byte, standingEpochs+1) // by epoch, from 1
	for k := 1; k <= standingEpochs; k++ {
		want[k] = answerOn(t, map[string]string{"matches": matchesUpTo[k-1], "match_players": playersUpTo[k-1]}, queries)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := client.Run(ctx, append(args, gateway...), &stdout, &stderr); err != nil {
			t.Fatalf("client %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String()
	}
	check := func(what, out string, k int) {
		t.Helper()
		for _, q := range queries {
			got, err := os.ReadFile(filepath.Join(out, q.Name+".csv"))
			if err != nil || !bytes.Equal(got, want[k][q.Name]) {
				t.Errorf("%s: %s.csv is not the answer over epochs 1..%d (%v)\n got: %.300q\nwant: %.300q", what, q.Name, k, err, got, want[k][q.Name])
			}
		}
	}

	out := t.TempDir()
	run("submit", "--standing", "--quiet", "--job", "standing", "--matches", matches[0], "--players", players[0], "--out", out)
	check("submit --standing", out, 1)
	watched := make(chan string, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		err := client.Run(ctx, append([]string{"watch", "--answers", "--job", "standing"}, gateway...), &stdout, &stderr)
		if err != nil {
			stdout.WriteString("error: " + err.Error())
		}
		watched <- stdout.String()
	}()
	for k := 2; k <= standingEpochs; k++ {
		out := t.TempDir()
		run("append", "--quiet", "--job", "standing", "--matches", matches[k-1], "--players", players[k-1], "--out", out)
		check(fmt.Sprintf("append %d", k), out, k)
	}
	out = t.TempDir()
	run("results", "--job", "standing", "--epoch", "2", "--out", out)
	check("results --epoch 2", out, 2)
	run("close", "--job", "standing")
	out = t.TempDir()
	run("results", "--job", "standing", "--out", out, "--keep")
	check("results after close", out, standingEpochs)

	// The changes watched, added up epoch by epoch, are each version.
	lines := strings.Split(strings.TrimSpace(<-watched), "\n")
	if lines[0] != "epoch query diff row" {
		t.Fatalf("watch --answers: %q", lines)
	}
	sums := map[string]map[string]int64{}
	byEpoch := map[int][]string{}
	for _, l := range lines[1:] {
		f := strings.SplitN(l, " ", 4)
		k, err := strconv.Atoi(f[0])
		if len(f) != 4 || err != nil {
			t.Fatalf("watch --answers line %q", l)
		}
		byEpoch[k] = append(byEpoch[k], l)
	}
	for k := 1; k <= standingEpochs; k++ {
		for _, l := range byEpoch[k] {
			f := strings.SplitN(l, " ", 4)
			diff, _ := strconv.ParseInt(f[2], 10, 64)
			row, err := csv.NewReader(strings.NewReader(f[3])).Read()
			if err != nil {
				t.Fatalf("watch --answers line %q: %v", l, err)
			}
			if sums[f[1]] == nil {
				sums[f[1]] = map[string]int64{}
			}
			key := strings.Join(row, "\x00")
			if sums[f[1]][key] += diff; sums[f[1]][key] == 0 {
				delete(sums[f[1]], key)
			}
		}
		for _, q := range queries {
			if got, w := sums[q.Name], rowCounts(t, want[k][q.Name]); fmt.Sprint(got) != fmt.Sprint(w) {
				t.Errorf("epoch %d, %s: the changes watched add up to %v; want %v", k, q.Name, got, w)
			}
		}
	}
}

// batchEpochs is an epoch runtime that leaves a standing job's plan a
// batch one: epochs end without markers, and the cluster's batch tasks
// take every epoch's rows until the job is closed. What it checks of a
// standing job on this branch is the gateway's part: appended epochs'
// rows reach the cluster through the same channels without an end of
// input between them, and the close ends every table.
var batchEpochs = gw.EpochRuntime{
	MakeStanding: func(*physical.Plan) error { return nil },
	EndEpoch:     func(src *sqlops.Source, out stage.Emitter) error { return src.Flush(out) },
	HookRecords:  func(*stage.Config, func(string, map[string][]byte)) {},
}

// uploadFile uploads the file at path as start says, from the offset the
// gateway answers to its end.
func uploadFile(ctx context.Context, t *testing.T, jobs wololov1.JobServiceClient, start *wololov1.UploadStart, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	up, err := jobs.Upload(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Start{Start: start}}); err != nil {
		t.Fatal(err)
	}
	first, err := up.Recv()
	if err != nil {
		t.Fatalf("upload %s: %v", path, err)
	}
	for rest := data[first.Offset:]; len(rest) > 0; {
		n := min(len(rest), 1<<20)
		if err := up.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: rest[:n]}}); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := up.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: int64(len(data))}}}); err != nil {
		t.Fatal(err)
	}
	for {
		r, err := up.Recv()
		if err != nil {
			t.Fatalf("upload %s: %v", path, err)
		}
		if r.Done {
			return
		}
	}
}

// appendOf is the AppendJob of epoch k's files (client.AppendRequest:
// their headers as the client reads them).
func appendOf(t *testing.T, matches, players string) *wololov1.AppendJobRequest {
	t.Helper()
	req, err := client.AppendRequest(client.SubmitOptions{JobID: "st", Matches: matches, Players: players})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestStandingJobClosedAnswersEveryEpoch: on a real cluster (whose tasks
// run the plan as a batch: batchEpochs), a standing job's epochs, each
// committed whole, and its close give the answer over every epoch's rows,
// byte for byte the SQL engine's; an append while the job is closed is
// refused.
func TestStandingJobClosedAnswersEveryEpoch(t *testing.T) {
	was := gw.DefaultEpochRuntime
	gw.DefaultEpochRuntime = batchEpochs
	t.Cleanup(func() { gw.DefaultEpochRuntime = was })
	d := testDatasets(t)[1]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 2})
	tlsConfig, err := c.ClientTLS("client")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rpc.NewClient(c.GatewayAddr(), tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	jobs := wololov1.NewJobServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	matches, matchesUpTo := splitEpochs(t, d.matches, dir, 3)
	players, playersUpTo := splitEpochs(t, d.players, dir, 3)
	first := appendOf(t, matches[0], players[0])
	if _, err := jobs.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: "st", Standing: true, Matches: first.Matches, Players: first.Players}); err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		epoch := int64(k + 1)
		if k > 0 {
			a, err := jobs.AppendJob(ctx, appendOf(t, matches[k], players[k]))
			if err != nil || a.Epoch != epoch {
				t.Fatalf("append %d: %+v, %v", epoch, a, err)
			}
		}
		uploadFile(ctx, t, jobs, &wololov1.UploadStart{JobId: "st", File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: epoch}, matches[k])
		uploadFile(ctx, t, jobs, &wololov1.UploadStart{JobId: "st", File: wololov1.InputFile_INPUT_FILE_PLAYERS, Epoch: epoch}, players[k])
	}
	if r, err := jobs.CloseJob(ctx, &wololov1.CloseJobRequest{JobId: "st"}); err != nil || r.Epochs != 3 {
		t.Fatalf("close: %+v, %v", r, err)
	}
	if _, err := jobs.AppendJob(ctx, first); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("append after close: %v; want FailedPrecondition", err)
	}
	var last *wololov1.Job
	testkit.WaitFor(t, "the closed job to be done", time.Minute, func() bool {
		r, err := jobs.GetJob(ctx, &wololov1.GetJobRequest{JobId: "st"})
		if err != nil {
			t.Fatal(err)
		}
		last = r.Job
		return last.State == wololov1.JobState_JOB_STATE_DONE || last.State == wololov1.JobState_JOB_STATE_FAILED
	})
	if last.State != wololov1.JobState_JOB_STATE_DONE || last.Open || last.EpochsCommitted != 3 {
		t.Fatalf("the closed job: %+v", last)
	}
	out := t.TempDir()
	if _, _, err := client.FetchResults(ctx, jobs, "st", 0, out); err != nil {
		t.Fatal(err)
	}
	want := answerOn(t, map[string]string{"matches": matchesUpTo[2], "match_players": playersUpTo[2]}, sqlflags.DefaultQueries())
	for name, w := range want {
		got, err := os.ReadFile(filepath.Join(out, name+".csv"))
		if err != nil || !bytes.Equal(got, w) || bytes.Count(w, []byte("\n")) < 2 {
			t.Errorf("%s.csv is not the answer over every epoch (or too small to tell) (%v)\n got: %.300q\nwant: %.300q", name, err, got, w)
		}
	}
}
