package gateway

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/transport"
)

// countersLog records what the gateway counted, one line per count.
type countersLog struct {
	mu    sync.Mutex
	lines []string
}

func (c *countersLog) add(format string, a ...any) {
	c.mu.Lock()
	c.lines = append(c.lines, fmt.Sprintf(format, a...))
	c.mu.Unlock()
}

func (c *countersLog) JobCreated()             { c.add("created") }
func (c *countersLog) JobEnded(outcome string) { c.add("ended %s", outcome) }
func (c *countersLog) Upload(file, outcome string) {
	c.add("upload %s %s", file, outcome)
}
func (c *countersLog) Committed(file string, bytes, records, malformed int64) {
	c.add("committed %s bytes=%d records=%d malformed=%d", file, bytes, records, malformed)
}

func (c *countersLog) take() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.Join(c.lines, "\n")
	c.lines = nil
	return s
}

// TestCountersCountUploadsRowsAndOutcomes: the gateway counts each new
// job once (a resume is not new), each upload call that took its file's
// slot by how it ended, the bytes, records and malformed records each
// commit added, and each job's end once: done, failed, or deleted before
// either. A deletion of a job that was over, a second result or failure,
// and a restart that recovers the jobs count nothing.
func TestCountersCountUploadsRowsAndOutcomes(t *testing.T) {
	store := transport.NewMemStore()
	counts := &countersLog{}
	svc := testGatewayWith(t, store, Config{Retention: time.Hour, Counters: counts}, make(chan string, 8))
	g := svc.(jobService).g
	ctx := context.Background()
	head := "token,ladder,mirror,average_rating,map,server,duration\n"
	first, bad, second := matchRows(0, 10), "only,three,fields\n", matchRows(10, 20)
	size := int64(len(head) + len(first) + len(bad) + len(second))
	for _, name := range []string{"done", "lost", "cancelled"} {
		req := createRequest(name)
		req.Matches.DataOffset, req.Matches.Size = int64(len(head)), size
		if _, err := svc.CreateJob(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	req := createRequest("done")
	req.Matches.DataOffset, req.Matches.Size = int64(len(head)), size
	if _, err := svc.CreateJob(ctx, req); err != nil { // a resume
		t.Fatal(err)
	}
	if got, want := counts.take(), "created\ncreated\ncreated"; got != want {
		t.Errorf("creating three jobs and resuming one counted\n%s\nwant\n%s", got, want)
	}

	if _, err := uploadMatches(svc, "cancelled", []string{first, bad}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := uploadMatches(svc, "cancelled", []string{second}, size); err != nil {
		t.Fatal(err)
	}
	if _, err := uploadMatches(svc, "done", []string{first + bad + second + "x"}, 0); err == nil {
		t.Fatal("an upload past the declared size was taken")
	}
	file := schema.Matches.String()
	want := strings.Join([]string{
		fmt.Sprintf("committed %s bytes=%d records=11 malformed=1", file, len(first)+len(bad)),
		"upload " + file + " paused",
		fmt.Sprintf("committed %s bytes=%d records=10 malformed=0", file, len(second)),
		"upload " + file + " complete",
		"upload " + file + " broken",
	}, "\n")
	if got := counts.take(); got != want {
		t.Errorf("uploads counted\n%s\nwant\n%s", got, want)
	}

	id := func(name string) string { return internalID(t, g, name) }
	results := headerOnlyResults()
	g.Finished(id("done"), results)
	g.Finished(id("done"), results) // again: no second end
	for _, name := range []string{"lost", "done"} {
		if err := g.FailJob(transport.JobFailure{Job: id(name), Reporter: "shard-0", Reason: "state lost", StateLost: true}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"cancelled", "done", "lost"} {
		if _, err := svc.DeleteJob(ctx, &wololov1.DeleteJobRequest{JobId: name}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := counts.take(), "ended done\nended failed\nended deleted"; got != want {
		t.Errorf("job ends counted\n%s\nwant\n%s", got, want)
	}

	restarted := &countersLog{}
	svc = testGatewayWith(t, store, Config{Retention: time.Hour, Counters: restarted}, make(chan string, 8))
	if _, err := svc.CreateJob(ctx, createRequest("after")); err != nil {
		t.Fatal(err)
	}
	if got := restarted.take(); got != "created" {
		t.Errorf("a restart counted\n%s\nwant only the new job", got)
	}
}
