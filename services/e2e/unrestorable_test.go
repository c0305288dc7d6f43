package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/transport"
)

// unreadableState is a store whose state log of one job ends with an
// entry this build cannot replay: a snapshot no operator can restore, as
// a store written by a build with another state format would.
type unreadableState struct {
	transport.Store
	job string
}

func (s unreadableState) ReadState(job string, each func([]byte) error) error {
	if err := s.Store.ReadState(job, each); err != nil || job != s.job {
		return err
	}
	bad, err := proto.Marshal(&wololov1.Journal{Snapshot: []byte{0xff, 0xff, 0xff}})
	if err != nil {
		return err
	}
	return each(bad)
}

// TestUnrestorableStateFailsTheJob: shard-0 restarts mid-job on a store
// whose state for the job does not replay. It does not crash-loop, and it
// does not start the job afresh: it serves, and the job fails within
// seconds with the reason, which its client sees.
func TestUnrestorableStateFailsTheJob(t *testing.T) {
	d := testDatasets(t)[2]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 4})
	const victim, job = "shard-0", "unrestorable"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	submitted := submitInBackground(ctx, t, c, d, t.TempDir(), job)
	// Until shard-0 holds state of the job (under the job's id).
	id := ""
	for id == "" {
		select {
		case err := <-submitted:
			t.Fatalf("the job ended (%v) before shard-0 held any of its state", err)
		case <-time.After(time.Millisecond):
		}
		img, err := transport.LoadAll(c.Store(victim))
		if err != nil {
			t.Fatal(err)
		}
		for jid, ji := range img.Jobs {
			if len(ji.State) > 0 {
				id = jid
			}
		}
	}
	c.SetStore(victim, unreadableState{Store: c.Store(victim), job: id})
	if err := c.Restart(victim); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-submitted:
	case <-time.After(30 * time.Second):
		t.Fatal("the job neither failed nor ended within 30 s of the restart")
	}
	if err == nil || !strings.Contains(err.Error(), "failed") || !strings.Contains(err.Error(), "cannot restore the state of job") {
		t.Fatalf("submit after the restart: %v; want the job failed with the reason", err)
	}
	select {
	case <-c.Exited(victim):
		t.Fatalf("%s exited: %v", victim, c.Err(victim))
	default:
	}
	t.Logf("the job failed: %v", err)
}
