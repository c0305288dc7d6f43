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
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
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
// do).
var unrunnable = map[string][]*wololov1.Query{
	"a plan too deep to read back": {{Name: "deep", Sql: "SELECT civ FROM match_players WHERE " + strings.Repeat("NOT ", 5000) + "civ = 'x'"}},
}

// onceRefused are jobs of queries that CreateJob refused before channels'
// streams were numbered (issue 38), and that run now: a channel named by
// a key longer than a stream's name may be (transport.MaxNameLen), two
// channels whose names were written as one stream name ('a.b', 'a,b').
var onceRefused = map[string][]*wololov1.Query{
	"a key longer than a stream name": {{Name: "long", Sql: "SELECT civ = '" + strings.Repeat("x", 150) + "' AS k, COUNT(*) AS n FROM match_players GROUP BY civ = '" + strings.Repeat("x", 150) + "'"}},
	"two keys alike as stream names": {
		{Name: "a", Sql: "SELECT civ = 'a.b' AS k, COUNT(*) AS n FROM match_players GROUP BY civ = 'a.b'"},
		{Name: "b", Sql: "SELECT civ = 'a,b' AS k, COUNT(*) AS n FROM match_players GROUP BY civ = 'a,b'"},
	},
}

// TestLongKeysAreCreated: a job whose queries' keys make channel names
// longer than a stream's name may be, or alike as stream names, is
// created, and every stream of its stored plan is within
// transport.MaxNameLen and its own.
func TestLongKeysAreCreated(t *testing.T) {
	svc := testGateway(t, transport.NewMemStore(), time.Hour, make(chan string, 1))
	if sqlops.MaxStreamLen > transport.MaxNameLen {
		t.Fatalf("sqlops.MaxStreamLen %d, more than the transport takes (%d)", sqlops.MaxStreamLen, transport.MaxNameLen)
	}
	for i, why := range slices.Sorted(maps.Keys(onceRefused)) {
		name := fmt.Sprintf("long-%d", i)
		if _, err := svc.CreateJob(context.Background(), queryRequest(name, onceRefused[why]...)); err != nil {
			t.Fatalf("CreateJob of %s: %v", why, err)
		}
		g := svc.(jobService).g
		enc, ok := g.PlanOf(internalID(t, g, name))
		if !ok {
			t.Fatalf("%s: no plan", why)
		}
		p, err := physical.Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for i, c := range p.Channels {
			s := sqlops.ChannelStream(i, c.Name)
			if len(s) > transport.MaxNameLen || seen[s] {
				t.Errorf("%s: channel %.60q has stream %q (%d bytes; taken before: %v)", why, c.Name, s, len(s), seen[s])
			}
			seen[s] = true
		}
	}
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
