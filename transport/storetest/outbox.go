package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/wololo/wololo/transport"
)

// AckedOutbox is a channel that CommitAcked committed to, acknowledged
// most of and trimmed the start of, and what a store must read of it.
type AckedOutbox struct {
	Ch    transport.ChannelID
	Acked uint64            // the channel's acked mark
	Want  []transport.Entry // its untrimmed entries, in seq order (rows copied)
}

// The shape of CommitAcked's channel.
const (
	ackedEntries = 120
	ackedTrimmed = 20 // trimmed after the acknowledgements
	ackedBehind  = 5  // every tenth commit acknowledges up to this many behind
)

// ackedRows are the rows of CommitAcked's entry seq: none (every
// seventh), some KiB (every fifth) or a few bytes, each telling its seq.
func ackedRows(seq int) []byte {
	tag := fmt.Appendf(nil, "entry %d;", seq)
	switch {
	case seq%7 == 0:
		return nil
	case seq%5 == 0:
		return bytes.Repeat(tag, 3000/len(tag))
	default:
		return tag
	}
}

// CommitAcked commits ackedEntries entries to one channel of s, with rows
// of every size, the last one EOF, each commit with an entry of a second
// channel that is trimmed at once and a state entry (the log reset every
// tenth commit), so that a store on small segments rotates and compacts
// as it goes. Every tenth commit acknowledges the channel up to
// ackedBehind entries before it; at the end a lower acknowledgement
// changes nothing and a trim drops the first ackedTrimmed entries. A
// second job, its entries acknowledged, is dropped.
func CommitAcked(t testing.TB, s transport.Store) AckedOutbox {
	t.Helper()
	a := AckedOutbox{Ch: Ch("acked", "out", "me", "you")}
	churn := Ch("acked", "churn", "me", "you")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for seq := 1; seq <= ackedEntries; seq++ {
		e := transport.Entry{Channel: a.Ch, Seq: uint64(seq), EOF: seq == ackedEntries, Rows: ackedRows(seq), Count: 1}
		must(s.Commit(&transport.Commit{Job: "acked",
			Outputs: []transport.Entry{e, {Channel: churn, Seq: uint64(seq), Rows: bytes.Repeat([]byte("c"), 1000)}},
			State:   fmt.Appendf(nil, "state %d", seq), ResetState: seq%10 == 0}))
		must(s.Trim(churn, uint64(seq)))
		if seq%10 == 0 {
			a.Acked = uint64(seq - ackedBehind)
			must(s.Acknowledge(a.Ch, a.Acked))
		}
		if seq > ackedTrimmed {
			e.Rows = bytes.Clone(e.Rows) // the store may keep the committed ones
			a.Want = append(a.Want, e)
		}
	}
	must(s.Acknowledge(a.Ch, a.Acked/2))
	must(s.Trim(a.Ch, ackedTrimmed))

	dropped := Ch("acked-dropped", "out", "me", "you")
	must(s.Commit(&transport.Commit{Job: "acked-dropped", Outputs: []transport.Entry{E(dropped, 1, false, "a"), E(dropped, 2, true, "b")}}))
	must(s.Acknowledge(dropped, 2))
	must(s.DropJob("acked-dropped"))
	return a
}

// Check checks what s reads of the channel: ReadOutbox from its start,
// from the middle of the acknowledged entries and from the first one
// above the mark reads the untrimmed entries from there, acknowledged or
// not, rows and EOF intact; from beyond the last nothing. Load returns
// only the entries above the mark. An error of each stops the reading
// and is returned as is. The rows handed over are the caller's: kept
// without a copy they still hold theirs once the reading is over,
// appending to one (writing its capacity past its end) changes none of
// the others, and writing over them changes nothing the store holds. A
// channel or a job the store does not hold, a dropped one included, has
// no entries.
func (a AckedOutbox) Check(t testing.TB, s transport.Store) {
	t.Helper()
	from := func(seq uint64) []transport.Entry {
		i := 0
		for i < len(a.Want) && a.Want[i].Seq < seq {
			i++
		}
		return a.Want[i:]
	}
	for _, seq := range []uint64{0, 1, ackedTrimmed + 1, 70, a.Acked, a.Acked + 1, ackedEntries, ackedEntries + 1, math.MaxUint64} {
		if d := entriesDiff(ReadOutbox(t, s, a.Ch, seq), from(seq)); d != "" {
			t.Fatalf("ReadOutbox of %s from %d: %s", a.Ch, seq, d)
		}
	}

	img, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	j := img.Jobs[a.Ch.Job]
	if j == nil {
		t.Fatalf("job %s missing", a.Ch.Job)
	}
	if j.Acked[a.Ch] != a.Acked || j.Reserved[a.Ch] != ackedEntries {
		t.Fatalf("Load: acked %d, reserved %d; want %d and %d", j.Acked[a.Ch], j.Reserved[a.Ch], a.Acked, ackedEntries)
	}
	if d := entriesDiff(j.Outbox[a.Ch], from(a.Acked+1)); d != "" {
		t.Fatalf("Load's outbox of %s: %s", a.Ch, d)
	}

	stop := errors.New("stop")
	for _, n := range []int{1, 3} {
		calls := 0
		err := s.ReadOutbox(a.Ch, 50, func(transport.Entry) error {
			if calls++; calls == n {
				return stop
			}
			return nil
		})
		if err != stop || calls != n {
			t.Fatalf("each failing at call %d: %d calls, ReadOutbox returned %v; want the error as is", n, calls, err)
		}
	}

	var kept []transport.Entry
	if err := s.ReadOutbox(a.Ch, 1, func(e transport.Entry) error {
		kept = append(kept, e)
		room := e.Rows[len(e.Rows):cap(e.Rows)] // where an append to the rows writes
		for i := range room {
			room[i] = 0xee
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if d := entriesDiff(kept, a.Want); d != "" {
		t.Fatalf("the entries kept from a read: %s", d)
	}
	for _, e := range kept {
		for i := range e.Rows {
			e.Rows[i] = 0xff
		}
	}
	if d := entriesDiff(ReadOutbox(t, s, a.Ch, 1), a.Want); d != "" {
		t.Fatalf("a second read, after the first one's rows were written over: %s", d)
	}

	for _, ch := range []transport.ChannelID{
		Ch(a.Ch.Job, "none", "me", "you"), Ch("never", "out", "me", "you"), Ch("acked-dropped", "out", "me", "you"),
	} {
		if err := s.ReadOutbox(ch, 1, func(e transport.Entry) error { return fmt.Errorf("entry %d", e.Seq) }); err != nil {
			t.Fatalf("%s: %v, want no entries", ch, err)
		}
	}
}
