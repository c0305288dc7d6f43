package inputlog

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/wololo/wololo/internal/directio"
)

// TestWriterKeepsEveryByteAtItsOffset writes an input in chunks of random
// sizes, from a random first offset, pushing and waiting at random points,
// resuming in a new Writer now and then (partly over bytes already there,
// as a resumed upload does) and rewriting some bytes out of order, with
// and without direct I/O; the copy must hold every byte where it was sent,
// as soon as Written says so.
func TestWriterKeepsEveryByteAtItsOffset(t *testing.T) {
	seeds := uint64(20)
	if testing.Short() {
		seeds = 4
	}
	for _, buffered := range []bool{false, true} {
		for seed := range seeds {
			rng := rand.New(rand.NewPCG(seed, 7))
			d, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			d.buffered = buffered
			size := 1 + rng.IntN(3*stagingBytes)
			input := make([]byte, size)
			for i := range input {
				input[i] = byte(rng.Uint32())
			}
			start := int64(rng.IntN(min(size, 3*directio.Block)))
			w, err := d.Writer("job", "0", start, start)
			if err != nil || w == nil {
				t.Fatal(w, err)
			}
			path := filepath.Join(d.path, "job", "0")
			check := func(upTo int64, when string) {
				t.Helper()
				got, err := os.ReadFile(path)
				if err != nil || int64(len(got)) < upTo || !bytes.Equal(got[start:upTo], input[start:upTo]) {
					t.Fatalf("buffered=%v seed %d, %s: the copy (%d bytes, %v) does not hold the input's bytes %d..%d", buffered, seed, when, len(got), err, start, upTo)
				}
			}
			for at := start; at < int64(size); {
				n := min(int64(1+rng.IntN(stagingBytes/2)), int64(size)-at)
				if err := w.WriteAt(input[at:at+n], at); err != nil {
					t.Fatal(err)
				}
				at += n
				switch rng.IntN(8) {
				case 0, 1:
					if err := w.Push(); err != nil {
						t.Fatal(err)
					}
					if err := w.Written(at); err != nil {
						t.Fatal(err)
					}
					check(at, "written")
				case 2:
					// Out of order: some bytes again, then on from there.
					back := at - int64(rng.IntN(int(at-start)+1))
					if err := w.WriteAt(input[back:at], back); err != nil {
						t.Fatal(err)
					}
				case 3:
					// A resumed upload: a new Writer, from a committed
					// offset at or before the end of what was written.
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					check(at, "closed")
					from := at - int64(rng.IntN(int(at-start)+1))
					if w, err = d.Writer("job", "0", start, from); err != nil || w == nil {
						t.Fatal(w, err)
					}
					at = from
				}
			}
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			check(int64(size), "synced")
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if d.Size("job", "0") != int64(size) {
				t.Fatalf("buffered=%v seed %d: the copy is %d bytes, want %d", buffered, seed, d.Size("job", "0"), size)
			}
		}
	}
}
