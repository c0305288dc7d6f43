package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/transport"
)

// fakeEpochs stands in for the epoch runtime (epochs.go), which lives on
// another branch: it counts the epoch ends and refuses a plan when told.
type fakeEpochs struct {
	mu     sync.Mutex
	ends   int   // EndEpoch calls
	refuse error // MakeStanding's answer
	made   int   // MakeStanding calls
}

func (f *fakeEpochs) runtime() *EpochRuntime {
	return &EpochRuntime{
		MakeStanding: func(*physical.Plan) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.made++
			return f.refuse
		},
		EndEpoch: func(src *sqlops.Source, out stage.Emitter) error {
			f.mu.Lock()
			f.ends++
			f.mu.Unlock()
			return src.Flush(out)
		},
		HookRecords: func(*stage.Config, func(string, map[string][]byte)) {},
	}
}

func (f *fakeEpochs) endCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ends
}

// standingRequest is a standing job of the default queries over the test
// files.
func standingRequest(id string) *wololov1.CreateJobRequest {
	return &wololov1.CreateJobRequest{JobId: id, Matches: tMatches.header(), Players: tPlayers.header(), Standing: true}
}

// The files of epoch 2, and others of the same shape.
var (
	sMatches = csvFile{schema.RequiredColumns[schema.Matches], matchRows(2, 5)}
	sPlayers = csvFile{schema.RequiredColumns[schema.Players], "tok0002,1200,Aztecs,True\ntok0003,1000,Franks,False\n"}
	oPlayers = csvFile{schema.RequiredColumns[schema.Players], "tok0004,1200,Aztecs,True\n"}
)

func appendRequest(id string, players csvFile) *wololov1.AppendJobRequest {
	return &wololov1.AppendJobRequest{JobId: id, Matches: sMatches.header(), Players: players.header()}
}

// uploadEpoch uploads both files of a standing job's epoch.
func uploadEpoch(t *testing.T, svc wololov1.JobServiceServer, id string, epoch int64, matches, players csvFile) {
	t.Helper()
	if _, err := uploadInput(svc, id, &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: epoch}, matches, true); err != nil {
		t.Fatalf("epoch %d, matches: %v", epoch, err)
	}
	if _, err := uploadInput(svc, id, &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_PLAYERS, Epoch: epoch}, players, true); err != nil {
		t.Fatalf("epoch %d, players: %v", epoch, err)
	}
}

// versionRecords are the records the epoch runtime writes for epoch k of
// the named result files (all of a job's, or some): each file's version
// and change, distinct per epoch and file.
func versionRecords(k int64, names ...string) map[string][]byte {
	out := map[string][]byte{}
	for _, name := range names {
		out[fmt.Sprintf("version/%d/%s", k, name)] = fmt.Appendf(nil, "n\n%s@%d\n", name, k)
		out[fmt.Sprintf("change/%d/%s", k, name)] = fmt.Appendf(nil, "n,diff\n%s@%d,+1\n", name, k)
	}
	return out
}

// publish commits records as the gateway's stage runtime would (to the
// store, then OnRecords).
func publish(t *testing.T, g *Gateway, store transport.Store, name string, records map[string][]byte) {
	t.Helper()
	j, err := g.jobs.lookup("", name)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(&transport.Commit{Job: j.id, Records: records}); err != nil {
		t.Fatal(err)
	}
	g.Records(j.id, records)
}

var q1to4 = []string{"q1.csv", "q2.csv", "q3.csv", "q4.csv"}

// resultsStream is the server side of a GetResults call.
type resultsStream struct {
	grpc.ServerStream
	got map[string]string
	at  int64
}

func (s *resultsStream) Context() context.Context { return context.Background() }
func (s *resultsStream) Send(r *wololov1.GetResultsResponse) error {
	s.got[r.Name] += string(r.Data)
	s.at = r.Epoch
	return nil
}

func results(svc wololov1.JobServiceServer, id string, epoch int64) (map[string]string, int64, error) {
	s := &resultsStream{got: map[string]string{}}
	err := svc.GetResults(&wololov1.GetResultsRequest{JobId: id, Epoch: epoch}, s)
	return s.got, s.at, err
}

func wantCode(t *testing.T, what string, err error, code codes.Code, saying string) {
	t.Helper()
	if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), saying) {
		t.Fatalf("%s: %v; want %v saying %q", what, err, code, saying)
	}
}

// TestStandingJobLifecycle: a standing job from its creation to its
// results: epoch 1 ends (every Source's EndEpoch, in its last file's
// commit) only once both files are in; an append opens epoch 2, another
// is refused while it is open and resumed with the same files; a version
// is published once every query has it; results by epoch; a restarted
// gateway knows the epochs and versions; close, then the final results.
func TestStandingJobLifecycle(t *testing.T) {
	store := transport.NewMemStore()
	fake := &fakeEpochs{}
	g := newTestGateway(t, store, Config{Retention: time.Hour, Epochs: fake.runtime()}, make(chan string, 8))
	svc := g.Service()
	ctx := context.Background()
	if _, err := svc.CreateJob(ctx, standingRequest("s")); err != nil {
		t.Fatal(err)
	}
	if j := getJob(t, svc, "s"); !j.Standing || !j.Open || j.Epochs != 1 || j.EpochsCommitted != 0 || fake.made != 1 {
		t.Fatalf("created: %+v (MakeStanding called %d times)", j, fake.made)
	}
	_, err := svc.CloseJob(ctx, &wololov1.CloseJobRequest{JobId: "s"})
	wantCode(t, "close with epoch 1 open", err, codes.FailedPrecondition, "epoch 1 is open")
	if _, err := uploadInput(svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES}, tMatches, true); err != nil {
		t.Fatal(err)
	}
	if n := fake.endCalls(); n != 0 {
		t.Fatalf("EndEpoch called %d times before the epoch's last file", n)
	}
	if _, err := uploadInput(svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_PLAYERS, Epoch: 1}, tPlayers, true); err != nil {
		t.Fatal(err)
	}
	if n := fake.endCalls(); n != 2 { // matches and match_players
		t.Fatalf("EndEpoch called %d times at the end of epoch 1; want one per table (2)", n)
	}
	if j := getJob(t, svc, "s"); j.EpochsCommitted != 1 || j.EpochsPublished != 0 || j.State != wololov1.JobState_JOB_STATE_RUNNING {
		t.Fatalf("after epoch 1: %+v", j)
	}
	_, _, err = results(svc, "s", 0)
	wantCode(t, "results before a version", err, codes.FailedPrecondition, "no version yet")

	publish(t, g, store, "s", versionRecords(1, q1to4...))
	got, at, err := results(svc, "s", 0)
	if err != nil || at != 1 || got["q2.csv"] != "n\nq2.csv@1\n" || len(got) != 4 {
		t.Fatalf("latest version = %v, epoch %d, %v", got, at, err)
	}

	a, err := svc.AppendJob(ctx, appendRequest("s", sPlayers))
	if err != nil || a.Epoch != 2 || a.Resumed {
		t.Fatalf("append: %+v, %v", a, err)
	}
	_, err = svc.AppendJob(ctx, appendRequest("s", oPlayers))
	wantCode(t, "another append while epoch 2 is open", err, codes.FailedPrecondition, "epoch 2 is open")
	if a, err := svc.AppendJob(ctx, appendRequest("s", sPlayers)); err != nil || a.Epoch != 2 || !a.Resumed {
		t.Fatalf("the same append again: %+v, %v; want epoch 2 resumed", a, err)
	}
	uploadEpoch(t, svc, "s", 2, sMatches, sPlayers)
	if n := fake.endCalls(); n != 4 {
		t.Fatalf("EndEpoch called %d times after epoch 2; want 4", n)
	}
	publish(t, g, store, "s", versionRecords(2, "q1.csv", "q2.csv", "q3.csv"))
	if j := getJob(t, svc, "s"); j.EpochsPublished != 1 {
		t.Fatalf("epoch 2 published without q4's version: %+v", j)
	}
	publish(t, g, store, "s", versionRecords(2, "q4.csv"))
	j := getJob(t, svc, "s")
	if j.Epochs != 2 || j.EpochsCommitted != 2 || j.EpochsPublished != 2 || j.Players.Rows != 5 || j.Matches.Size != tMatches.size()+sMatches.size() {
		t.Fatalf("after epoch 2: %+v", j)
	}

	// A gateway restarted on the store knows it all.
	g2 := newTestGateway(t, store, Config{Retention: time.Hour, Epochs: fake.runtime()}, make(chan string, 8))
	svc2 := g2.Service()
	if j := getJob(t, svc2, "s"); !j.Open || j.Epochs != 2 || j.EpochsCommitted != 2 || j.EpochsPublished != 2 || j.Players.Rows != 5 {
		t.Fatalf("restarted: %+v", j)
	}
	if got, at, err := results(svc2, "s", 1); err != nil || at != 1 || got["q4.csv"] != "n\nq4.csv@1\n" {
		t.Fatalf("restarted, version 1 = %v, epoch %d, %v", got, at, err)
	}
	_, _, err = results(svc2, "s", 3)
	wantCode(t, "results of epoch 3", err, codes.NotFound, "epochs 1 to 2 are published")

	if r, err := svc2.CloseJob(ctx, &wololov1.CloseJobRequest{JobId: "s"}); err != nil || r.Epochs != 2 {
		t.Fatalf("close: %+v, %v", r, err)
	}
	_, err = svc2.AppendJob(ctx, appendRequest("s", oPlayers))
	wantCode(t, "append to a closed job", err, codes.FailedPrecondition, "is closed")
	if _, err := svc2.CloseJob(ctx, &wololov1.CloseJobRequest{JobId: "s"}); err != nil {
		t.Fatalf("close again: %v", err)
	}
	if j := getJob(t, svc2, "s"); j.Open || j.State != wololov1.JobState_JOB_STATE_RUNNING {
		t.Fatalf("closed: %+v", j)
	}
	// The closed job finishes as a batch job: its results are its last
	// version, and its versions stay.
	final := map[string][]byte{}
	for _, name := range q1to4 {
		final[schema.ResultRecord(name)] = fmt.Appendf(nil, "n\n%s@2\n", name)
	}
	sj, _ := g2.jobs.lookup("", "s")
	g2.Finished(sj.id, final)
	if got, at, err := results(svc2, "s", 0); err != nil || at != 2 || got["q1.csv"] != "n\nq1.csv@2\n" {
		t.Fatalf("final results = %v, epoch %d, %v", got, at, err)
	}
	if got, _, err := results(svc2, "s", 1); err != nil || got["q1.csv"] != "n\nq1.csv@1\n" {
		t.Fatalf("version 1 of a done job = %v, %v", got, err)
	}
}

// TestStandingMisuseRefused: what a standing job's calls refuse, with
// their codes: a standing job of a plan the epoch runtime refuses
// (InvalidArgument with its message); an append or a close of a
// batch job, an upload of an epoch that does not exist, an append of a
// table the job lacks or of a file without a column the queries read,
// an append past the job's bytes.
func TestStandingMisuseRefused(t *testing.T) {
	ctx := context.Background()
	fake := &fakeEpochs{refuse: fmt.Errorf("operator #3 (Limit): a LIMIT with no Sort under it: %w", errors.New("not supported in a standing query"))}
	svc := testGatewayWith(t, transport.NewMemStore(), Config{Epochs: fake.runtime(), MaxJobBytes: tMatches.size() + tPlayers.size() + sMatches.size() + sPlayers.size() + 10}, make(chan string, 1))
	_, err := svc.CreateJob(ctx, standingRequest("s"))
	wantCode(t, "a plan the runtime refuses", err, codes.InvalidArgument, "a LIMIT with no Sort under it")
	fake.refuse = nil
	if _, err := svc.CreateJob(ctx, standingRequest("s")); err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: "s", Matches: tMatches.header(), Players: tPlayers.header()})
	wantCode(t, "resuming a standing job as a batch one", err, codes.FailedPrecondition, "created standing")

	if _, err := svc.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: "b", Matches: tMatches.header(), Players: tPlayers.header()}); err != nil {
		t.Fatal(err)
	}
	_, err = svc.AppendJob(ctx, appendRequest("b", sPlayers))
	wantCode(t, "append to a batch job", err, codes.FailedPrecondition, "is a batch job")
	_, err = svc.CloseJob(ctx, &wololov1.CloseJobRequest{JobId: "b"})
	wantCode(t, "close of a batch job", err, codes.FailedPrecondition, "is a batch job")
	_, err = uploadInput(svc, "b", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 2}, tMatches, true)
	wantCode(t, "an epoch of a batch job", err, codes.InvalidArgument, "no epoch 2")
	_, _, err = results(svc, "b", 2)
	wantCode(t, "results of an epoch of a batch job", err, codes.InvalidArgument, "has no epochs")

	_, err = uploadInput(svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 2}, sMatches, true)
	wantCode(t, "an epoch not appended", err, codes.InvalidArgument, "no epoch 2")
	uploadEpoch(t, svc, "s", 1, tMatches, tPlayers)
	req := appendRequest("s", sPlayers)
	req.Tables = []*wololov1.Table{{Name: "regions", Header: tRegions.header()}}
	_, err = svc.AppendJob(ctx, req)
	wantCode(t, "a table the job lacks", err, codes.InvalidArgument, `no table "regions"`)
	req = appendRequest("s", sPlayers)
	req.Players = &wololov1.FileHeader{Columns: []string{"match", "rating"}, Size: 20, DataOffset: 13}
	_, err = svc.AppendJob(ctx, req)
	wantCode(t, "a column the queries read", err, codes.InvalidArgument, "match_players.csv: no column")
	req = appendRequest("s", sPlayers)
	req.Matches = nil
	_, err = svc.AppendJob(ctx, req)
	wantCode(t, "no matches header", err, codes.InvalidArgument, "both file headers are required")
	_, err = svc.AppendJob(ctx, appendRequest("s", csvFile{sPlayers.cols, sPlayers.body + strings.Repeat("tok0003,1000,Franks,False\n", 2)}))
	wantCode(t, "past the job's bytes over its epochs", err, codes.ResourceExhausted, "--max-job-bytes")
	if a, err := svc.AppendJob(ctx, appendRequest("s", sPlayers)); err != nil || a.Epoch != 2 {
		t.Fatalf("an append within the quota: %+v, %v", a, err)
	}
}

// answersStream is the server side of a WatchAnswers call.
type answersStream struct {
	grpc.ServerStream
	ctx  context.Context
	sent chan *wololov1.WatchAnswersResponse
}

func (s *answersStream) Context() context.Context { return s.ctx }
func (s *answersStream) Send(r *wololov1.WatchAnswersResponse) error {
	s.sent <- r
	return nil
}

// TestWatchAnswersFollowsVersions: WatchAnswers sends each version's
// changes as it is published, from the epoch asked for, each epoch
// ended, and ends once the job is done.
func TestWatchAnswersFollowsVersions(t *testing.T) {
	store := transport.NewMemStore()
	fake := &fakeEpochs{}
	g := newTestGateway(t, store, Config{Epochs: fake.runtime()}, make(chan string, 1))
	svc := g.Service()
	if _, err := svc.CreateJob(context.Background(), standingRequest("s")); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 1, tMatches, tPlayers)
	publish(t, g, store, "s", versionRecords(1, q1to4...))
	stream := &answersStream{ctx: t.Context(), sent: make(chan *wololov1.WatchAnswersResponse, 64)}
	done := make(chan error, 1)
	go func() { done <- svc.WatchAnswers(&wololov1.WatchAnswersRequest{JobId: "s", FromEpoch: 2}, stream) }()
	if _, err := svc.AppendJob(context.Background(), appendRequest("s", sPlayers)); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 2, sMatches, sPlayers)
	publish(t, g, store, "s", versionRecords(2, q1to4...))
	var got []string
	for r := range stream.sent {
		if r.EndOfEpoch {
			got = append(got, fmt.Sprintf("end %d", r.Epoch))
			break
		}
		got = append(got, fmt.Sprintf("%d %s %q", r.Epoch, r.Query, r.Data))
	}
	want := []string{`2 q1 "n,diff\nq1.csv@2,+1\n"`, `2 q2 "n,diff\nq2.csv@2,+1\n"`, `2 q3 "n,diff\nq3.csv@2,+1\n"`, `2 q4 "n,diff\nq4.csv@2,+1\n"`, "end 2"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("sent %q\nwant %q", got, want)
	}
	if _, err := svc.CloseJob(context.Background(), &wololov1.CloseJobRequest{JobId: "s"}); err != nil {
		t.Fatal(err)
	}
	sj, _ := g.jobs.lookup("", "s")
	final := map[string][]byte{}
	for _, name := range q1to4 {
		final[schema.ResultRecord(name)] = []byte("n\n")
	}
	g.Finished(sj.id, final)
	if r := <-stream.sent; !r.Closed {
		t.Fatalf("after the job is done: %+v; want closed", r)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestStandingJobLostStateFails: a standing job whose state a process
// lost, on a gateway that retains no input, is not run again: it fails,
// saying why, not marked as lost state (its client would submit it again
// as one upload). With its retained epochs it runs again:
// TestStandingJobRebuiltFromItsEpochs.
func TestStandingJobLostStateFails(t *testing.T) {
	fake := &fakeEpochs{}
	g := newTestGateway(t, transport.NewMemStore(), Config{Epochs: fake.runtime()}, make(chan string, 1))
	svc := g.Service()
	if _, err := svc.CreateJob(context.Background(), standingRequest("s")); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 1, tMatches, tPlayers)
	sj, _ := g.jobs.lookup("", "s")
	if err := g.FailJob(transport.JobFailure{Job: sj.id, Reporter: "shard-0", Reason: "channel state lost", StateLost: true}); err != nil {
		t.Fatal(err)
	}
	j := getJob(t, svc, "s")
	if j.State != wololov1.JobState_JOB_STATE_FAILED || j.StateLost || !strings.Contains(j.Message, "holds no whole copy of its epochs") {
		t.Fatalf("after a lost state: %+v", j)
	}
}

// TestAppendResumesAfterRestart: an append's upload broken off halfway
// resumes, after a gateway restart, from the offset the gateway
// committed, as an upload does; the epoch stays open (no EndEpoch, no
// other append) until its last file is in, and the same append is
// answered with the same epoch.
func TestAppendResumesAfterRestart(t *testing.T) {
	store := transport.NewMemStore()
	fake := &fakeEpochs{}
	svc := newTestGateway(t, store, Config{Epochs: fake.runtime()}, make(chan string, 1)).Service()
	ctx := context.Background()
	if _, err := svc.CreateJob(ctx, standingRequest("s")); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 1, tMatches, tPlayers)
	if _, err := svc.AppendJob(ctx, appendRequest("s", sPlayers)); err != nil {
		t.Fatal(err)
	}
	half := strings.Index(sMatches.body, "\n") + 1 // the first record
	start := &wololov1.UploadStart{JobId: "s", File: wololov1.InputFile_INPUT_FILE_MATCHES, Epoch: 2}
	paused := &fakeUpload{ctx: ctx, in: []*wololov1.UploadRequest{{Frame: &wololov1.UploadRequest_Start{Start: start}}, {Frame: &wololov1.UploadRequest_Data{Data: []byte(sMatches.body[:half])}}}}
	if err := svc.Upload(paused); err != nil {
		t.Fatal(err)
	}
	committed := int64(len(sMatches.head()) + half)
	if last := paused.sent[len(paused.sent)-1]; last.Offset != committed || last.Done {
		t.Fatalf("the paused upload's last acknowledgement: %+v; want offset %d", last, committed)
	}

	svc = newTestGateway(t, store, Config{Epochs: fake.runtime()}, make(chan string, 1)).Service()
	if j := getJob(t, svc, "s"); j.Epochs != 2 || j.EpochsCommitted != 1 || j.Matches.Offset != tMatches.header().Size+committed {
		t.Fatalf("restarted with epoch 2 open: %+v", j)
	}
	if a, err := svc.AppendJob(ctx, appendRequest("s", sPlayers)); err != nil || a.Epoch != 2 || !a.Resumed {
		t.Fatalf("the same append after the restart: %+v, %v", a, err)
	}
	resumed := &fakeUpload{ctx: ctx, in: []*wololov1.UploadRequest{{Frame: &wololov1.UploadRequest_Start{Start: start}},
		{Frame: &wololov1.UploadRequest_Data{Data: []byte(sMatches.body[half:])}},
		{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: sMatches.size()}}}}}
	if err := svc.Upload(resumed); err != nil {
		t.Fatal(err)
	}
	if first := resumed.sent[0]; first.Offset != committed {
		t.Fatalf("the resumed upload starts at %d; want %d", first.Offset, committed)
	}
	if n := fake.endCalls(); n != 2 {
		t.Fatalf("EndEpoch called %d times with epoch 2's players not in; want epoch 1's 2", n)
	}
	if _, err := uploadInput(svc, "s", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_PLAYERS, Epoch: 2}, sPlayers, true); err != nil {
		t.Fatal(err)
	}
	if j := getJob(t, svc, "s"); j.EpochsCommitted != 2 || j.Matches.Rows != 5 || fake.endCalls() != 4 {
		t.Fatalf("epoch 2 in: %+v, EndEpoch called %d times", j, fake.endCalls())
	}
}

// TestAppendCountsInTheClientsBytes: an append's files count in its
// client's --client-max-bytes with its other unfinished jobs'.
func TestAppendCountsInTheClientsBytes(t *testing.T) {
	fake := &fakeEpochs{}
	job := tMatches.size() + tPlayers.size()
	svc := testGatewayWith(t, transport.NewMemStore(), Config{Epochs: fake.runtime(), ClientMaxBytes: 2*job + sMatches.size()}, make(chan string, 1))
	ctx := context.Background()
	if _, err := svc.CreateJob(ctx, standingRequest("s")); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: "b", Matches: tMatches.header(), Players: tPlayers.header()}); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 1, tMatches, tPlayers)
	_, err := svc.AppendJob(ctx, appendRequest("s", sPlayers))
	wantCode(t, "an append past the client's bytes", err, codes.ResourceExhausted, "--client-max-bytes")
	if _, err := svc.DeleteJob(ctx, &wololov1.DeleteJobRequest{JobId: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AppendJob(ctx, appendRequest("s", sPlayers)); err != nil {
		t.Fatalf("the append once the other job is gone: %v", err)
	}
}

// TestClusterJobsShowTheLatestVersion: the operators' view of a standing
// job gives its latest version published and, per query, the rows of
// its answer (a quoted field's line end is not a row's) and what its
// change added and removed, counted with their multiplicity; never the
// rows themselves.
func TestClusterJobsShowTheLatestVersion(t *testing.T) {
	store := transport.NewMemStore()
	g := newTestGateway(t, store, Config{Retention: time.Hour, Epochs: (&fakeEpochs{}).runtime()}, make(chan string, 8))
	svc := g.Service()
	if _, err := svc.CreateJob(context.Background(), standingRequest("s")); err != nil {
		t.Fatal(err)
	}
	uploadEpoch(t, svc, "s", 1, tMatches, tPlayers)
	summary := func() *wololov1.ClusterJob {
		for _, j := range g.ClusterJobs() {
			if j.Name == "s" {
				return j
			}
		}
		t.Fatal("no job s in ClusterJobs")
		return nil
	}
	if s := summary(); !s.Standing || s.EpochsPublished != 0 || len(s.Latest) != 0 {
		t.Fatalf("before a version: %v", s)
	}
	records := versionRecords(1, q1to4...)
	records["version/1/q3.csv"] = []byte("civ,n\nAztecs,1\n\"Bri\ntons\",2\nCelts,3\n")
	records["change/1/q3.csv"] = []byte("civ,n,diff\nAztecs,1,2\nBritons,2,-1\nCelts,3,-3\n")
	publish(t, g, store, "s", records)
	s := summary()
	if s.EpochsPublished != 1 || len(s.Latest) != 4 {
		t.Fatalf("after epoch 1: %v", s)
	}
	q3 := s.Latest[2]
	if q3.Name != "q3.csv" || q3.Rows != 3 || q3.Added != 2 || q3.Removed != 4 {
		t.Fatalf("q3's latest version: %v; want 3 rows, 2 added, 4 removed", q3)
	}
	if q1 := s.Latest[0]; q1.Rows != 1 || q1.Added != 1 || q1.Removed != 0 {
		t.Fatalf("q1's latest version: %v", q1)
	}
}
