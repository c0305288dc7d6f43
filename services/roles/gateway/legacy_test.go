package gateway

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// TestRecoversJSONRecordsOfOlderBuilds: a store written before the records
// moved to protobuf still gives its jobs back, with their upload progress.
func TestRecoversJSONRecordsOfOlderBuilds(t *testing.T) {
	store := transport.NewMemStore()
	// The bytes an older gateway wrote (encoding/json of its structs).
	meta := `{"created_unix_ms":1764000000000,"files":[{"columns":["token","ladder","mirror","average_rating","map","server","duration"],"size":500,"data_offset":55},{"columns":["match","rating","civ","winner"],"size":300,"data_offset":25}]}`
	upload := `{"offset":420,"done":false,"report":{"Rows":7,"Malformed":1,"Missing":{"duration":2}}}`
	if err := store.Commit(&transport.Commit{Job: "old", Records: map[string][]byte{recordMeta: []byte(meta), "upload/matches.csv": []byte(upload)}}); err != nil {
		t.Fatal(err)
	}
	svc := testGateway(t, store, time.Hour, make(chan string, 1))
	// Written before owners: the job is the anonymous client's, no one
	// else's.
	if _, err := svc.GetJob(as("alice"), &wololov1.GetJobRequest{JobId: "old"}); status.Code(err) != codes.NotFound {
		t.Fatalf("a named client sees a job written before owners: %v", err)
	}
	r, err := svc.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "old"})
	if err != nil {
		t.Fatalf("a job with JSON records was not recovered: %v", err)
	}
	m, p := r.Job.Matches, r.Job.Players
	if m.Offset != 420 || m.Rows != 7 || m.Malformed != 1 || m.Missing["duration"] != 2 || m.Size != 500 || p.Offset != 25 || p.Size != 300 {
		t.Fatalf("recovered %+v / %+v", m, p)
	}
}
