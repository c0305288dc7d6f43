package stage

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// randomJournal is a state log entry as the runtime writes one: the
// batches of a group, or a snapshot alone; empty and zero fields too.
func randomJournal(rng *rand.Rand) *wololov1.Journal {
	jr := &wololov1.Journal{}
	if rng.IntN(4) == 0 {
		jr.Snapshot = randomBytes(rng, 1+rng.IntN(300))
		return jr
	}
	for range rng.IntN(4) {
		a := &wololov1.Applied{Seq: rng.Uint64() >> rng.IntN(64), Eof: rng.IntN(5) == 0}
		if rng.IntN(6) > 0 {
			a.Stream = []string{"players", "matches", "q2-grouper.out", "é"}[rng.IntN(4)]
		}
		if rng.IntN(6) > 0 {
			a.Sender = []string{"gateway-0", "shard-1", ""}[rng.IntN(3)]
		}
		if !a.Eof {
			a.Rows = randomBytes(rng, rng.IntN(200))
		}
		jr.Applied = append(jr.Applied, a)
	}
	return jr
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestReadJournalIsProtoUnmarshal: every entry proto.Marshal writes, and
// the snapshot entries snapshotEntry writes, read as proto.Unmarshal reads
// them, by the scan and not the fallback, with the rows and the snapshot
// in raw's bytes, not copied.
func TestReadJournalIsProtoUnmarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		want := randomJournal(rng)
		raw, err := proto.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Applied) == 0 && len(want.Snapshot) > 0 && i%2 == 0 {
			if raw, err = snapshotEntry(fixedSnapshot(want.Snapshot), 0); err != nil {
				t.Fatal(err)
			}
		}
		var got wololov1.Journal
		if !scanJournal(raw, &got) {
			t.Fatalf("entry %d (%x): not read by the scan", i, raw)
		}
		if !proto.Equal(&got, want) {
			t.Fatalf("entry %d: read %v, want %v", i, &got, want)
		}
		for _, a := range got.Applied {
			if len(a.Rows) > 0 && !within(a.Rows, raw) {
				t.Fatalf("entry %d: rows copied, not read in place", i)
			}
		}
		if len(got.Snapshot) > 0 && !within(got.Snapshot, raw) {
			t.Fatalf("entry %d: snapshot copied, not read in place", i)
		}
	}
}

// TestReadJournalFallsBack: an entry in a form proto.Marshal does not
// write (fields out of order, an unknown field) is read all the same,
// the long way, and one that does not decode is refused as protobuf
// refuses it.
func TestReadJournalFallsBack(t *testing.T) {
	a1, _ := proto.Marshal(&wololov1.Applied{Stream: "s", Rows: []byte{1}})
	applied := protowire.AppendBytes(protowire.AppendTag(nil, journalAppliedField, protowire.BytesType), a1)
	snap := protowire.AppendBytes(protowire.AppendTag(nil, journalSnapshotField, protowire.BytesType), []byte{9})
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 15, protowire.VarintType), 1)
	for name, raw := range map[string][]byte{
		"snapshot before applied": append(append([]byte{}, snap...), applied...),
		"an unknown field":        append(append([]byte{}, applied...), unknown...),
	} {
		var want, got wololov1.Journal
		if err := proto.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if scanJournal(raw, &got) {
			t.Fatalf("%s: the scan read a form it does not know", name)
		}
		if err := readJournal(raw, &got); err != nil || !proto.Equal(&got, &want) {
			t.Fatalf("%s: read %v (%v), want %v", name, &got, err, &want)
		}
	}
	bad := protowire.AppendVarint(protowire.AppendTag(nil, journalAppliedField, protowire.BytesType), 5) // 5 bytes said, 0 there
	var got wololov1.Journal
	if err := readJournal(bad, &got); err == nil {
		t.Fatal("a cut entry was read")
	}
}

// FuzzReadJournal: whatever bytes the store gives back, readJournal reads
// them as proto.Unmarshal does, or refuses them as it does.
func FuzzReadJournal(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		raw, _ := proto.Marshal(randomJournal(rng))
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want, got wololov1.Journal
		werr := proto.Unmarshal(raw, &want)
		gerr := readJournal(raw, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("proto.Unmarshal: %v, readJournal: %v", werr, gerr)
		}
		if werr == nil && !proto.Equal(&got, &want) {
			t.Fatalf("read %v, want %v", &got, &want)
		}
	})
}

// within reports whether b's bytes lie inside buf's.
func within(b, buf []byte) bool {
	p, lo := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(buf))
}
