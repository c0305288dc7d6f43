package inputfile

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func write(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// csvOf is a CSV text of n bytes or a little more, random so that a
// fingerprint of the wrong span differs.
func csvOf(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	b.WriteString("a,b\n")
	for b.Len() < n {
		b.WriteString(strings.Repeat("x", r.IntN(20)))
		b.WriteString(",1\n")
	}
	return b.Bytes()
}

func readAll(t *testing.T, f *File, offset int64) []byte {
	t.Helper()
	r, err := f.Reader(offset)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A compressed file, plain or on stdin, is its decompressed content: the
// same size, fingerprint and bytes from any offset as the plain file.
func TestCompressedIsItsContent(t *testing.T) {
	for _, size := range []int{10, 1 << 20, 3<<20 + 17} {
		dir := t.TempDir()
		text := csvOf(size, uint64(size))
		plainPath := write(t, dir, "t.csv", text)
		gzPath := write(t, dir, "t.csv.data", gz(t, text)) // the name says nothing
		plain, err := Open(plainPath, nil, dir)
		if err != nil {
			t.Fatal(err)
		}
		if plain.Gzip || plain.Size() != int64(len(text)) {
			t.Fatalf("plain file: gzip %v, size %d of %d", plain.Gzip, plain.Size(), len(text))
		}
		for _, c := range []struct {
			name string
			f    func() (*File, error)
		}{
			{"gzip file", func() (*File, error) { return Open(gzPath, nil, dir) }},
			{"gzip on stdin", func() (*File, error) { return Open(Stdin, bytes.NewReader(gz(t, text)), dir) }},
		} {
			f, err := c.f()
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if !f.Gzip || f.Size() != plain.Size() || !bytes.Equal(f.Fingerprint(), plain.Fingerprint()) {
				t.Fatalf("%d bytes, %s: gzip %v, size %d, fingerprint equal %v", size, c.name, f.Gzip, f.Size(), bytes.Equal(f.Fingerprint(), plain.Fingerprint()))
			}
			for _, off := range []int64{0, 1, int64(len(text) / 2), int64(len(text))} {
				if got := readAll(t, f, off); !bytes.Equal(got, text[off:]) {
					t.Fatalf("%s from %d: %d bytes, not the content's %d", c.name, off, len(got), len(text[off:]))
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The fingerprint of a stream (a compressed file's) is Fingerprint's of
// the same bytes, whatever the writes' sizes.
func TestPrinterIsFingerprint(t *testing.T) {
	for _, size := range []int{0, 1, fingerprintSpan - 1, fingerprintSpan, fingerprintSpan + 1, 2 * fingerprintSpan, 2*fingerprintSpan + 5, 5*fingerprintSpan + 3} {
		text := csvOf(size, 7)[:size]
		want, err := Fingerprint(bytes.NewReader(text), int64(size))
		if err != nil {
			t.Fatal(err)
		}
		for _, chunk := range []int{1 << 10, 1<<20 + 3, 3 << 20} {
			p := newPrinter()
			for b := text; len(b) > 0; {
				k := min(chunk, len(b))
				p.Write(b[:k])
				b = b[k:]
			}
			if got := p.sum(); !bytes.Equal(got, want) {
				t.Fatalf("%d bytes in writes of %d: fingerprint differs", size, chunk)
			}
		}
	}
}

// Standard input is spooled, read from the spool as often as asked, and
// the spool removed by Close.
func TestStdinSpool(t *testing.T) {
	dir := t.TempDir()
	text := []byte("a,b\n1,2\n")
	f, err := Open(Stdin, bytes.NewReader(text), dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "standard input" || f.Gzip || f.Size() != int64(len(text)) {
		t.Fatalf("name %q gzip %v size %d", f.Name(), f.Gzip, f.Size())
	}
	for range 2 {
		if got := readAll(t, f, 4); string(got) != "1,2\n" {
			t.Fatalf("read %q", got)
		}
	}
	spools, _ := filepath.Glob(filepath.Join(dir, "wololo-stdin-*"))
	if len(spools) != 1 {
		t.Fatalf("spools %v", spools)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(spools[0]); !os.IsNotExist(err) {
		t.Fatalf("spool left after Close: %v", err)
	}
}

// A broken compressed file is an error naming it, and leaves no spool.
func TestBrokenGzip(t *testing.T) {
	dir := t.TempDir()
	z := gz(t, csvOf(1000, 1))
	p := write(t, dir, "cut.gz", z[:len(z)/2])
	if _, err := Open(p, nil, dir); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("a cut gzip file: %v", err)
	}
	if _, err := Open(Stdin, bytes.NewReader(z[:len(z)/2]), dir); err == nil || !strings.Contains(err.Error(), "standard input") {
		t.Fatalf("a cut gzip on stdin: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "wololo-stdin-*")); len(left) != 0 {
		t.Fatalf("spool left: %v", left)
	}
	if _, err := Open(filepath.Join(dir, "none.csv"), nil, dir); err == nil {
		t.Fatal("a file that is not there opened")
	}
}

// Any bytes open as a plain file, a compressed one whose content reads
// back whole from any offset, or an error; never a panic, and never a
// size the content does not have.
func FuzzOpen(f *testing.F) {
	f.Add([]byte("a,b\n1,2\n"))
	f.Add([]byte{0x1f, 0x8b})
	f.Add([]byte{0x1f})
	f.Add(gz(f, []byte("a,b\n1,2\n")))
	f.Add(append(gz(f, []byte("a\n1\n")), gz(f, []byte("2\n"))...))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Open(Stdin, bytes.NewReader(b), dir)
		if err != nil {
			if !IsGzip(b) {
				t.Fatalf("a plain file refused: %v", err)
			}
			return
		}
		defer file.Close()
		if file.Gzip != IsGzip(b) {
			t.Fatalf("gzip %v for a file starting %x", file.Gzip, b[:min(2, len(b))])
		}
		whole := readAll(t, file, 0)
		if int64(len(whole)) != file.Size() {
			t.Fatalf("size %d, content %d bytes", file.Size(), len(whole))
		}
		if !file.Gzip && !bytes.Equal(whole, b) {
			t.Fatal("a plain file's content is not its bytes")
		}
		off := file.Size() / 3
		if got := readAll(t, file, off); !bytes.Equal(got, whole[off:]) {
			t.Fatalf("from %d: not the content's rest", off)
		}
	})
}

// SpoolStdin puts stdin in a file in place of "-", once, and refuses a
// second "-".
func TestSpoolStdin(t *testing.T) {
	dir := t.TempDir()
	a, b := "x.csv", Stdin
	remove, err := SpoolStdin([]*string{&a, &b}, strings.NewReader("h\n1\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(b); a != "x.csv" || err != nil || string(got) != "h\n1\n" {
		t.Fatalf("paths %q %q: %q, %v", a, b, got, err)
	}
	remove()
	if _, err := os.Stat(b); !os.IsNotExist(err) {
		t.Fatalf("spool left: %v", err)
	}
	c, d := Stdin, Stdin
	if _, err := SpoolStdin([]*string{&c, &d}, strings.NewReader(""), dir); err == nil {
		t.Fatal("two - taken")
	}
}
