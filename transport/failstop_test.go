package transport_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/transporttest"
)

// TestFailStop: the first failed write closes Failed and is kept; every
// later write is refused without reaching the store, naming the first.
func TestFailStop(t *testing.T) {
	mem := transport.NewMemStore()
	fs := transport.NewFailStop(&transporttest.FailingStore{Store: mem, After: 2, Err: syscall.ENOSPC})
	ch := transport.ChannelID{Job: "j", Stream: "s", Sender: "a-0", Receiver: "b-0"}
	commit := func(seq uint64) error {
		return fs.Commit(&transport.Commit{Job: "j", Inputs: map[transport.ChannelID]uint64{ch: seq}})
	}
	for seq := uint64(1); seq <= 2; seq++ {
		if err := commit(seq); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-fs.Failed():
		t.Fatal("failed before any write failed")
	default:
	}
	if fs.Err() != nil {
		t.Fatalf("Err = %v before any failure", fs.Err())
	}
	if err := commit(3); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("third commit: %v, want the disk's error", err)
	}
	select {
	case <-fs.Failed():
	default:
		t.Fatal("Failed not closed after a failed commit")
	}
	if !errors.Is(fs.Err(), syscall.ENOSPC) {
		t.Fatalf("Err = %v", fs.Err())
	}
	before := mem.Stats().Commits
	for name, err := range map[string]error{
		"commit": commit(4), "trim": fs.Trim(ch, 1), "drop": fs.DropJob("j"),
	} {
		if !errors.Is(err, transport.ErrStoreFailed) || !strings.Contains(err.Error(), syscall.ENOSPC.Error()) {
			t.Errorf("%s after the failure: %v, want ErrStoreFailed naming the first error", name, err)
		}
	}
	if _, err := fs.NextIncarnation(0); !errors.Is(err, transport.ErrStoreFailed) {
		t.Errorf("incarnation after the failure: %v", err)
	}
	if mem.Stats().Commits != before || mem.Watermark(ch) != 2 {
		t.Errorf("a refused write reached the store: %d commits, watermark %d", mem.Stats().Commits, mem.Watermark(ch))
	}
	if _, err := fs.Load(); err != nil {
		t.Errorf("Load after the failure: %v", err)
	}
}
