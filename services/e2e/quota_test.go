package e2e

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/schema"
	gw "github.com/wololo/wololo/services/roles/gateway"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/rpc"
	"github.com/wololo/wololo/transport"
)

// jobsAs is the JobService of the cluster's gateway, called over its public
// port with a credential of the named client.
func jobsAs(t testing.TB, c *node.Cluster, name string) wololov1.JobServiceClient {
	t.Helper()
	cfg, err := c.ClientTLS(name)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rpc.NewClient(c.GatewayAddr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return wololov1.NewJobServiceClient(conn)
}

// headerOf is a header of file's required columns, padded with one more
// column to rowBytes bytes (as --max-header-bytes counts them), declaring a
// file of size bytes whose data starts at its end.
func headerOf(f schema.File, rowBytes int, size int64) *wololov1.FileHeader {
	cols := append([]string(nil), schema.RequiredColumns[f]...)
	n := 0
	for _, c := range cols {
		n += len(c) + 1
	}
	if pad := rowBytes - n - 1; pad >= 0 {
		cols = append(cols, strings.Repeat("p", pad))
	}
	offset := int64(rowBytes)
	if size < offset {
		offset = size
	}
	return &wololov1.FileHeader{Columns: cols, Size: size, DataOffset: offset}
}

// gatewayJobsOf counts the jobs the gateway holds of one client.
func gatewayJobsOf(c *node.Cluster, client string) int {
	n := 0
	for _, j := range c.Nodes["gateway-0"].Gateway.ClusterJobs() {
		if j.Client == client {
			n++
		}
	}
	return n
}

// TestSizesThatOverflowAreRefused makes the overflow attack over the
// gateway's public port while a legitimate job runs beside it: files
// declared as 2^63-1 bytes (whose sum wrapped to a negative number that
// passed every quota) are refused at CreateJob naming --max-job-bytes, a
// negative size is InvalidArgument, an upload past a legitimate job's
// declared size is refused, nothing of the attacker's is held; the other
// client's four answers are byte-equal to the reference.
func TestSizesThatOverflowAreRefused(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	d := testDatasets(t)[1]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := t.TempDir()
	legit := submitInBackground(ctx, t, c, d, out, "beside-the-attack")

	mallory := jobsAs(t, c, "mallory")
	create := func(name string, matches, players int64) error {
		_, err := mallory.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: name,
			Matches: headerOf(schema.Matches, 100, matches), Players: headerOf(schema.Players, 50, players)})
		return err
	}
	for _, tc := range []struct {
		name             string
		matches, players int64
		code             codes.Code
		flag             string
	}{
		{"one-huge", math.MaxInt64, 1 << 20, codes.ResourceExhausted, "--max-job-bytes"},
		{"both-huge", math.MaxInt64, math.MaxInt64, codes.ResourceExhausted, "--max-job-bytes"}, // the sum was -2
		{"sum-wraps", math.MaxInt64/2 + 1, math.MaxInt64/2 + 1, codes.ResourceExhausted, "--max-job-bytes"},
		{"over-the-quota", gw.DefaultMaxJobBytes, 100, codes.ResourceExhausted, "--max-job-bytes"},
		{"negative", -1, 100, codes.InvalidArgument, "bytes"},
		{"smallest", math.MinInt64, math.MaxInt64, codes.InvalidArgument, "bytes"},
	} {
		for i := 0; i < 3; i++ {
			if err := create(tc.name, tc.matches, tc.players); status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.flag) {
				t.Fatalf("%s (attempt %d): %v; want %s naming %s", tc.name, i+1, err, tc.code, tc.flag)
			}
		}
	}
	if n := gatewayJobsOf(c, "mallory"); n != 0 {
		t.Fatalf("the gateway holds %d of mallory's jobs after refusing them all", n)
	}

	// A job of a legal size takes no more than its header declared.
	if err := create("small", 200, 100); err != nil {
		t.Fatal(err)
	}
	up, err := mallory.Upload(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: "small", File: wololov1.InputFile_INPUT_FILE_MATCHES}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := up.Recv(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ { // 100 bytes declared after the header, 4 x 64 KiB sent
		if err := up.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: make([]byte, 64<<10)}}); err != nil {
			break // the gateway has ended the stream
		}
	}
	for {
		if _, err = up.Recv(); err != nil {
			break
		}
	}
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "declared") {
		t.Fatalf("an upload past the declared size: %v; want ResourceExhausted, more than declared", err)
	}
	r, err := mallory.GetJob(ctx, &wololov1.GetJobRequest{JobId: "small"})
	if err != nil || r.Job.Matches.Offset > 200 {
		t.Fatalf("mallory's small job after the upload: %v, %v; want nothing past its 200 bytes", r, err)
	}

	if err := <-legit; err != nil {
		t.Fatalf("the legitimate job beside the attack: %v", err)
	}
	compareOutputs(t, d, out)
}

// finishEmptyJob creates a job whose two files hold only their headers
// (rowBytes long each) and uploads both, which finishes it in the graph; it
// returns the CreateJob error, if any.
func finishEmptyJob(ctx context.Context, t *testing.T, jobs wololov1.JobServiceClient, name string, rowBytes int) error {
	t.Helper()
	_, err := jobs.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: name,
		Matches: headerOf(schema.Matches, rowBytes, int64(rowBytes)), Players: headerOf(schema.Players, rowBytes, int64(rowBytes))})
	if err != nil {
		return err
	}
	for _, f := range []wololov1.InputFile{wololov1.InputFile_INPUT_FILE_MATCHES, wololov1.InputFile_INPUT_FILE_PLAYERS} {
		up, err := jobs.Upload(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := up.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: name, File: f}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := up.Recv(); err != nil {
			t.Fatalf("%s: upload of %s: %v", name, f, err)
		}
		if err := up.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: int64(rowBytes)}}}); err != nil {
			t.Fatal(err)
		}
		if r, err := up.Recv(); err != nil || !r.Done {
			t.Fatalf("%s: finish of %s: %v, %v", name, f, r, err)
		}
		up.CloseSend()
	}
	// The gateway's watch of the job, to its end.
	w, err := jobs.WatchJob(ctx, &wololov1.WatchJobRequest{JobId: name})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for {
		r, err := w.Recv()
		if err != nil {
			t.Fatalf("%s: watch ended before the job did: %v", name, err)
		}
		switch r.Job.State {
		case wololov1.JobState_JOB_STATE_DONE:
			return nil
		case wololov1.JobState_JOB_STATE_FAILED:
			t.Fatalf("%s failed: %s", name, r.Job.Message)
		}
	}
}

// TestOneClientCannotFillTheJobTable makes the job-table attack over the
// gateway's public port with the default limits: one client creates
// finished jobs with headers of the largest size allowed, more than it may
// hold. Each one past --client-max-held-jobs drops its own oldest finished
// job (here and at every process), so it never holds more than that, far
// below --max-jobs; a longer header is refused naming --max-header-bytes;
// unfinished jobs past --client-max-jobs are refused naming it. Legitimate
// jobs of another client run during the flood and after it, and their four
// answers are byte-equal to the reference.
func TestOneClientCannotFillTheJobTable(t *testing.T) {
	top := deploy.Default()
	c := startCluster(t, top, node.ClusterOptions{})
	d := testDatasets(t)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	mallory := jobsAs(t, c, "mallory")
	const held = gw.DefaultClientMaxHeldJobs
	if held*16 > 1024 {
		t.Fatalf("a client may hold %d jobs by default, not well below the 1024 of --max-jobs", held)
	}

	_, err := mallory.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: "too-wide",
		Matches: headerOf(schema.Matches, gw.DefaultMaxHeaderBytes+1, 1<<20), Players: headerOf(schema.Players, 100, 1<<20)})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-header-bytes") {
		t.Fatalf("a header row over the limit: %v; want ResourceExhausted naming --max-header-bytes", err)
	}

	out := t.TempDir()
	legit := submitInBackground(ctx, t, c, d, out, "beside-the-flood")
	began := time.Now()
	var names []string
	for i := range held + 16 {
		name := fmt.Sprintf("flood-%03d", i)
		if err := finishEmptyJob(ctx, t, mallory, name, gw.DefaultMaxHeaderBytes); err != nil {
			t.Fatalf("mallory's job %d, %s: %v", i, name, err)
		}
		names = append(names, name)
		if n := gatewayJobsOf(c, "mallory"); n > held {
			t.Fatalf("after %d finished jobs the gateway holds %d of mallory's, more than --client-max-held-jobs (%d)", i+1, n, held)
		}
	}
	t.Logf("%d finished jobs with %d-byte headers in %s", len(names), gw.DefaultMaxHeaderBytes, time.Since(began).Round(time.Millisecond))
	if n := gatewayJobsOf(c, "mallory"); n != held {
		t.Fatalf("the gateway holds %d of mallory's jobs; want %d", n, held)
	}
	for i, name := range names {
		_, err := mallory.GetJob(ctx, &wololov1.GetJobRequest{JobId: name})
		if gone := i < 16; gone != (status.Code(err) == codes.NotFound) {
			t.Errorf("mallory's %s: %v; want it dropped %v (the oldest 16 are)", name, err, gone)
		}
	}
	// Every process drops what the gateway dropped.
	waitStores(t, c, fmt.Sprintf("every store to hold at most %d jobs, 16 dropped", held), 20*time.Second, instanceNames(top), func(img *transport.Image) bool {
		return len(img.Jobs) <= held && len(img.Dropped) >= 16
	})

	// Unfinished jobs are never dropped: up to --client-max-jobs of them
	// take the room of finished ones, and one more is refused.
	unfinished := func(name string) error {
		_, err := mallory.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: name,
			Matches: headerOf(schema.Matches, gw.DefaultMaxHeaderBytes, 1<<20), Players: headerOf(schema.Players, gw.DefaultMaxHeaderBytes, 1<<20)})
		return err
	}
	for i := range gw.DefaultClientMaxJobs {
		if err := unfinished(fmt.Sprintf("open-%d", i)); err != nil {
			t.Fatalf("unfinished job %d: %v", i, err)
		}
	}
	if err := unfinished("open-more"); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--client-max-jobs") {
		t.Fatalf("one unfinished job too many: %v; want ResourceExhausted naming --client-max-jobs", err)
	}
	if n := gatewayJobsOf(c, "mallory"); n != held {
		t.Fatalf("the gateway holds %d of mallory's jobs; want %d", n, held)
	}

	if err := <-legit; err != nil {
		t.Fatalf("the legitimate job beside the flood: %v", err)
	}
	compareOutputs(t, d, out)
	submit(t, c, d) // and one more beside the jobs mallory holds now
}
