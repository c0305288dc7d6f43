package inmem

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/dataflow/csvio"
	"github.com/wololo/wololo/services/dataflow/ingest"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// DefaultPieceBytes is about how much of a file one piece holds.
const DefaultPieceBytes = 4 << 20

// pendingPieces is how many pieces' worth of bytes the reader looks through
// for a record's end before it gives the rest of the file to one parser,
// which reads it in order and skips an oversized record as the gateway
// does (an unclosed quote makes the rest of a file one record).
const pendingPieces = 16

// piece is a run of whole records of one file.
type piece struct {
	file   schema.File
	offset int64 // in the file, of data[0]
	data   []byte
	last   bool // the file ends with data
	// tail: the reader found no record end in data, so the parser reads
	// the rest of the file after it too, in order, to the end.
	tail bool
}

// source reads, cuts and parses both files and sends their rows from the
// gateway's instance.
type source struct {
	g    *graph
	top  deploy.Topology
	opts Options

	headers [2]fileHeader
	mu      sync.Mutex
	reports [2]schema.FileReport
	parsed  [2]int64
	pending [2]sync.WaitGroup // pieces of each file not yet parsed
}

type fileHeader struct {
	path    string
	columns []string
	data    int64 // the offset of the first record
	size    int64
}

// run parses both files, matches first, and ends their streams. A failure
// stops the run (graph.stop); run still returns only once every goroutine
// it started has.
func (s *source) run() [2]schema.FileReport {
	for f, path := range [2]string{schema.Matches: s.opts.Matches, schema.Players: s.opts.Players} {
		s.reports[f].Missing = map[string]int64{}
		h, err := readHeader(path, schema.File(f))
		if err != nil {
			s.g.stop(err)
			return s.reports
		}
		s.headers[f] = fileHeader{path: path, columns: h.Columns, data: h.DataOffset, size: h.Size}
	}
	pieces := make(chan piece, s.opts.Parsers)
	var parsers, ends sync.WaitGroup
	for range s.opts.Parsers {
		parsers.Go(func() { s.parse(pieces) })
	}
	go func() {
		defer close(pieces)
		for f := range s.headers {
			if err := s.cut(schema.File(f), pieces); err != nil {
				s.g.stop(err)
				return
			}
			// The file's stream ends once its last piece is parsed; the
			// next file is cut meanwhile.
			ends.Go(func() {
				s.pending[f].Wait()
				if err := s.judge(schema.File(f)); err != nil {
					s.g.stop(err)
					return
				}
				if err := s.end(schema.File(f)); err != nil {
					s.g.stop(err)
				}
			})
		}
	}()
	parsers.Wait()
	ends.Wait()
	for f := range s.reports {
		r := &s.reports[f]
		slices.Sort(r.OversizedAt)
		r.OversizedAt = r.OversizedAt[:min(len(r.OversizedAt), schema.MaxOversizedListed)]
	}
	return s.reports
}

// readHeader reads the header of the file at path as the client reads it
// before an upload (ingest.ReadHeader).
func readHeader(path string, file schema.File) (ingest.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return ingest.Header{}, err
	}
	defer f.Close()
	return ingest.ReadHeader(f, path, file)
}

// cut reads a file and sends it on as pieces that end where records end.
func (s *source) cut(file schema.File, pieces chan<- piece) error {
	h := s.headers[file]
	f, err := os.Open(h.path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := io.NewSectionReader(f, h.data, h.size-h.data)
	offset := h.data
	send := func(p piece) error {
		s.pending[file].Add(1)
		select {
		case pieces <- p:
			return nil
		case <-s.g.ctx.Done():
			s.pending[file].Done()
			return errStopped
		}
	}
	var carry []byte
	for {
		buf := make([]byte, len(carry), len(carry)+s.opts.PieceBytes)
		copy(buf, carry)
		n, err := io.ReadFull(r, buf[len(carry):cap(buf)])
		buf = buf[:len(carry)+n]
		switch {
		case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
			return send(piece{file: file, offset: offset, data: buf, last: true})
		case err != nil:
			return fmt.Errorf("read %s: %w", h.path, err)
		}
		whole := csvio.CompleteRecords(buf)
		if whole == 0 && len(buf) >= pendingPieces*s.opts.PieceBytes {
			return send(piece{file: file, offset: offset, data: buf, tail: true})
		}
		if whole > 0 {
			if err := send(piece{file: file, offset: offset, data: buf[:whole]}); err != nil {
				return err
			}
		}
		offset += int64(whole)
		carry = buf[whole:]
	}
}

// parse parses pieces until there are no more, each with its own Ingest
// starting at the piece's offset, into batches sent from the gateway's
// instance.
func (s *source) parse(pieces <-chan piece) {
	var outs [2]*stage.Outputs
	// After a failure the pieces left are taken and dropped, so that the
	// reader and the ends of the streams are not left waiting for them.
	failed := false
	for f := range schema.Files {
		var err error
		if outs[f], err = s.outputs(schema.File(f)); err != nil {
			s.g.stop(err)
			failed = true
		}
	}
	for p := range pieces {
		if !failed {
			if err := s.parsePiece(p, outs[p.file]); err != nil {
				s.g.stop(err)
				failed = true
			}
		}
		s.pending[p.file].Done()
	}
}

func (s *source) parsePiece(p piece, out *stage.Outputs) error {
	in, err := ingest.New(p.file, s.headers[p.file].columns, p.file.Stream(), p.offset, schema.FileReport{})
	if err != nil {
		return err
	}
	if !p.tail {
		// A piece ends where a record ends, so it is all of its records:
		// parsed as the end of an input.
		in.Feed(p.data, true, out)
	} else if err := s.parseTail(p, in, out); err != nil {
		return err
	}
	if err := s.g.flush(out, false); err != nil {
		return err
	}
	s.add(p, in.Report)
	return nil
}

// parseTail parses a tail piece and then the rest of its file, as the
// gateway's Ingest parses an upload: in order, skipping a record too long
// to hold.
func (s *source) parseTail(p piece, in *ingest.Ingest, out *stage.Outputs) error {
	h := s.headers[p.file]
	f, err := os.Open(h.path)
	if err != nil {
		return err
	}
	defer f.Close()
	from := p.offset + int64(len(p.data))
	rest := io.NewSectionReader(f, from, h.size-from)
	in.Feed(p.data, false, out)
	buf := make([]byte, s.opts.PieceBytes)
	for {
		n, err := rest.Read(buf)
		in.Feed(buf[:n], false, out)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", h.path, err)
		}
		if err := s.g.flush(out, false); err != nil {
			return err
		}
	}
	in.Feed(nil, true, out)
	return nil
}

// add sums a piece's report into its file's and tells the progress.
func (s *source) add(p piece, r schema.FileReport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := &s.reports[p.file]
	sum.Rows += r.Rows
	sum.Malformed += r.Malformed
	for c, n := range r.Missing {
		sum.Missing[c] += n
	}
	sum.OversizedAt = append(sum.OversizedAt, r.OversizedAt...)
	if len(r.Rejects) > 0 {
		// Each piece lists its first ones: the first of all are among them.
		sum.Rejects = append(sum.Rejects, r.Rejects...)
		slices.SortFunc(sum.Rejects, func(a, b schema.Reject) int { return cmp.Compare(a.Offset, b.Offset) })
		sum.Rejects = sum.Rejects[:min(len(sum.Rejects), schema.MaxRejectsListed)]
	}
	// Pieces are parsed side by side, the last one maybe first: what is
	// parsed counts up to the file's size, never past it.
	total := s.headers[p.file].size - s.headers[p.file].data
	s.parsed[p.file] = min(s.parsed[p.file]+int64(len(p.data)), total)
	if p.tail || p.last {
		s.parsed[p.file] = total
	}
	if s.opts.Progress != nil {
		s.opts.Progress(p.file, s.parsed[p.file], total)
	}
}

// judge applies the gateway's rule on malformed records to a file whose
// pieces are all parsed: past the limit the run fails, as the job would.
func (s *source) judge(file schema.File) error {
	limit := schema.MalformedLimit(schema.DefaultMaxMalformed)
	if s.opts.MaxMalformed != nil {
		limit = *s.opts.MaxMalformed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return limit.Check(file, s.reports[file])
}

// end sends the end of a file's stream to every receiver.
func (s *source) end(file schema.File) error {
	out, err := s.outputs(file)
	if err != nil {
		return err
	}
	return s.g.flush(out, true)
}

// outputs returns an emitter of a file's stream from the gateway instance.
func (s *source) outputs(file schema.File) (*stage.Outputs, error) {
	self := deploy.Instance{Stage: s.top.Gateway().Name}
	return stage.NewOutputs(s.top, self, job, []string{file.Stream()}, s.opts.BatchRows)
}
