package durable

import (
	"testing"

	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/segstore"
	"github.com/wololo/wololo/transport/storetest"
)

// The segment store (transport/segstore) is meant to replace this one:
// for the same calls both must Load the same image and read the same
// outboxes with ReadOutbox (the entries Load leaves out too), also where both
// differ from MemStore (an entry committed twice under one seq is kept
// once, the later; entries committed out of order come back in seq
// order), and after a reopen. segstore runs with 1 KiB segments, so that
// its compaction is part of what is compared.
func TestSameImageAsSegstore(t *testing.T) {
	ch := storetest.Ch("j", "s", "a", "b")
	quirks := []storetest.Op{
		{Commit: &transport.Commit{Job: "j", Outputs: []transport.Entry{storetest.E(ch, 5, false, "five"), storetest.E(ch, 3, false, "three")}}},
		{Commit: &transport.Commit{Job: "j", Outputs: []transport.Entry{storetest.E(ch, 3, true, "three again"), storetest.E(ch, 4, false, "")}}},
		{Trim: &storetest.TrimOp{Ch: ch, Seq: 3}},
		{Commit: &transport.Commit{Job: "j", Outputs: []transport.Entry{storetest.E(ch, 2, false, "below acked")}}},
	}
	for name, ops := range map[string][]storetest.Op{
		"quirks":    quirks,
		"random 1":  storetest.RandomOps(1, 400),
		"random 2":  storetest.RandomOps(2, 400),
		"random 33": storetest.RandomOps(33, 400),
	} {
		t.Run(name, func(t *testing.T) {
			pdir, sdir := t.TempDir(), t.TempDir()
			p := openTest(t, pdir)
			sopts := segstore.Options{SegmentSize: 1 << 10, IdleAfter: -1}
			s, err := segstore.Open(sdir, sopts)
			if err != nil {
				t.Fatal(err)
			}
			for i, op := range ops {
				storetest.Apply(t, p, []storetest.Op{op})
				storetest.Apply(t, s, []storetest.Op{op})
				if i%50 == 49 || i == len(ops)-1 {
					want, err := transport.LoadAll(p)
					if err != nil {
						t.Fatal(err)
					}
					storetest.CheckLoad(t, s, want)
					storetest.CheckOutboxes(t, s, p)
				}
			}
			want, _ := transport.LoadAll(p)
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if s, err = segstore.Open(sdir, sopts); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			storetest.CheckLoad(t, s, want)
			p = openTest(t, pdir)
			defer p.Close()
			storetest.CheckOutboxes(t, s, p)
		})
	}
}
