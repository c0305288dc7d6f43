package ingest

import (
	"bytes"
	"fmt"

	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/csvio"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// Ingest turns one input file's bytes, fed in chunks of any size, into
// projected rows on one output stream, and counts what it read, skipped and
// left out. It is pure: no I/O, no clock.
type Ingest struct {
	file    schema.File
	stream  string
	matches schema.MatchColumns
	players schema.PlayerColumns
	split   csvio.Splitter
	carry   []byte // bytes of a record not yet complete
	offset  int64  // file offset of carry[0]: everything before is consumed
	Report  schema.FileReport

	// MaxRecord bounds the bytes held for one record: a longer record is
	// skipped (RecordSkipper, nothing more held) and counted as malformed,
	// as the reference counts it. schema.MaxRecordBytes unless set.
	MaxRecord int
	// OnOversized, if set, hears the file offset of each record skipped
	// for its size.
	OnOversized func(offset int64)
	// Text, when set, takes each well-formed record's fields (valid only
	// during the call) instead of the file's typed row: the upload of a
	// job of SQL queries, whose plan reads the file's columns as text
	// (services/dataflow/sql/sqlops.Source). A record of another field
	// count than TextWidth is malformed, as the typed rows' rule has it.
	Text      func(fields [][]byte)
	TextWidth int

	skipping bool
	skipFrom int64  // where the record being skipped began
	skipHead []byte // its first bytes, for its Reject
	skipper  csvio.RecordSkipper

	m batch.Match
	p batch.Player
}

// New returns an Ingest for a file whose header is names, starting at the
// given file offset (the end of the header, or a resume point).
func New(file schema.File, names []string, stream string, offset int64, report schema.FileReport) (*Ingest, error) {
	cols, err := ParseColumns(file, names)
	if err != nil {
		return &Ingest{file: file, stream: stream, offset: offset, Report: report}, err
	}
	return FromColumns(file, cols, stream, offset, report)
}

// Columns is where the columns the queries read are in a file's records,
// and how many fields a record has: all a caller needs to keep of a file's
// header to parse its records (the gateway keeps it for each job, the
// names staying in the job's record in the store).
type Columns struct {
	Matches schema.MatchColumns  // of a schema.Matches file
	Players schema.PlayerColumns // of a schema.Players file
}

// ParseColumns finds the required columns of file in its header's names.
func ParseColumns(file schema.File, names []string) (Columns, error) {
	header := make([][]byte, len(names))
	for i, c := range names {
		header[i] = []byte(c)
	}
	return parseHeader(file, header)
}

// parseHeader finds the required columns of file in its header record.
func parseHeader(file schema.File, header [][]byte) (Columns, error) {
	var c Columns
	var err error
	switch file {
	case schema.Matches:
		c.Matches, err = schema.ParseMatchHeader(header)
	case schema.Players:
		c.Players, err = schema.ParsePlayerHeader(header)
	default:
		err = fmt.Errorf("unknown file %d", file)
	}
	return c, err
}

// FromColumns is New with the header parsed already. The offsets it keeps
// only grow by the lengths of the bytes it is fed, so they stay within the
// bytes its caller has counted (the gateway's upload path counts them, with
// checked arithmetic, against the file's declared size); a negative start
// is refused.
func FromColumns(file schema.File, cols Columns, stream string, offset int64, report schema.FileReport) (*Ingest, error) {
	in := &Ingest{file: file, stream: stream, offset: offset, Report: report, matches: cols.Matches, players: cols.Players}
	if in.Report.Missing == nil {
		in.Report.Missing = map[string]int64{}
	}
	if offset < 0 {
		return in, fmt.Errorf("%s: an upload cannot start at offset %d", file, offset)
	}
	return in, nil
}

// Pending is the number of bytes held for a record not yet complete.
func (in *Ingest) Pending() int { return len(in.carry) }

// Offset is the file offset up to which every record has been emitted.
// While a record too long to hold is being skipped it is where that record
// began: an upload resumed from there meets the record again.
func (in *Ingest) Offset() int64 {
	if in.skipping {
		return in.skipFrom
	}
	return in.offset
}

// Feed parses every complete record of the bytes fed so far and emits its
// row. With atEOF the input ends here and a last record without a newline
// is complete. The records that lie whole in data are parsed where they
// are: only a record cut by a chunk's end is copied, into the carry, and
// completed with the start of the next chunk (joinCarry).
func (in *Ingest) Feed(data []byte, atEOF bool, out stage.Emitter) {
	if in.skipping {
		n, ended := in.skipper.Skip(data)
		in.offset += int64(n)
		data = data[n:]
		if !ended && !atEOF {
			return
		}
		in.endSkip()
	}
	if len(in.carry) > 0 {
		data = in.joinCarry(data, atEOF, out)
	}
	in.carry = append(in.carry, in.parse(data, atEOF, out)...)
	if max := in.RecordLimit(); len(in.carry) > max && !atEOF {
		// Too long to hold: skip the rest of this record as it comes.
		in.skipping, in.skipFrom, in.skipper = true, in.offset, csvio.RecordSkipper{}
		in.skipHead = append(in.skipHead[:0], in.carry[:min(len(in.carry), schema.RejectHeadBytes)]...)
		carry := in.carry
		in.carry = nil // let the held bytes go
		in.Feed(carry, false, out)
	}
}

// joinCarry parses the carry (the bytes of a record not yet complete)
// with data's bytes up to its first line end, which usually complete it,
// and returns the bytes of data it did not take. When the carry still
// holds a record that is not complete (a quoted field with a line break)
// and data has more, it takes all of data, as if fed at once.
func (in *Ingest) joinCarry(data []byte, atEOF bool, out stage.Emitter) []byte {
	line := len(data)
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		line = i + 1
	}
	in.carry = append(in.carry, data[:line]...)
	data = data[line:]
	in.carry = append(in.carry[:0], in.parse(in.carry, atEOF && len(data) == 0, out)...)
	if len(in.carry) == 0 || len(data) == 0 {
		return data
	}
	in.carry = append(in.carry, data...)
	in.carry = append(in.carry[:0], in.parse(in.carry, atEOF, out)...)
	return nil
}

// parse emits the records of buf, counting every one, and returns the
// bytes after the last complete one: a record that needs more (none when
// atEOF).
func (in *Ingest) parse(buf []byte, atEOF bool, out stage.Emitter) []byte {
	for {
		kind, fields, n := in.split.Next(buf, atEOF)
		if kind == csvio.NeedMore {
			return buf
		}
		raw := buf[:n]
		buf = buf[n:]
		at := in.offset
		in.offset += int64(n)
		reason := schema.RejectQuoting
		if n > in.RecordLimit() && kind != csvio.Blank {
			kind, reason = csvio.Malformed, schema.RejectTooLong // too long, whole or not: as the reference counts it
			in.oversized(at)
		}
		switch kind {
		case csvio.Blank:
		case csvio.Malformed:
			in.Report.Rows++
			in.Report.Malformed++
			in.Report.AddReject(at, reason, raw)
		case csvio.Record:
			in.Report.Rows++
			in.record(fields, at, raw, out)
		}
	}
}

// RecordLimit is the most bytes held for one record: MaxRecord, or
// schema.MaxRecordBytes unless it is set.
func (in *Ingest) RecordLimit() int {
	if in.MaxRecord > 0 {
		return in.MaxRecord
	}
	return schema.MaxRecordBytes
}

// endSkip counts the record just skipped for its size.
func (in *Ingest) endSkip() {
	in.skipping = false
	in.Report.Rows++
	in.Report.Malformed++
	in.Report.AddReject(in.skipFrom, schema.RejectTooLong, in.skipHead)
	in.oversized(in.skipFrom)
}

func (in *Ingest) oversized(at int64) {
	in.Report.AddOversized(at)
	if in.OnOversized != nil {
		in.OnOversized(at)
	}
}

func (in *Ingest) missing(column string) { in.Report.Missing[column]++ }

// widthRight reports whether a record has the header's width of fields,
// and counts and lists it malformed when it has not.
func (in *Ingest) widthRight(f [][]byte, width int, at int64, raw []byte) bool {
	if len(f) == width {
		return true
	}
	in.Report.Malformed++
	in.Report.AddReject(at, schema.RejectFieldCount, raw)
	return false
}

// record emits the row of a record of fields, the bytes raw at offset at,
// or counts it malformed for its field count.
func (in *Ingest) record(f [][]byte, at int64, raw []byte, out stage.Emitter) {
	if in.Text != nil {
		if in.widthRight(f, in.TextWidth, at, raw) {
			in.Text(f)
		}
		return
	}
	if in.file == schema.Matches {
		c := &in.matches
		if !in.widthRight(f, c.Fields, at, raw) {
			return
		}
		m := &in.m
		m.Token, m.Ladder, m.Map, m.Server = f[c.Token], f[c.Ladder], f[c.Map], f[c.Server]
		if m.Mirror = batch.TriOf(schema.ParseBool(f[c.Mirror])); m.Mirror == batch.Missing {
			in.missing("mirror")
		}
		if m.AverageRating, m.HasAverageRating = schema.ParseNumber(f[c.AverageRating]); !m.HasAverageRating {
			in.missing("average_rating")
		}
		secs, ok := schema.ParseDuration(f[c.Duration])
		if !ok {
			secs = -1
			in.missing("duration")
		}
		m.DurationSeconds = secs
		out.Match(in.stream, m)
		return
	}
	c := &in.players
	if !in.widthRight(f, c.Fields, at, raw) {
		return
	}
	p := &in.p
	p.Match, p.Civ = f[c.Match], f[c.Civ]
	if len(p.Civ) == 0 {
		in.missing("civ")
	}
	if p.Rating, p.HasRating = schema.ParseNumber(f[c.Rating]); !p.HasRating {
		in.missing("rating")
	}
	if p.Winner = batch.TriOf(schema.ParseBool(f[c.Winner])); p.Winner == batch.Missing {
		in.missing("winner")
	}
	out.Player(in.stream, p)
}
