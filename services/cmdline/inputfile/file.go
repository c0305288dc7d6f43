package inputfile

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Stdin is the name that stands for standard input.
const Stdin = "-"

// File is an input opened by Open: its content's size and fingerprint,
// known before any of it is sent, and readers of its content.
type File struct {
	// Path is the name the user gave ("-" for standard input).
	Path string
	// Gzip says the file is gzip-compressed: its content is the
	// decompressed stream.
	Gzip bool
	disk string // the file read: Path, or the spool of standard input
	// spooled says that disk is a temporary spool, which Close removes.
	spooled bool
	size    int64
	print   []byte
}

// Name is how messages name the input: its path, or "standard input".
func (f *File) Name() string {
	if f.Path == Stdin {
		return "standard input"
	}
	return f.Path
}

// Size is the size of the content (decompressed).
func (f *File) Size() int64 { return f.size }

// Fingerprint is the content's fingerprint (see Fingerprint).
func (f *File) Fingerprint() []byte { return f.print }

// Open opens the input path names ("-": stdin, spooled to a temporary
// file in dir, os.TempDir() if ""), tells whether it is gzip-compressed
// and, for a compressed one, makes its counting pass (the package doc).
// An input that cannot be read, or whose compressed stream is broken, is
// an error naming it.
func Open(path string, stdin io.Reader, dir string) (*File, error) {
	f := &File{Path: path, disk: path}
	if path == Stdin {
		spool, err := spoolStdin(stdin, dir)
		if err != nil {
			return nil, fmt.Errorf("standard input: %w", err)
		}
		f.disk, f.spooled = spool, true
	}
	if err := f.measure(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return f, nil
}

// spoolStdin copies r to a new temporary file and returns its path.
func spoolStdin(r io.Reader, dir string) (string, error) {
	if r == nil {
		r = os.Stdin
	}
	t, err := os.CreateTemp(dir, "wololo-stdin-*.spool")
	if err != nil {
		return "", fmt.Errorf("spool it to a temporary file: %w", err)
	}
	_, err = io.Copy(t, r)
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(t.Name())
		return "", fmt.Errorf("spool it to %s: %w", t.Name(), err)
	}
	return t.Name(), nil
}

// measure finds whether the file is compressed, its content's size and
// its fingerprint.
func (f *File) measure() error {
	d, err := os.Open(f.disk)
	if err != nil {
		return err
	}
	defer d.Close()
	info, err := d.Stat()
	if err != nil {
		return err
	}
	if info.IsDir() {
		return errors.New("a directory, not a CSV file")
	}
	var magic [2]byte
	n, err := io.ReadFull(d, magic[:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return err
	}
	f.Gzip = IsGzip(magic[:n])
	if !f.Gzip {
		f.size = info.Size()
		f.print, err = Fingerprint(d, f.size)
		return err
	}
	if _, err := d.Seek(0, io.SeekStart); err != nil {
		return err
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(d, 1<<16))
	if err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	p := newPrinter()
	if _, err := io.Copy(p, zr); err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	f.size, f.print = p.size, p.sum()
	return nil
}

// IsGzip says whether a file starting with head is gzip-compressed: its
// first two bytes are gzip's magic.
func IsGzip(head []byte) bool {
	return len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b
}

// Reader reads the content from offset on (decompressed); Close it.
func (f *File) Reader(offset int64) (io.ReadCloser, error) {
	if offset < 0 || offset > f.size {
		return nil, fmt.Errorf("%s: offset %d outside its %d bytes", f.Name(), offset, f.size)
	}
	d, err := os.Open(f.disk)
	if err != nil {
		return nil, err
	}
	if !f.Gzip {
		if _, err := d.Seek(offset, io.SeekStart); err != nil {
			d.Close()
			return nil, fmt.Errorf("%s: seek to %d: %w", f.Name(), offset, err)
		}
		return d, nil
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(d, 1<<16))
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("%s: gzip: %w", f.Name(), err)
	}
	if _, err := io.CopyN(io.Discard, zr, offset); err != nil {
		d.Close()
		return nil, fmt.Errorf("%s: gzip: skip to %d: %w", f.Name(), offset, err)
	}
	return &gzipReader{zr, d, f.Name()}, nil
}

// gzipReader is the content of a compressed file; it closes the file.
type gzipReader struct {
	*gzip.Reader
	file *os.File
	name string
}

func (g *gzipReader) Read(p []byte) (int, error) {
	n, err := g.Reader.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("%s: gzip: %w", g.name, err)
	}
	return n, err
}

func (g *gzipReader) Close() error {
	g.Reader.Close()
	return g.file.Close()
}

// Content is the whole content as an fs.File whose Stat gives its size
// (what ingest.ReadHeader takes); Close it.
func (f *File) Content() (fs.File, error) {
	r, err := f.Reader(0)
	if err != nil {
		return nil, err
	}
	return content{r, f}, nil
}

type content struct {
	io.ReadCloser
	f *File
}

func (c content) Stat() (fs.FileInfo, error) { return info{c.f}, nil }

// info describes a File's content.
type info struct{ f *File }

func (i info) Name() string       { return i.f.Path }
func (i info) Size() int64        { return i.f.size }
func (i info) Mode() fs.FileMode  { return 0o444 }
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return false }
func (i info) Sys() any           { return nil }

// Close removes the spool of standard input, if any. The File is not
// to be read after.
func (f *File) Close() error {
	if f.spooled {
		f.spooled = false
		return os.Remove(f.disk)
	}
	return nil
}

// fingerprintSpan is how much of each end of a content its fingerprint
// reads.
const fingerprintSpan = 1 << 20

// Fingerprint is what a job remembers of an input's content to tell it
// from another: SHA-256 over the size and the first and last MiB. Cheap
// on any file, and enough to catch a resume with other files (another
// dataset, the two files swapped, a file that grew); a file changed only
// in its middle passes, which the size usually betrays.
func Fingerprint(r io.ReaderAt, size int64) ([]byte, error) {
	head := min(size, fingerprintSpan)
	tail := max(head, size-fingerprintSpan)
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(size))
	h.Write(n[:])
	if _, err := io.Copy(h, io.NewSectionReader(r, 0, head)); err != nil {
		return nil, err
	}
	if _, err := io.Copy(h, io.NewSectionReader(r, tail, size-tail)); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// printer computes Fingerprint of a stream written to it once, whose size
// is known only at its end: it keeps the first MiB and the last MiB seen.
type printer struct {
	size int64
	head []byte
	tail []byte // a ring of the last fingerprintSpan bytes
	at   int    // where the ring's next byte goes
}

func newPrinter() *printer {
	return &printer{head: make([]byte, 0, fingerprintSpan), tail: make([]byte, 0, fingerprintSpan)}
}

func (p *printer) Write(b []byte) (int, error) {
	n := len(b)
	p.size += int64(n)
	if room := fingerprintSpan - len(p.head); room > 0 {
		p.head = append(p.head, b[:min(room, len(b))]...)
	}
	if len(b) > fingerprintSpan {
		b = b[len(b)-fingerprintSpan:]
	}
	for len(b) > 0 {
		if len(p.tail) < fingerprintSpan {
			k := min(fingerprintSpan-len(p.tail), len(b))
			p.tail = append(p.tail, b[:k]...)
			b = b[k:]
			p.at = len(p.tail) % fingerprintSpan
			continue
		}
		k := copy(p.tail[p.at:], b)
		b = b[k:]
		p.at = (p.at + k) % fingerprintSpan
	}
	return n, nil
}

// sum is the fingerprint of what was written.
func (p *printer) sum() []byte {
	var last []byte // the ring in order
	if len(p.tail) < fingerprintSpan {
		last = p.tail
	} else {
		last = append(append([]byte{}, p.tail[p.at:]...), p.tail[:p.at]...)
	}
	head := int64(len(p.head))
	tail := max(head, p.size-fingerprintSpan)
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(p.size))
	h.Write(n[:])
	h.Write(p.head)
	h.Write(last[int64(len(last))-(p.size-tail):])
	return h.Sum(nil)
}

// SpoolStdin, for a command that hands its inputs' paths on (to another
// package that opens them by path), replaces the one path that is "-"
// by that of a temporary file in dir (os.TempDir() if "") holding all
// of stdin (nil: os.Stdin), read now. It returns what removes the spool
// (nothing to remove without "-"). More than one "-" is an error.
func SpoolStdin(paths []*string, stdin io.Reader, dir string) (remove func(), err error) {
	var at *string
	for _, p := range paths {
		if *p != Stdin {
			continue
		}
		if at != nil {
			return nil, errors.New("standard input (-) given for more than one input: it can be one of them at most")
		}
		at = p
	}
	if at == nil {
		return func() {}, nil
	}
	spool, err := spoolStdin(stdin, dir)
	if err != nil {
		return nil, fmt.Errorf("standard input: %w", err)
	}
	*at = spool
	return func() { os.Remove(spool) }, nil
}
