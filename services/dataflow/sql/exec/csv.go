package exec

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/wololo/wololo/services/dataflow/csvio"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Table is a table's text: its column names and its rows in batches of
// text Vecs, one per column.
type Table struct {
	Columns []string
	Batches []*Batch
	// Rows and Malformed count the data records read and those skipped
	// (broken quoting, or a field count that is not the header's).
	Rows, Malformed int64
}

// BatchRows is how many rows ReadCSV puts in a batch: as many as an
// exchange's chunk, so that what every operator pays per batch is paid once per
// 8192 rows.
const BatchRows = 8192

// ReadCSV reads a CSV file with a header row into a Table, by the rules of
// docs/queries.md: a record whose field count differs from the header's,
// whose quoting is broken, or that is longer than maxRecordBytes (when
// above 0; blank lines before it count, as the reference counts them) is
// skipped and counted.
func ReadCSV(r io.Reader, maxRecordBytes int) (*Table, error) {
	return ReadCSVColumns(r, maxRecordBytes, nil)
}

// ReadCSVColumns is ReadCSV keeping the text of the columns keep names
// only (every column when keep is nil): any other column of the header
// reads as empty text in every row, and costs no memory, so that a job's
// tables hold what its scans read. Records are checked and counted the
// same. It is a CSVReader's batches, taken to the end.
func ReadCSVColumns(r io.Reader, maxRecordBytes int, keep []string) (*Table, error) {
	cr, err := NewCSVReader(r, maxRecordBytes, keep, 0)
	if err != nil {
		return nil, err
	}
	defer cr.Close()
	t := &Table{Columns: cr.Columns}
	for {
		b, err := cr.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			t.Rows, t.Malformed = cr.Counts()
			return t, nil
		}
		t.Batches = append(t.Batches, b)
	}
}

// TextRows builds a table's batches of text from its records' fields: a
// text Vec per column of the header, holding the text of the columns
// kept, and empty text (no memory) in every row of the others. Each
// column's arena is allocated once per batch, at about its size in the
// rows before (the same number of bytes a row, with room to spare), not
// grown value by value. It is what both ReadCSV's parsers and the gateway's upload of a
// job of SQL queries (services/dataflow/sql/sqlops.Source) build batches
// with. It is not safe for concurrent use.
type TextRows struct {
	width int
	kept  []int  // the indexes of the columns kept
	held  []*Vec // per column kept, the rows held; nil when none is
	rows  int
	// seen and sizes are the rows of the batches made, and each kept
	// column's bytes in them; empty is a dropped column's Ends, all zero.
	seen  int
	sizes []int
	empty []uint32
}

// NewTextRows returns the builder of a table of len(kept) columns, kept[i]
// saying whether column i's text is kept.
func NewTextRows(kept []bool) *TextRows {
	t := &TextRows{width: len(kept)}
	for i, k := range kept {
		if k {
			t.kept = append(t.kept, i)
		}
	}
	t.sizes = make([]int, len(t.kept))
	return t
}

// Add holds a record of the table's width of fields (their text copied)
// until the next Batch.
func (t *TextRows) Add(fields [][]byte) {
	if t.held == nil {
		t.held = make([]*Vec, len(t.kept))
		for k := range t.kept {
			t.held[k] = &Vec{Type: plan.Text, Data: make([]byte, 0, t.arena(k)), Ends: make([]uint32, 0, BatchRows)}
		}
	}
	for k, i := range t.kept {
		v, f := t.held[k], fields[i]
		v.Data = append(v.Data, f...)
		v.Ends = append(v.Ends, uint32(len(v.Data)))
	}
	t.rows++
}

// Rows is the number of rows held.
func (t *TextRows) Rows() int { return t.rows }

// Batch returns the rows held as a batch, and holds none; nil when it
// held none.
func (t *TextRows) Batch() *Batch {
	if t.rows == 0 {
		return nil
	}
	n := t.rows
	if len(t.empty) < n {
		t.empty = make([]uint32, max(n, BatchRows))
	}
	b := &Batch{N: n, Cols: make([]*Vec, t.width)}
	for k, i := range t.kept {
		v := t.held[k]
		v.N = n
		b.Cols[i] = v
		t.sizes[k] += len(v.Data)
	}
	for i, v := range b.Cols {
		if v == nil {
			b.Cols[i] = &Vec{Type: plan.Text, N: n, Ends: t.empty[:n:n]}
		}
	}
	t.seen += n
	t.held, t.rows = nil, 0
	return b
}

// arena is the capacity of kept column k's arena in a batch: BatchRows rows
// of the bytes a row it has had, an eighth more, or (before any) a
// little.
func (t *TextRows) arena(k int) int {
	if t.seen == 0 {
		return 4 << 10
	}
	return int(int64(t.sizes[k])*BatchRows/int64(t.seen))*9/8 + 64
}

// pieceBytes is about how much of a file a CSVReader's parser parses at
// once; readAhead is how many pieces past the one whose batches Next is
// handing out it reads and parses meanwhile, at most.
const (
	pieceBytes = 4 << 20
	readAhead  = 4
)

// CSVReader reads a CSV file with a header row as ReadCSVColumns does,
// batch by batch: one goroutine reads the file and cuts it into pieces
// that end where records end (csvio.CompleteRecords), parsers parse the
// pieces side by side, and Next hands out their batches in the file's
// order while the pieces after are read and parsed, a few pieces ahead
// at most. Each piece is parsed on its own; the blank lines before a
// record stay in its piece, so that records are checked and counted as
// one reading of the file in order checks and counts them. Next is not
// safe for concurrent use.
type CSVReader struct {
	// Columns is the header's names.
	Columns []string

	pieces <-chan chan parsed // each piece's batches to come, in order
	stop   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup

	cur             []*Batch
	curRuns         []int // the run of each of cur (NewCSVReaderCut)
	curParts        []int // the part of each of cur (NewCSVReaderParted)
	run             int   // the run of the batch Next returned last
	part            int   // the part of the batch Next returned last
	parted          bool  // its records are parted (NewCSVReaderParted)
	rows, malformed int64
	rejects         []Reject
	err             error
	ended           bool
}

// Reject is a malformed record a CSVReader skipped: where it starts in
// the file, why, and its first bytes (RejectHead at most).
type Reject struct {
	Offset int64
	Kind   RejectKind
	Head   []byte
}

// RejectKind is why a record was skipped.
type RejectKind int

// The kinds of malformed records, in the order a record is checked.
const (
	TooLong    RejectKind = iota // longer than the reader's limit on a record
	Quoting                      // not CSV: a quote out of place, or a quoted field not closed
	FieldCount                   // not the header's number of fields
)

// The rejects a CSVReader lists: the first MaxRejects of a file, each
// with its first RejectHead bytes.
const (
	MaxRejects = 1000
	RejectHead = 80
)

// parsed is what a parser made of a piece.
type parsed struct {
	batches         []*Batch
	runs            []int // the run of each batch (NewCSVReaderCut)
	parts           []int // the part of each batch (NewCSVReaderParted)
	rows, malformed int64
	rejects         []Reject // the first MaxRejects of the piece
	err             error    // reading the piece failed
}

// NewCSVReader reads the header of r and starts reading its records,
// keeping the text of the columns keep names (every one when keep is
// nil), with parsers goroutines parsing (0: GOMAXPROCS). Close stops it.
func NewCSVReader(r io.Reader, maxRecordBytes int, keep []string, parsers int) (*CSVReader, error) {
	return newCSVReader(r, maxRecordBytes, keep, parsers, pieceBytes, nil, nil)
}

// NewCSVReaderCut is NewCSVReader whose records are cut into runs by
// their place in the file: run i is the records that start (after the
// blank lines before them) at a byte offset in [cuts[i-1], cuts[i]), run
// 0 those before cuts[0], run len(cuts) those from the last cut on; cuts
// ascend. No batch holds records of two runs, and Run says each batch's.
// A standing job fed a file in n appends (wololo demo --epochs) cuts it
// so as it reads it, where cutting it into runs of as many records would
// count them first, a reading of the whole file more.
func NewCSVReaderCut(r io.Reader, maxRecordBytes int, keep []string, parsers int, cuts []int64) (*CSVReader, error) {
	return newCSVReader(r, maxRecordBytes, keep, parsers, pieceBytes, cuts, nil)
}

// PartBy parts the records of a CSVReader: Of is the part of a record's
// fields, below Parts. The zero PartBy parts nothing: every record is in
// part 0.
type PartBy struct {
	Parts int
	Of    func(fields [][]byte) int
}

// NewCSVReaderParted is NewCSVReader whose records are parted by what by
// makes of the header: no batch holds records of two parts, and Part
// says each batch's (Parted: whether by parted them at all). The records
// are parted as the parsers read them, so that a plan that routes each
// row by a field to one of its receivers (sqlops.RouteOf: wololo demo's
// match_players by match, to two shards) is given the rows of each
// receiver in batches of their own, where it copied each row out of a
// batch of every receiver's rows into one of its receiver's (a tenth of
// the demo's CPU at the full dataset).
func NewCSVReaderParted(r io.Reader, maxRecordBytes int, keep []string, parsers int, by func(header []string) (PartBy, error)) (*CSVReader, error) {
	return newCSVReader(r, maxRecordBytes, keep, parsers, pieceBytes, nil, by)
}

// newCSVReader is NewCSVReaderCut, its records parted by what by makes
// of the header (nil: not parted), reading pieces of about size bytes.
func newCSVReader(r io.Reader, maxRecordBytes int, keep []string, parsers, size int, cuts []int64, partBy func([]string) (PartBy, error)) (*CSVReader, error) {
	if parsers <= 0 {
		parsers = runtime.GOMAXPROCS(0)
	}
	c := &cutter{r: r, size: size, free: make(chan []byte, readAhead+parsers+2)}
	header, err := c.header()
	if err != nil {
		return nil, err
	}
	var by PartBy
	if partBy != nil {
		if by, err = partBy(header); err != nil {
			return nil, err
		}
	}
	kept := make([]bool, len(header))
	for i, name := range header {
		kept[i] = keep == nil || slices.Contains(keep, name)
	}
	pieces := make(chan chan parsed, readAhead)
	work := make(chan piece)
	cr := &CSVReader{Columns: header, pieces: pieces, stop: make(chan struct{}), parted: by.Of != nil}
	cr.wg.Go(func() {
		defer close(work)
		defer close(pieces)
		for {
			base := c.pos
			data, err := c.next()
			if data == nil && err == nil {
				return
			}
			res := make(chan parsed, 1)
			select {
			case pieces <- res:
			case <-cr.stop:
				return
			}
			if err != nil {
				res <- parsed{err: err}
				return
			}
			select {
			case work <- piece{data: data, base: base, res: res}:
			case <-cr.stop:
				return
			}
		}
	})
	for range parsers {
		cr.wg.Go(func() {
			p := &pieceParser{max: maxRecordBytes, width: len(header), cuts: cuts, partOf: by.Of}
			for range max(1, by.Parts) {
				p.rows = append(p.rows, NewTextRows(kept))
			}
			for w := range work {
				w.res <- p.parse(w.data, w.base)
				select {
				case c.free <- w.data[:0]:
				default:
				}
			}
		})
	}
	return cr, nil
}

// Next returns the next batch of the file; nil at its end, after which
// Counts has the records' counts. After Close, it returns an error.
func (cr *CSVReader) Next() (*Batch, error) {
	select {
	case <-cr.stop:
		if !cr.ended {
			cr.err, cr.ended, cr.cur = errors.New("read csv: closed before its end"), true, nil
		}
	default:
	}
	for len(cr.cur) == 0 {
		if cr.ended {
			return nil, cr.err
		}
		res, ok := <-cr.pieces
		if !ok {
			cr.ended = true
			continue
		}
		p := <-res
		if p.err != nil {
			cr.err, cr.ended = fmt.Errorf("read csv: %w", p.err), true
			cr.Close()
			continue
		}
		cr.rows += p.rows
		cr.malformed += p.malformed
		cr.rejects = append(cr.rejects, p.rejects[:min(len(p.rejects), MaxRejects-len(cr.rejects))]...)
		cr.cur, cr.curRuns, cr.curParts = p.batches, p.runs, p.parts
	}
	b := cr.cur[0]
	cr.cur[0] = nil
	cr.cur, cr.run, cr.part = cr.cur[1:], cr.curRuns[0], cr.curParts[0]
	cr.curRuns, cr.curParts = cr.curRuns[1:], cr.curParts[1:]
	return b, nil
}

// Run is the run (NewCSVReaderCut; 0 without cuts) of the records of the
// batch Next returned last.
func (cr *CSVReader) Run() int { return cr.run }

// Part is the part (NewCSVReaderParted; 0 without) of the records of the
// batch Next returned last.
func (cr *CSVReader) Part() int { return cr.part }

// Parted reports whether the reader parts its records (a PartBy with Of).
func (cr *CSVReader) Parted() bool { return cr.parted }

// Counts are the data records read and those skipped, once Next has
// returned the end.
func (cr *CSVReader) Counts() (rows, malformed int64) { return cr.rows, cr.malformed }

// Rejects are the first MaxRejects records skipped, in the file's order,
// once Next has returned the end.
func (cr *CSVReader) Rejects() []Reject { return cr.rejects }

// Close stops the reading and parsing, and waits until they have stopped.
func (cr *CSVReader) Close() {
	cr.once.Do(func() { close(cr.stop) })
	cr.wg.Wait()
}

// piece is a run of whole records to parse, and where its result goes.
type piece struct {
	data []byte
	base int64 // where data starts in the file
	res  chan<- parsed
}

// pieceParser parses pieces of one file into batches.
type pieceParser struct {
	sp     csvio.Splitter
	max    int
	width  int
	rows   []*TextRows               // the rows held, by part
	cuts   []int64                   // where the runs of records start (NewCSVReaderCut)
	partOf func(fields [][]byte) int // nil: every record in part 0
}

// parse parses a piece of whole records (the end of an input, as far as
// its records go), which starts at byte base of the file, into batches: a
// full batch at each BatchRows rows, the rest in one more.
func (p *pieceParser) parse(data []byte, base int64) parsed {
	var out parsed
	run := 0 // the run of the rows held
	flush := func(part int) {
		if b := p.rows[part].Batch(); b != nil {
			out.batches, out.runs, out.parts = append(out.batches, b), append(out.runs, run), append(out.parts, part)
		}
	}
	flushAll := func() {
		for part := range p.rows {
			flush(part)
		}
	}
	span := 0 // the record's bytes, the blank lines before it included
	for at := base; len(data) > 0; {
		kind, fields, n := p.sp.Next(data, true)
		if kind == csvio.NeedMore {
			break
		}
		raw := data[:n]
		data, span = data[n:], span+n
		start := at // where the record starts, after the blank lines before it
		at += int64(n)
		if kind == csvio.Blank {
			continue
		}
		if run < len(p.cuts) && start >= p.cuts[run] {
			flushAll()
			for run < len(p.cuts) && start >= p.cuts[run] {
				run++
			}
		}
		out.rows++
		tooLong := p.max > 0 && span > p.max
		span = 0
		if tooLong || kind != csvio.Record || len(fields) != p.width {
			out.malformed++
			if len(out.rejects) < MaxRejects {
				why := FieldCount
				if tooLong {
					why = TooLong
				} else if kind != csvio.Record {
					why = Quoting
				}
				out.rejects = append(out.rejects, Reject{Offset: start, Kind: why, Head: slices.Clone(raw[:min(len(raw), RejectHead)])})
			}
			continue
		}
		part := 0
		if p.partOf != nil {
			part = p.partOf(fields)
		}
		p.rows[part].Add(fields)
		if p.rows[part].Rows() == BatchRows {
			flush(part)
		}
	}
	flushAll()
	return out
}

// cutter reads a file and cuts it into pieces of whole records.
type cutter struct {
	r     io.Reader
	size  int    // how much to read at once
	carry []byte // read, not yet cut
	pos   int64  // where carry starts in the file
	own   []byte // carry's memory between pieces
	eof   bool
	free  chan []byte // pieces parsed, whose memory may be read into again
}

// bom is the UTF-8 byte order mark, which the file's start may hold.
var bom = []byte{0xEF, 0xBB, 0xBF}

// header reads the file's header row (after a byte order mark and blank
// lines, as csvio.Scanner reads it): its names.
func (c *cutter) header() ([]string, error) {
	var sp csvio.Splitter
	bomDone := false
	for at := 0; ; {
		if !bomDone && (len(c.carry) >= len(bom) || c.eof) {
			bomDone = true
			if len(c.carry) >= len(bom) && string(c.carry[:len(bom)]) == string(bom) {
				at = len(bom)
			}
		}
		if bomDone {
			kind, fields, n := sp.Next(c.carry[at:], c.eof)
			switch kind {
			case csvio.Blank:
				at += n
				continue
			case csvio.Malformed:
				return nil, fmt.Errorf("read csv: the header row is malformed")
			case csvio.Record:
				names := make([]string, len(fields))
				for i, f := range fields {
					names[i] = string(f)
				}
				c.carry = c.carry[at+n:]
				c.pos = int64(at + n)
				return names, nil
			}
		}
		if c.eof {
			return nil, fmt.Errorf("read csv: no header row")
		}
		if err := c.fill(); err != nil {
			return nil, fmt.Errorf("read csv header: %w", err)
		}
	}
}

// next returns the next piece: whole records ending where a record that is
// not a blank line ends, or at the end of the file, the rest; nil at the
// end.
func (c *cutter) next() ([]byte, error) {
	for {
		if c.eof {
			p := c.carry
			c.carry = nil
			if len(p) == 0 {
				return nil, nil
			}
			c.pos += int64(len(p))
			return p, nil
		}
		if err := c.fill(); err != nil {
			return nil, err
		}
		if c.eof {
			continue
		}
		whole := trimBlank(c.carry[:csvio.CompleteRecords(c.carry)])
		if whole == 0 {
			continue // the record needs more: the carry grows
		}
		p := c.carry[:whole]
		c.own = append(c.own[:0], c.carry[whole:]...)
		c.carry = c.own
		c.pos += int64(whole)
		return p, nil
	}
}

// trimBlank is the length of whole records (from a record's start) less
// the blank lines at their end: those go with the record after them, whose
// length they count in. A line end at the start or after a line end is a
// blank line, as is "\r\n" there: no record but a blank line ends in two
// line ends in a row, since a quoted field closes with a quote.
func trimBlank(whole []byte) int {
	n := len(whole)
	for {
		switch {
		case n >= 1 && whole[n-1] == '\n' && (n == 1 || whole[n-2] == '\n'):
			n--
		case n >= 2 && whole[n-1] == '\n' && whole[n-2] == '\r' && (n == 2 || whole[n-3] == '\n'):
			n -= 2
		default:
			return n
		}
	}
}

// fill reads up to size bytes more after carry, into memory of a parsed
// piece when there is some.
func (c *cutter) fill() error {
	var buf []byte
	select {
	case buf = <-c.free:
	default:
	}
	if cap(buf) < len(c.carry)+c.size {
		buf = make([]byte, 0, len(c.carry)+c.size)
	}
	buf = append(buf[:0], c.carry...)
	n, err := io.ReadFull(c.r, buf[len(buf):cap(buf)])
	c.carry = buf[:len(buf)+n]
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		c.eof = true
	case err != nil:
		return err
	}
	return nil
}
