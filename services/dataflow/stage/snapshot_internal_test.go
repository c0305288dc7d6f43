package stage

import (
	"bytes"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"google.golang.org/protobuf/proto"
)

// fixedSnapshot is a Snapshotter whose state is given bytes.
type fixedSnapshot []byte

func (f fixedSnapshot) AppendSnapshot(dst []byte) ([]byte, error) { return append(dst, f...), nil }
func (f fixedSnapshot) Restore([]byte) error                      { return nil }

// TestSnapshotEntryIsTheJournalEncoding: the state log entry built around
// a snapshot in place is byte for byte what proto.Marshal gives the
// Journal, for states whose length takes one to four varint bytes, and
// whatever the previous snapshot's size (the buffer's guess).
func TestSnapshotEntryIsTheJournalEncoding(t *testing.T) {
	for _, n := range []int{1, 127, 128, 16383, 16384, 1 << 21, 3<<20 + 7} {
		state := bytes.Repeat([]byte{0xa5}, n)
		state[0], state[n-1] = 1, 2
		want, err := proto.Marshal(&wololov1.Journal{Snapshot: state})
		if err != nil {
			t.Fatal(err)
		}
		for _, last := range []int{0, n / 2, 4 * n} {
			got, err := snapshotEntry(fixedSnapshot(state), last)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("state of %d bytes (last %d): entry differs from proto.Marshal's", n, last)
			}
			var back wololov1.Journal
			if err := proto.Unmarshal(got, &back); err != nil || !bytes.Equal(back.Snapshot, state) {
				t.Fatalf("state of %d bytes does not read back: %v", n, err)
			}
		}
	}
}
