package gateway

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// TestUploadIntroducesTheJobFirst: the first upload of a job introduces it
// to the other processes before anything of it is committed, once; a
// refusal for a limit, of a dropped job or of its plan fails the job with
// the refusing process's words, which its client sees, is not retried,
// and has the job dropped at the other processes (which may have taken
// the introduction before one refused it), while the gateway keeps the
// failed job for its client; any other error ends the upload and the
// next one tries again.
func TestUploadIntroducesTheJobFirst(t *testing.T) {
	cases := []struct {
		name    string
		answer  error
		refused bool // the job fails with the answer's words and is dropped elsewhere
		retried bool // a second upload introduces again
	}{
		{"introduced", nil, false, false},
		{"refused for a limit", status.Error(codes.ResourceExhausted, "too many jobs: shard-1 holds 1024 jobs already, its limit (--max-jobs)"), true, false},
		{"dropped there", status.Error(codes.NotFound, "job dropped: shard-0 has dropped it"), true, false},
		{"its plan refused", status.Error(codes.InvalidArgument, "job plan refused: channels a and b are both stream a"), true, false},
		{"refused otherwise", status.Error(codes.PermissionDenied, "not the gateway"), false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := transport.NewMemStore()
			dropped := make(chan string, 4)
			svc := testGateway(t, store, time.Hour, dropped)
			g := svc.(jobService).g
			if _, err := svc.CreateJob(context.Background(), createRequest("j")); err != nil {
				t.Fatal(err)
			}
			j, err := g.jobs.lookup("", "j")
			if err != nil {
				t.Fatal(err)
			}
			if !g.Knows(j.id) || g.Knows("someone-elses") {
				t.Fatalf("Knows: %v for the job, %v for another id", g.Knows(j.id), g.Knows("someone-elses"))
			}
			var calls atomic.Int32
			g.SetIntroducer(func(_ context.Context, job string, plan []byte) error {
				calls.Add(1)
				if want, _ := g.PlanOf(j.id); len(plan) == 0 || !bytes.Equal(plan, want) {
					t.Errorf("the job introduced with a plan of %d bytes, not its own (%d)", len(plan), len(want))
				}
				if img, _ := store.Load(); job != j.id || (img.Jobs[job] != nil && len(img.Jobs[job].Reserved) != 0) {
					t.Errorf("introduced %q (the job is %q) after batches of it were committed", job, j.id)
				}
				return tc.answer
			})
			for i, chunks := range [][]string{{matchRows(0, 1)}, nil} { // the second resumes
				_, err = uploadMatches(svc, "j", chunks, 0)
				switch {
				case tc.answer == nil && err != nil:
					t.Fatalf("upload %d: %v", i+1, err)
				case tc.refused && (status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), status.Convert(tc.answer).Message())):
					t.Fatalf("upload %d: %v; want FailedPrecondition with the refusal", i+1, err)
				case tc.retried && status.Code(err) != status.Code(tc.answer):
					t.Fatalf("upload %d: %v; want %v", i+1, err, tc.answer)
				}
			}
			want := map[bool]int32{false: 1, true: 2}[tc.retried]
			if n := calls.Load(); n != want {
				t.Fatalf("introduced %d times, want %d", n, want)
			}
			r, err := svc.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "j"})
			if err != nil {
				t.Fatal(err)
			}
			if failed := r.Job.State == wololov1.JobState_JOB_STATE_FAILED; failed != tc.refused || (tc.refused && !strings.Contains(r.Job.Message, status.Convert(tc.answer).Message())) {
				t.Fatalf("job after the uploads: %v %q; want failed %v with the refusal", r.Job.State, r.Job.Message, tc.refused)
			}
			if !tc.refused {
				return
			}
			select {
			case got := <-dropped:
				if got != j.id {
					t.Fatalf("dropped %s at the other processes, want the refused job %s", got, j.id)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the refused job was never dropped at the other processes")
			}
			if held := storedJobs(t, store); !slices.Contains(held, j.id) {
				t.Fatalf("the gateway's store no longer holds the refused job %s, whose failure its client is to see: %v", j.id, held)
			}
		})
	}
}
