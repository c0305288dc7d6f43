package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

const matchesHeader = "token,ladder,mirror,average_rating,map,server,duration\n"

// createMatches creates job id for a matches file of the given body.
func createMatches(t *testing.T, g wololov1.JobServiceServer, id, body string, maxMalformed *float64) {
	t.Helper()
	req := createRequest(id)
	req.Matches.DataOffset = int64(len(matchesHeader))
	req.Matches.Size = int64(len(matchesHeader) + len(body))
	req.MaxMalformed = maxMalformed
	if _, err := g.CreateJob(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

func getJob(t *testing.T, g wololov1.JobServiceServer, id string) *wololov1.Job {
	t.Helper()
	r, err := g.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: id})
	if err != nil {
		t.Fatal(err)
	}
	return r.Job
}

// TestAllGarbageFailsTheJob: a file of nothing but malformed records fails
// its job at the end of its upload, with a message that names the file,
// the counts, the limit and the first bad record; the upload gets the
// failure, the job lists the rejected records, and a restarted gateway
// says the same (each record listed once, though the upload spanned a
// restart and a failed commit).
func TestAllGarbageFailsTheJob(t *testing.T) {
	store := &failingStore{MemStore: transport.NewMemStore(), all: true}
	g := testGateway(t, store, time.Hour, make(chan string, 1))
	first, second := strings.Repeat("garbage\n", 30), strings.Repeat("rubbish;1;2\n", 20)
	size := int64(len(matchesHeader) + len(first) + len(second))
	createMatches(t, g, "bad", first+second, nil)
	if _, err := uploadMatches(g, "bad", []string{first}, 0); err != nil {
		t.Fatal(err)
	}
	g = testGateway(t, store, time.Hour, make(chan string, 1)) // a restart
	store.arm()
	if _, err := uploadMatches(g, "bad", []string{second}, size); status.Code(err) != codes.Unavailable {
		t.Fatalf("upload over a failing commit: %v, want Unavailable", err)
	}
	const want = `matches.csv: 50 of 50 records malformed (100%), more than --max-malformed 10%; first at byte 55 (field-count): "garbage\n"`
	_, err := uploadMatches(g, "bad", []string{second}, size)
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), want) {
		t.Fatalf("upload of the last bytes: %v\nwant FailedPrecondition with %s", err, want)
	}
	for when, g := range map[string]wololov1.JobServiceServer{"live": g, "after a restart": testGateway(t, store, time.Hour, make(chan string, 1))} {
		job := getJob(t, g, "bad")
		if job.State != wololov1.JobState_JOB_STATE_FAILED || job.Message != want {
			t.Fatalf("%s: job %v %q, want failed with %q", when, job.State, job.Message, want)
		}
		m := job.Matches
		if m.Rows != 50 || m.Malformed != 50 || len(m.Rejects) != 50 {
			t.Fatalf("%s: rows %d, malformed %d, %d rejects listed; want 50 of each", when, m.Rows, m.Malformed, len(m.Rejects))
		}
		at := int64(len(matchesHeader))
		for i, r := range m.Rejects {
			line := "garbage\n"
			if i >= 30 {
				line = "rubbish;1;2\n"
			}
			if r.Offset != at || r.Reason != "field-count" || string(r.Head) != line {
				t.Fatalf("%s: reject %d: %d %s %q, want %d field-count %q", when, i, r.Offset, r.Reason, r.Head, at, line)
			}
			at += int64(len(line))
		}
	}
}

// TestFewMalformedRecordsAreListed: a file with a few bad records uploads
// as usual; its job lists them once it is over, not in progress reports.
// A client's limit is kept with the job (a limit of 1 lets an all-garbage
// file through, after a restart too); a limit that is not a share is
// refused.
func TestFewMalformedRecordsAreListed(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGateway(t, store, time.Hour, make(chan string, 1))
	body := matchRows(0, 40) + "bad row\n" + matchRows(40, 80) + "a,\"b\"c,d\n" + matchRows(80, 100)
	createMatches(t, svc, "few", body, nil)
	size := int64(len(matchesHeader) + len(body))
	if off, err := uploadMatches(svc, "few", []string{body}, size); err != nil || off != size {
		t.Fatalf("upload: offset %d, %v", off, err)
	}
	job := getJob(t, svc, "few")
	if job.State == wololov1.JobState_JOB_STATE_FAILED || job.Matches.Malformed != 2 || len(job.Matches.Rejects) != 0 {
		t.Fatalf("job %v, malformed %d, %d listed in progress; want not failed, 2, 0", job.State, job.Matches.Malformed, len(job.Matches.Rejects))
	}
	g := svc.(jobService).g
	j, _ := g.jobs.lookup("", "few")
	j.fail("over for the test", time.Now(), false)
	job = getJob(t, svc, "few")
	want := []*wololov1.Reject{
		{Offset: int64(len(matchesHeader) + len(matchRows(0, 40))), Reason: "field-count", Head: []byte("bad row\n")},
		{Offset: int64(len(matchesHeader) + len(matchRows(0, 40)) + 8 + len(matchRows(40, 80))), Reason: "quoting", Head: []byte("a,\"b\"c,d\n")},
	}
	if len(job.Matches.Rejects) != 2 || !proto.Equal(job.Matches.Rejects[0], want[0]) || !proto.Equal(job.Matches.Rejects[1], want[1]) {
		t.Fatalf("rejects of the job over: %v, want %v", job.Matches.Rejects, want)
	}

	one, tooMuch := 1.0, 1.5
	createMatches(t, svc, "anything", "x\n", &one)
	req := createRequest("wrong")
	req.MaxMalformed = &tooMuch
	if _, err := svc.CreateJob(context.Background(), req); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "--max-malformed") {
		t.Fatalf("a limit of 1.5: %v, want InvalidArgument naming --max-malformed", err)
	}
	svc = testGateway(t, store, time.Hour, make(chan string, 1))
	if _, err := uploadMatches(svc, "anything", []string{"x\n"}, int64(len(matchesHeader)+2)); err != nil {
		t.Fatalf("all garbage under a limit of 1, after a restart: %v", err)
	}
	if job := getJob(t, svc, "anything"); job.State == wololov1.JobState_JOB_STATE_FAILED || job.Matches.Malformed != 1 {
		t.Fatalf("job %v %q, malformed %d; want not failed, 1", job.State, job.Message, job.Matches.Malformed)
	}
}
