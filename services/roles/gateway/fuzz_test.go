package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/jobid"
	"github.com/wololo/wololo/transport"
)

// FuzzJobService drives every JobService handler with arbitrary input: a
// job id, the matches header (columns split at '|'), an upload of any
// bytes in two chunks with any declared size, then status, results and
// delete. No input may panic, and a job may only exist under a well-formed
// id.
func FuzzJobService(f *testing.F) {
	header := strings.Join([]string{"token", "ladder", "mirror", "average_rating", "map", "server", "duration"}, "|")
	f.Add("j1", header, []byte("t1,RM_1v1,False,1200,arena,ukwest,0:20:00\n"), []byte("t2,RM_1v1,True,9"), int64(60), uint8(0))
	f.Add("", header, []byte("\"open quote"), []byte(""), int64(-1), uint8(1))
	f.Add("a\x00b", "token|token", []byte{0xff, 0xfe}, []byte("\n\n"), int64(1<<62), uint8(2))
	f.Add(strings.Repeat("x", 70), "", []byte{}, []byte{}, int64(0), uint8(3))
	f.Fuzz(func(t *testing.T, id, cols string, chunk1, chunk2 []byte, size int64, file uint8) {
		store := transport.NewMemStore()
		svc := testGateway(t, store, time.Hour, make(chan string, 16))
		players := header2(strings.Split("match|rating|civ|winner", "|"))
		// Two clients: the fuzzed calls are the owner's, and the other
		// must never see the job.
		owner, stranger := as("alice"), as("bob")
		if file&4 != 0 {
			owner, stranger = stranger, context.Background()
		}
		created, err := svc.CreateJob(owner, &wololov1.CreateJobRequest{
			JobId: id, Matches: header2(strings.Split(cols, "|")), Players: players,
		})
		if err != nil {
			return
		}
		id = created.JobId
		if !jobid.Valid(id) {
			t.Fatalf("job created under the malformed id %q", id)
		}
		frames := []*wololov1.UploadRequest{
			{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: id, File: wololov1.InputFile(file % 4)}}},
			{Frame: &wololov1.UploadRequest_Data{Data: chunk1}},
			{Frame: &wololov1.UploadRequest_Data{Data: chunk2}},
			{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: size}}},
		}
		_ = svc.Upload(&fakeUpload{ctx: stranger, in: frames})
		_ = svc.Upload(&fakeUpload{ctx: owner, in: frames})
		if _, err := svc.GetJob(owner, &wololov1.GetJobRequest{JobId: id}); err != nil {
			t.Fatalf("GetJob of a created job: %v", err)
		}
		if _, err := svc.GetJob(stranger, &wololov1.GetJobRequest{JobId: id}); status.Code(err) != codes.NotFound {
			t.Fatalf("another client's GetJob: %v, want NotFound", err)
		}
		_ = svc.GetResults(&wololov1.GetResultsRequest{JobId: id}, resultsAs{ctx: owner}) // not done: refused before anything is sent
		if _, err := svc.DeleteJob(stranger, &wololov1.DeleteJobRequest{JobId: id}); status.Code(err) != codes.NotFound {
			t.Fatalf("another client's DeleteJob: %v, want NotFound", err)
		}
		if _, err := svc.DeleteJob(owner, &wololov1.DeleteJobRequest{JobId: id}); err != nil {
			t.Fatalf("DeleteJob: %v", err)
		}
		img, _ := store.Load()
		for job := range img.Jobs {
			if !jobid.Valid(job) {
				t.Fatalf("the store holds the malformed job id %q", job)
			}
		}
	})
}

func header2(cols []string) *wololov1.FileHeader {
	return &wololov1.FileHeader{Columns: cols, Size: 1 << 20, DataOffset: 10}
}

// FuzzJobIDsAreChannelJobs pins that the job ids the gateway makes and
// takes (jobid) are exactly the job names the channel protocol takes
// (transport.ValidJob): an id the gateway accepted that a receiver refused
// would strand the job, and a name a receiver took that the gateway never
// could have made would be a job only a forger could name.
func FuzzJobIDsAreChannelJobs(f *testing.F) {
	for _, s := range []string{"", "a", "nightly", "a-b_C9", "a.b", "a/b", "a b", "é", "a\x00", strings.Repeat("z", jobid.MaxLen), strings.Repeat("z", jobid.MaxLen+1), jobid.New()} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if g, c := jobid.Valid(id), transport.ValidJob(id); g != c {
			t.Fatalf("jobid.Valid(%q) = %v, transport.ValidJob = %v", id, g, c)
		}
	})
}
