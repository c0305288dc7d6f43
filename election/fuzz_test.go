package election

import (
	"encoding/binary"
	"testing"
)

// FuzzNode drives one master with arbitrary ticks, messages (forged ones
// included) and death confirmations, and checks that it never panics, that
// its term never goes down, that it persists a term before it sends it and
// that it acts only as a leader of a term it owns.
func FuzzNode(f *testing.F) {
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte("\x02\x02\x00\x00\x00\x00\x00\x00\x00\x07\x01\x03\x04\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x00\x00\x00\x00\x00\x0c"))
	f.Add([]byte("\x04\x03\x10\x10\x10\x10\x10\x10\x10\x10\x10\x10\x10\x10\x10\x10\x02\x05\x01\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		size := 1 + int(data[0]%5)
		peers := make([]ID, size)
		for i := range peers {
			peers[i] = ID(3*i + 1)
		}
		self := peers[int(data[1])%size]
		data = data[2:]
		take := func(k int) []byte {
			if len(data) < k {
				b := make([]byte, k)
				copy(b, data)
				data = nil
				return b
			}
			b := data[:k]
			data = data[k:]
			return b
		}
		persisted := Term(binary.BigEndian.Uint64(take(8)) % 64)
		cfg := DefaultConfig(self, peers)
		n, err := New(cfg, persisted)
		if err != nil {
			t.Fatal(err)
		}
		term := persisted
		for len(data) > 0 {
			var o Output
			op := take(1)[0]
			switch op % 4 {
			case 0, 1: // a run of ticks
				for range 1 + int(op/4)%16 {
					o = n.Tick()
					check(t, cfg, &term, o)
				}
				continue
			case 2:
				b := take(11)
				m := Message{
					Kind: Kind(b[0] % 8),
					From: peers[int(b[1])%size],
					To:   self,
					Term: Term(binary.BigEndian.Uint32(b[2:6])),
					Seq:  uint64(binary.BigEndian.Uint32(b[6:10])),
				}
				if b[10]&1 == 1 {
					m.Term %= 16 // plausible terms, so that messages are often accepted
				}
				if b[10]&2 == 2 {
					m.Seq %= 64
				}
				if b[10]&4 == 4 {
					m.To = ID(b[10]) // often misaddressed
				}
				o = n.Receive(m)
			case 3:
				o = n.ConfirmDead(ID(take(1)[0] % 16))
			}
			check(t, cfg, &term, o)
		}
	})
}

func check(t *testing.T, cfg Config, term *Term, o Output) {
	t.Helper()
	if o.Persist != nil {
		if *o.Persist < *term {
			t.Fatalf("persisted term went down: %d after %d", *o.Persist, *term)
		}
		*term = *o.Persist
	}
	if o.Term != *term {
		t.Fatalf("term %d, persisted %d", o.Term, *term)
	}
	if o.Acting && o.Role != RoleLeader {
		t.Fatalf("acts as a %s", o.Role)
	}
	if o.Role == RoleLeader && (o.Leader != cfg.Self || cfg.Owner(o.Term) != cfg.Self) {
		t.Fatalf("leads term %d owned by %d: %+v", o.Term, cfg.Owner(o.Term), o.State)
	}
	for _, m := range o.Send {
		if m.From != cfg.Self || m.To == cfg.Self || m.Term > *term || m.Kind == KindUnspecified || m.Kind > KindHeartbeatAck {
			t.Fatalf("bad message %v (term %d)", m, *term)
		}
	}
}
