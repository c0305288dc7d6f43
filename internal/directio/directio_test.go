package directio

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"
)

// countingDirect is a direct file that counts its writes and the bytes
// the file system refused (a misaligned write fails with EINVAL, which
// Pair would take for a refusal and quietly fall back from).
type countingDirect struct {
	DirectFile
	writes, refused atomic.Int64
}

func (c *countingDirect) WriteAt(p []byte, off int64) (int, error) {
	n, err := c.DirectFile.WriteAt(p, off)
	if errors.Is(err, syscall.EINVAL) {
		c.refused.Add(1)
	} else if err == nil {
		c.writes.Add(1)
	}
	return n, err
}

// TestAppenderKeepsEveryByteAtItsOffset stages appends of random sizes
// (a few bytes to several stagings, as the store's records and snapshots
// are) into a file that already holds a random prefix, flushing at random
// points and now and then going on in a new Appender (as a store does
// after a restart) or at an offset the last write did not end at: after
// every Flush the file must hold exactly the bytes written, and with
// direct I/O the large appends must have gone direct, none refused.
func TestAppenderKeepsEveryByteAtItsOffset(t *testing.T) {
	const staging = 64 << 10
	seeds := uint64(24)
	if testing.Short() {
		seeds = 6
	}
	for _, direct := range []bool{true, false} {
		for seed := range seeds {
			rng := rand.New(rand.NewPCG(seed, 11))
			path := filepath.Join(t.TempDir(), "seg")
			want := make([]byte, rng.IntN(3*Block))
			for i := range want {
				want[i] = byte(rng.Uint32())
			}
			if err := os.WriteFile(path, want, 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			counter := &countingDirect{}
			open := func() *Appender {
				p := Pair{Buffered: f}
				if direct {
					d := OpenDirect(path)
					if d == nil {
						t.Skip("this file system refuses O_DIRECT")
					}
					counter.DirectFile = d
					p.Direct = counter
				}
				a := NewAppender(p, f, staging)
				a.MinDirect = 2 * Block
				return a
			}
			a := open()
			check := func(when string) {
				t.Helper()
				got, err := os.ReadFile(path)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("direct=%v seed %d, %s: the file (%d bytes, %v) is not the %d bytes written", direct, seed, when, len(got), err, len(want))
				}
			}
			for range 60 {
				off := int64(len(want))
				if rng.IntN(10) == 0 && len(want) > 0 {
					// Overwrite the end: the store's Open truncates a torn
					// tail and appends where it was cut.
					off -= int64(rng.IntN(min(len(want), 2*Block)))
					if err := a.Flush(); err != nil {
						t.Fatal(err)
					}
					if err := f.Truncate(off); err != nil {
						t.Fatal(err)
					}
					want = want[:off]
				}
				var parts [][]byte
				for range 1 + rng.IntN(3) {
					var n int
					switch rng.IntN(4) {
					case 0:
						n = rng.IntN(16)
					case 1, 2:
						n = rng.IntN(8 * Block)
					default:
						n = rng.IntN(3 * staging)
					}
					b := make([]byte, n)
					for i := range b {
						b[i] = byte(rng.Uint32())
					}
					parts = append(parts, b)
					want = append(want, b...)
				}
				if err := a.Stage(off, parts...); err != nil {
					t.Fatal(err)
				}
				switch rng.IntN(6) {
				case 0:
					if err := a.Flush(); err != nil {
						t.Fatal(err)
					}
					if err := a.Close(); err != nil {
						t.Fatal(err)
					}
					check("before a new Appender")
					a = open()
				default:
					if err := a.Flush(); err != nil {
						t.Fatal(err)
					}
					check("after a flush")
				}
			}
			if err := a.Flush(); err != nil {
				t.Fatal(err)
			}
			check("at the end")
			if direct && (counter.refused.Load() > 0 || !a.Direct() || counter.writes.Load() == 0) {
				t.Fatalf("seed %d: %d direct writes, %d refused", seed, counter.writes.Load(), counter.refused.Load())
			}
			a.Close()
			f.Close()
		}
	}
}

// refusingDirect is a file system that opens O_DIRECT but refuses the
// write.
type refusingDirect struct{ closed bool }

func (r *refusingDirect) WriteAt([]byte, int64) (int, error) { return 0, syscall.EINVAL }
func (r *refusingDirect) Close() error                       { r.closed = true; return nil }

// TestAppenderFallsBackWhenDirectIOIsRefused: a refused direct write is
// written through the page cache, as is every later one.
func TestAppenderFallsBackWhenDirectIOIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seg")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	refusing := &refusingDirect{}
	a := NewAppender(Pair{Buffered: f, Direct: refusing}, f, 4*Block)
	a.MinDirect = Block
	want := bytes.Repeat([]byte("wololo"), 5000)
	if err := a.Stage(0, want[:7000]); err != nil {
		t.Fatal(err)
	}
	if err := a.Stage(7000, want[7000:]); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if !refusing.closed || a.Direct() {
		t.Fatal("the refused direct file is still in use")
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the file holds %d bytes (%v), want the %d written", len(got), err, len(want))
	}
}

// TestAlignedBuffer: the memory direct I/O writes from begins at a block.
func TestAlignedBuffer(t *testing.T) {
	for _, n := range []int{Block, 3 * Block, 1 << 20} {
		b := AlignedBuffer(n)
		if len(b) != 0 || cap(b) != n {
			t.Fatalf("AlignedBuffer(%d): len %d cap %d", n, len(b), cap(b))
		}
		b = b[:1]
		if addr := uintptr(unsafe.Pointer(&b[0])); addr%Block != 0 {
			t.Fatalf("AlignedBuffer(%d) begins at %#x", n, addr)
		}
	}
}

// TestPairFallsBackOnMisalignedMemory: a direct write the file system
// refuses with EINVAL (here a real one: memory one byte off a block,
// which the Appender and the input log never hand over) is written
// through the page cache instead, and the direct file is closed.
func TestPairFallsBackOnMisalignedMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "copy")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	direct := OpenDirect(path)
	if direct == nil {
		t.Skip("no direct I/O here: the fallback is all there is")
	}
	p := Pair{Buffered: f, Direct: direct}
	data := AlignedBuffer(2*Block + 1)[:2*Block+1]
	for i := range data {
		data[i] = byte(i)
	}
	misaligned := data[1:] // 2 blocks, one byte off the buffer's alignment
	if _, err := p.WriteAt(misaligned, 0, 0); err != nil {
		t.Fatalf("WriteAt: %v, want the refused direct write done through the page cache", err)
	}
	if p.Direct != nil {
		t.Fatal("the pair still writes direct after EINVAL")
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, misaligned) {
		t.Fatalf("the file holds %d bytes (%v), want the %d written", len(got), err, len(misaligned))
	}
}
