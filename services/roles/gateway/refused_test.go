package gateway

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// logLines is an hclog output that tests can read while the gateway
// writes to it.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// storedJobs are the ids of the jobs the store holds records of.
func storedJobs(t *testing.T, store transport.Store) []string {
	t.Helper()
	img, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(img.Jobs))
}

// unrunnable are jobs of queries that the SQL engine compiles and plans
// but that the graph could never run: a plan nested deeper than a plan is
// read back (physical.Decode, which a restarted gateway and every process
// do), a channel whose stream name the transport refuses (longer than
// transport.MaxNameLen), two channels on one stream (sqlops.StageSpec,
// which a process runs when the job is introduced to it).
var unrunnable = map[string][]*wololov1.Query{
	"a plan too deep to read back": {{Name: "deep", Sql: "SELECT civ FROM match_players WHERE " + strings.Repeat("NOT ", 5000) + "civ = 'x'"}},
	"a stream name too long":       {{Name: "long", Sql: "SELECT civ = '" + strings.Repeat("x", 150) + "' AS k, COUNT(*) AS n FROM match_players GROUP BY civ = '" + strings.Repeat("x", 150) + "'"}},
	"two channels on one stream": {
		{Name: "a", Sql: "SELECT civ = 'a.b' AS k, COUNT(*) AS n FROM match_players GROUP BY civ = 'a.b'"},
		{Name: "b", Sql: "SELECT civ = 'a,b' AS k, COUNT(*) AS n FROM match_players GROUP BY civ = 'a,b'"},
	},
}

// TestRefusedCreateJobStoresNothing: a CreateJob of queries whose plan
// the graph would refuse is refused (InvalidArgument) and leaves nothing
// in the store, however often it is called (before, each call left its
// job's description, for ever, or created a job that no process would
// take), and a gateway restarted over that store has nothing to complain
// about.
func TestRefusedCreateJobStoresNothing(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGateway(t, store, time.Hour, make(chan string, 1))
	if _, err := svc.CreateJob(context.Background(), createRequest("kept")); err != nil {
		t.Fatal(err)
	}
	before := storedJobs(t, store)
	for _, why := range slices.Sorted(maps.Keys(unrunnable)) {
		for i := range 10 {
			_, err := svc.CreateJob(context.Background(), queryRequest(fmt.Sprintf("refused-%d", i), unrunnable[why]...))
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("CreateJob %d of %s: %v; want InvalidArgument", i, why, err)
			}
		}
		if after := storedJobs(t, store); !slices.Equal(after, before) {
			t.Fatalf("the store holds jobs %v after the refused CreateJobs of %s, %v before", after, why, before)
		}
	}
	list, err := svc.ListJobs(context.Background(), &wololov1.ListJobsRequest{})
	if err != nil || len(list.Jobs) != 1 || list.Jobs[0].Name != "kept" {
		t.Fatalf("ListJobs: %v %v; want only job kept", list, err)
	}

	var errs logLines
	cfg := Config{Retention: time.Hour, Log: hclog.New(&hclog.LoggerOptions{Output: &errs, Level: hclog.Error})}
	restarted := testGatewayWith(t, store, cfg, make(chan string, 1))
	if _, err := restarted.GetJob(context.Background(), &wololov1.GetJobRequest{JobId: "kept"}); err != nil {
		t.Fatalf("the job created before, after a restart: %v", err)
	}
	if s := errs.String(); s != "" {
		t.Fatalf("the restarted gateway logged errors:\n%s", s)
	}
}
