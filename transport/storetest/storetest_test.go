package storetest_test

import (
	"errors"
	"syscall"
	"testing"

	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
	"github.com/wololo/wololo/transport/transporttest"
)

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(*testing.T, string) transport.Store { return transport.NewMemStore() })
}

// A FailStop passes every call through while nothing failed, reads
// (ReadOutbox among them) also after.
func TestFailStop(t *testing.T) {
	storetest.Run(t, func(*testing.T, string) transport.Store { return transport.NewFailStop(transport.NewMemStore()) })
}

// An Acknowledge is a write like the others: on a full disk it fails the
// FailStop, and after a failure it is refused without reaching the store;
// ReadOutbox still reads what the store holds.
func TestFailStopAcknowledge(t *testing.T) {
	ch := storetest.Ch("j", "s", "a", "b")
	for _, first := range []string{"acknowledge", "commit"} {
		t.Run(first+" fails first", func(t *testing.T) {
			mem := transport.NewMemStore()
			full := &transporttest.FailingStore{Store: mem, After: 1, Err: syscall.ENOSPC}
			fs := transport.NewFailStop(full)
			if err := fs.Commit(&transport.Commit{Job: "j", Outputs: []transport.Entry{storetest.E(ch, 1, false, "a"), storetest.E(ch, 2, true, "b")}}); err != nil {
				t.Fatal(err)
			}
			var err error
			if first == "acknowledge" {
				err = fs.Acknowledge(ch, 1)
			} else {
				err = fs.Commit(&transport.Commit{Job: "j"})
			}
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("%s on a full disk: %v", first, err)
			}
			select {
			case <-fs.Failed():
			default:
				t.Fatalf("Failed not closed after a failed %s", first)
			}
			full.Free()
			if err := fs.Acknowledge(ch, 2); !errors.Is(err, transport.ErrStoreFailed) {
				t.Fatalf("acknowledge after the failure: %v, want ErrStoreFailed", err)
			}
			img, err := mem.Load()
			if err != nil {
				t.Fatal(err)
			}
			if j := img.Jobs["j"]; j.Acked[ch] != 0 || len(j.Outbox[ch]) != 2 {
				t.Fatalf("a refused acknowledge reached the store: acked %d, %d entries loaded", j.Acked[ch], len(j.Outbox[ch]))
			}
			if got := storetest.ReadOutbox(t, fs, ch, 2); len(got) != 1 || got[0].Seq != 2 || !got[0].EOF {
				t.Fatalf("ReadOutbox after the failure: %+v", got)
			}
		})
	}
}
