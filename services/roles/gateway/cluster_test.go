package gateway

import (
	"context"
	"testing"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/ops/clusterview"
	"github.com/wololo/wololo/transport"
)

// TestClusterJobsNameEachJobsState: every job ClusterJobs describes has
// its state named, as ClusterJob.state promises and the gateway's
// wololo_gateway_job_state gauge labels it: uploading before both files
// are in, running once they are, done with its results, failed once a
// process failed it. (The state used to be left empty, for the view
// alone to name, and the gauge read it empty.)
func TestClusterJobsNameEachJobsState(t *testing.T) {
	svc := testGateway(t, transport.NewMemStore(), time.Hour, make(chan string, 4))
	g := svc.(jobService).g
	ctx := context.Background()
	for _, name := range []string{"uploading", "running", "done", "failed"} {
		if _, err := svc.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: name, Matches: tMatches.header(), Players: tPlayers.header()}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := uploadInput(svc, "uploading", &wololov1.UploadStart{File: wololov1.InputFile_INPUT_FILE_MATCHES}, tMatches, true); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"running", "done"} {
		for _, in := range []struct {
			file wololov1.InputFile
			f    csvFile
		}{{wololov1.InputFile_INPUT_FILE_MATCHES, tMatches}, {wololov1.InputFile_INPUT_FILE_PLAYERS, tPlayers}} {
			if _, err := uploadInput(svc, name, &wololov1.UploadStart{File: in.file}, in.f, true); err != nil {
				t.Fatalf("upload %s of %s: %v", in.file, name, err)
			}
		}
	}
	g.Finished(internalID(t, g, "done"), headerOnlyResults())
	if err := g.FailJob(transport.JobFailure{Job: internalID(t, g, "failed"), Reporter: "shard-0", Reason: "a test's failure"}); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{
		internalID(t, g, "uploading"): clusterview.JobUploading,
		internalID(t, g, "running"):   clusterview.JobRunning,
		internalID(t, g, "done"):      clusterview.JobDone,
		internalID(t, g, "failed"):    clusterview.JobFailed,
	}
	jobs := g.ClusterJobs()
	if len(jobs) != len(want) {
		t.Fatalf("ClusterJobs: %d jobs, want %d: %v", len(jobs), len(want), jobs)
	}
	for _, j := range jobs {
		if j.GetState() != want[j.GetJobId()] {
			t.Errorf("job %s (%s): state %q, want %q (%v)", j.GetJobId(), j.GetName(), j.GetState(), want[j.GetJobId()], j)
		}
	}
}
