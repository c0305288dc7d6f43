package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	sqlflags "github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/roles/node"
)

// TestEpochEveryVersionsBeforeTheUploadEnds: a standing job submitted
// with --epoch-every uploads slowly (each piece of its files only once
// the versions of the epochs cut so far are published): the gateway cuts
// epochs while it runs, so at least two versions are out before its last
// byte, and every version is the batch answer over the rows it says it
// is over (GetResultsResponse.rows: the first rows of each file), the
// last one over the whole files.
func TestEpochEveryVersionsBeforeTheUploadEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a cluster")
	}
	d := testDatasets(t)[0]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	gw, err := client.Open(c.GatewayAddr(), clientTLS(t, c), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	req, err := client.Request(client.SubmitOptions{Matches: d.matches, Players: d.players, Standing: true, EpochEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	req.JobId = "every"
	if _, err := gw.Jobs.CreateJob(ctx, req); err != nil {
		t.Fatal(err)
	}
	caughtUp := func() *wololov1.Job { return caughtUp(ctx, t, gw, "every") }
	uploadPieces(ctx, t, gw, "every", 1, wololov1.InputFile_INPUT_FILE_MATCHES, d.matches, 3, true)()
	finish := uploadPieces(ctx, t, gw, "every", 1, wololov1.InputFile_INPUT_FILE_PLAYERS, d.players, 3, true)
	before := caughtUp()
	if before.EpochsPublished < 2 {
		t.Fatalf("%d versions before the upload's last byte; want at least 2", before.EpochsPublished)
	}
	finish()
	var j *wololov1.Job
	testkit.WaitFor(t, "the version of the upload's end", time.Minute, func() bool {
		var err error
		j, err = gw.Get(ctx, "every")
		return err == nil && len(j.AppendEpochs) == 1 && j.EpochsPublished >= j.AppendEpochs[0]
	})
	if j.AppendEpochs[0] < 2 {
		t.Fatalf("the upload ended epoch %d: no epoch was cut", j.AppendEpochs[0])
	}
	checkVersions(ctx, t, gw, "every", 1, j.AppendEpochs[0], d.matches, d.players, sqlflags.DefaultQueries())
	if _, over := version(ctx, t, gw.Jobs, "every", j.AppendEpochs[0]); over["matches"] != fileRows(t, d.matches) || over["match_players"] != fileRows(t, d.players) {
		t.Errorf("the last version is over %v rows, not the whole files", over)
	}
	if _, err := gw.CloseJob(ctx, "every"); err != nil {
		t.Fatal(err)
	}
}

// caughtUp waits until every epoch of standing job id ended is
// published, and returns the job.
func caughtUp(ctx context.Context, t *testing.T, gw *client.Session, id string) *wololov1.Job {
	t.Helper()
	var j *wololov1.Job
	testkit.WaitFor(t, "the versions of the epochs cut", time.Minute, func() bool {
		var err error
		j, err = gw.Get(ctx, id)
		return err == nil && j.EpochsPublished >= j.EpochsCommitted
	})
	return j
}

// uploadPieces uploads file path of job id's append epoch in pieces,
// each once the one before is committed and, with caught, its epochs'
// versions out (caughtUp); the returned finish ends the upload.
func uploadPieces(ctx context.Context, t *testing.T, gw *client.Session, id string, epoch int64, file wololov1.InputFile, path string, pieces int, caught bool) (finish func()) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := gw.Jobs.Upload(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: id, File: file, Epoch: epoch}}}); err != nil {
		t.Fatal(err)
	}
	ack, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	body := data[ack.Offset:]
	for i := range pieces {
		piece := body[len(body)*i/pieces : len(body)*(i+1)/pieces]
		if err := stream.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: piece}}); err != nil {
			t.Fatal(err)
		}
		if ack, err = stream.Recv(); err != nil {
			t.Fatal(err)
		}
		if caught {
			caughtUp(ctx, t, gw, id)
		}
	}
	return func() {
		t.Helper()
		if err := stream.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: int64(len(data))}}}); err != nil {
			t.Fatal(err)
		}
		for !ack.Done {
			if ack, err = stream.Recv(); err != nil {
				t.Fatal(err)
			}
		}
		_ = stream.CloseSend()
	}
}

// checkVersions checks versions from..to of standing job id: each one
// the batch answer of queries over the rows it says it is over (the
// first rows of matches and players, files of one record a line), and
// over no fewer rows than the one before; it returns the versions.
func checkVersions(ctx context.Context, t *testing.T, gw *client.Session, id string, from, to int64, matches, players string, queries []sqljob.Query) map[int64]map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	out := map[int64]map[string][]byte{}
	var rows map[string]int64
	for k := from; k <= to; k++ {
		got, over := version(ctx, t, gw.Jobs, id, k)
		out[k] = got
		if over["matches"] < rows["matches"] || over["match_players"] < rows["match_players"] {
			t.Errorf("version %d is over fewer rows than the one before: %v, then %v", k, rows, over)
		}
		t.Logf("version %d over %v rows", k, over)
		rows = over
		m := prefixFile(t, matches, over["matches"], filepath.Join(dir, fmt.Sprintf("matches.%d.csv", k)))
		p := prefixFile(t, players, over["match_players"], filepath.Join(dir, fmt.Sprintf("players.%d.csv", k)))
		want := answerOn(t, map[string]string{"matches": m, "match_players": p}, queries)
		for _, q := range queries {
			if !bytes.Equal(got[q.Name+".csv"], want[q.Name]) {
				t.Errorf("version %d (over %v rows), %s: not the batch answer over those rows\n got: %.300q\nwant: %.300q", k, over, q.Name, got[q.Name+".csv"], want[q.Name])
			}
		}
	}
	return out
}

// version is a standing job's version k, its files by name, and the
// rows of each table it says it is over.
func version(ctx context.Context, t *testing.T, jobs wololov1.JobServiceClient, id string, k int64) (map[string][]byte, map[string]int64) {
	t.Helper()
	stream, err := jobs.GetResults(ctx, &wololov1.GetResultsRequest{JobId: id, Epoch: k})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	var rows map[string]int64
	for {
		r, err := stream.Recv()
		if err != nil {
			break
		}
		files[r.Name] = append(files[r.Name], r.Data...)
		rows = r.Rows
	}
	if len(files) == 0 || rows == nil {
		t.Fatalf("version %d: files %v, rows %v", k, len(files), rows)
	}
	return files, rows
}

// fileRows is the number of data lines of a CSV file of one record a
// line.
func fileRows(t *testing.T, path string) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return int64(bytes.Count(data, []byte("\n")) - 1)
}

// prefixFile writes to out the header and first n data lines of the CSV
// file at path (one record a line), and returns out.
func prefixFile(t *testing.T, path string, n int64, out string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := 0
	for i := int64(0); i <= n; i++ { // the header, then n lines
		nl := bytes.IndexByte(data[end:], '\n')
		if nl < 0 {
			t.Fatalf("%s has fewer than %d lines", path, n)
		}
		end += nl + 1
	}
	if err := os.WriteFile(out, data[:end], 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
