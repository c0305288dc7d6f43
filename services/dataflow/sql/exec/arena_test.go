package exec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// TestKeyArena: keys of every length (none, a few bytes, one that just
// fits the room left in a block, one of exactly a block, longer than a
// block) come back from where the key before ends and where each ends
// alone, whole and unchanged by the keys added after them; the blocks
// past the first are a block each but a long key's, and no key crosses
// the end of a block.
func TestKeyArena(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 42))
	lengths := []int{0, 3, 0, arenaBlock - 3, 1, arenaBlock, 5, 2*arenaBlock + 7, 0, 9, arenaBlock - 9, arenaBlock - 9}
	for range 5000 {
		lengths = append(lengths, rng.IntN(400))
	}
	lengths = append(lengths, 3*arenaBlock, 1, arenaBlock+1, arenaBlock-1)
	var a keyArena
	var keys [][]byte
	var ends []uint32
	for k, n := range lengths {
		key := make([]byte, n)
		for i := range key {
			key[i] = byte(k + i)
		}
		b := a.add(n)
		if len(b) != n {
			t.Fatalf("key %d: %d bytes to write, want %d", k, len(b), n)
		}
		copy(b, key)
		keys, ends = append(keys, key), append(ends, a.end)
	}
	var blocks int64
	for i, b := range a.blocks {
		if b != nil && i > 0 && cap(b) < arenaBlock {
			t.Errorf("block %d of %d bytes", i, cap(b))
		}
		blocks += int64(cap(b))
	}
	if blocks != a.bytes() {
		t.Errorf("bytes %d, the blocks' %d", a.bytes(), blocks)
	}
	prev := uint32(0)
	for k, end := range ends {
		n, from := len(keys[k]), keyStart(prev, end)
		if n > 0 && n <= arenaBlock && from/arenaBlock != (end-1)/arenaBlock {
			t.Errorf("key %d of %d bytes crosses a block's end: [%d, %d)", k, n, from, end)
		}
		if got := a.key(prev, end); !bytes.Equal(got, keys[k]) {
			t.Fatalf("key %d (%d bytes, ends at %d after %d): read %d bytes, not the key", k, n, end, prev, len(got))
		}
		want := byte(0) // a long key's last byte is in no block: not read
		if n > 0 && n <= arenaBlock {
			want = keys[k][n-1]
		}
		if got := a.lastByte(end); n > 0 && got != want { // an empty key's is the key before's
			t.Errorf("key %d: last byte %d, want %d", k, got, want)
		}
		prev = end
	}
}

// TestKeyTableKeysAcrossBlocks: a table of more keys than a block holds
// finds each at its slot, its bytes whole, before and after its index
// grows, and writes the same state as a table given the keys again.
func TestKeyTableKeysAcrossBlocks(t *testing.T) {
	tab := NewKeyTable()
	key := func(i int) []byte { return fmt.Appendf(nil, "%0*d", 1+i%97, i) }
	const n = 120_000 // about 6 MB of keys: six blocks
	for i := range n {
		if s := tab.slot(key(i)); s != int32(i) {
			t.Fatalf("key %d: slot %d", i, s)
		}
	}
	if len(tab.arena.blocks) < 5 {
		t.Fatalf("%d blocks", len(tab.arena.blocks))
	}
	for i := range n {
		if s, ok := tab.lookup(key(i)); !ok || s != int32(i) || !bytes.Equal(tab.key(s), key(i)) {
			t.Fatalf("key %d: slot %d %v, %q", i, s, ok, tab.key(s))
		}
	}
	// Keys longer than a block, added among others and looked up again:
	// each found at its slot with its bytes, the probe's touch reading no
	// block past the ones a long key starts.
	long := NewKeyTable()
	for _, n := range []int{10, arenaBlock + 5, 3, 2*arenaBlock + 1, 7} {
		k := newBuilder(plan.Text, 1)
		k.text(bytes.Repeat([]byte{byte(n)}, n))
		col := k.v
		first := long.Slots([]*Vec{col}, 1, nil, nil)[0]
		if again := long.Slots([]*Vec{col}, 1, nil, nil)[0]; again != first || !bytes.Equal(long.key(first), appendKey(nil, col, 0)) {
			t.Fatalf("a key of %d bytes: slot %d, then %d", n, first, again)
		}
	}
	if long.Len() != 5 {
		t.Fatalf("%d long keys, want 5", long.Len())
	}
	back := NewKeyTable()
	if err := back.RestoreState(tab.AppendState(nil)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.AppendState(nil), tab.AppendState(nil)) {
		t.Fatal("the restored table writes another state")
	}
}
