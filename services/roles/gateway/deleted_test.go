package gateway

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/wire/rpc"
	"github.com/wololo/wololo/transport"
)

// TestDeletionsSurviveRestart: a job cancelled by its client or deleted
// by the operator is still said deleted, and why (ErrDeleted: what an
// attached `wololo client submit` ends on, where "no such job" has it
// submit the job again), by a gateway restarted on the same store; not
// to another client, and not once a new job took the name and is gone
// for another reason. It used to be forgotten at a restart.
func TestDeletionsSurviveRestart(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGateway(t, store, time.Hour, make(chan string, 16))
	g := svc.(jobService).g
	for _, name := range []string{"cancelled", "operated", "reused"} {
		if _, err := svc.CreateJob(as("alice"), createRequest(name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"cancelled", "reused"} {
		if _, err := svc.DeleteJob(as("alice"), &wololov1.DeleteJobRequest{JobId: name}); err != nil {
			t.Fatal(err)
		}
	}
	op, err := g.jobs.lookup("alice", "operated")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteAnyJob(op.id); err != nil {
		t.Fatal(err)
	}
	// "reused" is a new job's name now, and that job is dropped without
	// being deleted on purpose (as to make room for another).
	if _, err := svc.CreateJob(as("alice"), createRequest("reused")); err != nil {
		t.Fatal(err)
	}
	re, err := g.jobs.lookup("alice", "reused")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.jobs.drop(re.id); err != nil {
		t.Fatal(err)
	}

	restarted := testGateway(t, store, time.Hour, make(chan string, 16))
	for name, why := range map[string]string{"cancelled": "cancelled by its client", "operated": "deleted by the operator"} {
		_, err := restarted.GetJob(as("alice"), &wololov1.GetJobRequest{JobId: name})
		if want := fmt.Sprintf("job %q was %s", name, why); !rpc.IsJobDeleted(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("after a restart, alice's %s: %v; want the deletion (rpc.IsJobDeleted) saying %s", name, err, want)
		}
		if _, err := restarted.GetJob(as("bob"), &wololov1.GetJobRequest{JobId: name}); err == nil || rpc.IsJobDeleted(err) {
			t.Errorf("after a restart, bob asking after alice's %s: %v; want no such job", name, err)
		}
	}
	if _, err := restarted.GetJob(as("alice"), &wololov1.GetJobRequest{JobId: "reused"}); err == nil || rpc.IsJobDeleted(err) {
		t.Errorf("after a restart, the name of a deleted job used again by a job dropped since: %v; want no such job", err)
	}
}

// TestDeletionsRememberedAreBounded: the gateway remembers the latest
// maxDeletedNames deletions, oldest forgotten first, in as many records
// of its store, and goes on from where it was after a restart.
func TestDeletionsRememberedAreBounded(t *testing.T) {
	store := transport.NewMemStore()
	open := func() *jobs {
		js := &jobs{store: store, log: hclog.NewNullLogger(), byID: map[string]*job{}, byName: map[ownedName]*job{}}
		img, err := store.Load()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.recover(img); err != nil {
			t.Fatal(err)
		}
		if img.Jobs[DeletionsJob] != nil {
			t.Fatal("recover left the deletions' records in the image, for the runtime to take for a job")
		}
		return js
	}
	remember := func(js *jobs, i int) {
		js.mu.Lock()
		defer js.mu.Unlock()
		if err := js.rememberDeletion(ownedName{"alice", fmt.Sprint("j", i)}, "cancelled by its client"); err != nil {
			t.Fatal(err)
		}
	}
	said := func(js *jobs, i int) bool {
		_, err := js.lookup("alice", fmt.Sprint("j", i))
		return errors.Is(err, ErrDeleted)
	}
	js := open()
	for i := range maxDeletedNames + 1 {
		remember(js, i)
	}
	for _, js := range []*jobs{js, open()} {
		if said(js, 0) || !said(js, 1) || !said(js, maxDeletedNames) {
			t.Fatalf("after %d deletions: the first said deleted %v, the second %v, the last %v; want only the first forgotten", maxDeletedNames+1, said(js, 0), said(js, 1), said(js, maxDeletedNames))
		}
	}
	if img, _ := store.Load(); len(img.Jobs[DeletionsJob].Records) != maxDeletedNames {
		t.Fatalf("the store holds %d records of deletions, want %d", len(img.Jobs[DeletionsJob].Records), maxDeletedNames)
	}
	js = open()
	remember(js, maxDeletedNames+1)
	if said(js, 1) || !said(js, 2) || !said(js, maxDeletedNames+1) {
		t.Fatalf("a deletion after a restart did not forget the oldest one remembered")
	}
}
