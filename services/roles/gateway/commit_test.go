package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// failingStore is a MemStore whose next commit with outputs fails once
// armed (any next commit with all): what a full disk or an I/O error does
// to one upload step.
type failingStore struct {
	*transport.MemStore
	mu    sync.Mutex
	armed bool
	all   bool
}

func (s *failingStore) Commit(c *transport.Commit) error {
	s.mu.Lock()
	fail := s.armed && (len(c.Outputs) > 0 || s.all)
	if fail {
		s.armed = false
	}
	s.mu.Unlock()
	if fail {
		return errors.New("injected commit failure")
	}
	return s.MemStore.Commit(c)
}

func (s *failingStore) arm() {
	s.mu.Lock()
	s.armed = true
	s.mu.Unlock()
}

// fakeUpload is the server side of one Upload call, fed from a slice.
type fakeUpload struct {
	grpc.ServerStream
	ctx  context.Context
	in   []*wololov1.UploadRequest
	sent []*wololov1.UploadResponse
}

func (s *fakeUpload) Context() context.Context { return s.ctx }

func (s *fakeUpload) Recv() (*wololov1.UploadRequest, error) {
	if len(s.in) == 0 {
		return nil, io.EOF
	}
	r := s.in[0]
	s.in = s.in[1:]
	return r, nil
}

func (s *fakeUpload) Send(r *wololov1.UploadResponse) error {
	s.sent = append(s.sent, r)
	return nil
}

// upload sends chunks of the matches file of job id, from its current
// offset on, and reports the offset the gateway last acknowledged.
func uploadMatches(g wololov1.JobServiceServer, id string, chunks []string, finish int64) (int64, error) {
	frames := []*wololov1.UploadRequest{{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: id, File: wololov1.InputFile_INPUT_FILE_MATCHES}}}}
	for _, c := range chunks {
		frames = append(frames, &wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: []byte(c)}})
	}
	if finish > 0 {
		frames = append(frames, &wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: finish}}})
	}
	s := &fakeUpload{ctx: context.Background(), in: frames}
	err := g.Upload(s)
	var off int64
	if n := len(s.sent); n > 0 {
		off = s.sent[n-1].Offset
	}
	return off, err
}

func matchRows(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "tok%04d,RM_1v1,False,1200,arena,ukwest,0:20:00\n", i)
	}
	return b.String()
}

// TestFailedUploadCommitLeavesNoSequenceGap: an upload step whose commit
// fails must give its sequence numbers back. The client resumes from the
// last acknowledged offset, and the batches committed then must follow the
// ones committed before without a gap, or the receiver refuses them forever.
func TestFailedUploadCommitLeavesNoSequenceGap(t *testing.T) {
	store := &failingStore{MemStore: transport.NewMemStore()}
	g := testGateway(t, store, time.Hour, make(chan string, 1))
	header := "token,ladder,mirror,average_rating,map,server,duration\n"
	req := createRequest("j1")
	req.Matches.DataOffset = int64(len(header))
	req.Matches.Size = int64(len(header) + 2*len(matchRows(0, 50)))
	if _, err := g.CreateJob(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	first, second := matchRows(0, 50), matchRows(50, 100)

	off, err := uploadMatches(g, "j1", []string{first}, 0)
	if err != nil || off != int64(len(header)+len(first)) {
		t.Fatalf("first chunk: offset %d, %v", off, err)
	}
	store.arm()
	_, err = uploadMatches(g, "j1", []string{second}, 0)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("upload over a failing commit: %v, want Unavailable", err)
	}
	// The client resumes from the acknowledged offset.
	size := int64(len(header) + len(first) + len(second))
	if off, err := uploadMatches(g, "j1", []string{second}, size); err != nil || off != size {
		t.Fatalf("resumed upload: offset %d, %v", off, err)
	}

	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(img.Jobs) != 1 {
		t.Fatalf("the store holds %d jobs, want 1", len(img.Jobs))
	}
	var ji *transport.JobImage
	for _, j := range img.Jobs { // the job's internal id is its own
		ji = j
	}
	if len(ji.Outbox) == 0 {
		t.Fatal("nothing committed to the outbox")
	}
	for ch, entries := range ji.Outbox {
		for i, e := range entries {
			if e.Seq != uint64(i+1) {
				t.Fatalf("%s: entry %d has seq %d: the failed commit left a gap", ch, i, e.Seq)
			}
		}
		if last := entries[len(entries)-1]; !last.EOF {
			t.Errorf("%s: last entry %d is not the EOF", ch, last.Seq)
		}
	}
}
