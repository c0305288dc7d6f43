package ingest

import (
	"bytes"
	"fmt"

	"github.com/wololo/wololo/services/dataflow/csvio"
	"github.com/wololo/wololo/services/dataflow/schema"
)

// Ingest turns one input file's bytes, fed in chunks of any size, into
// records, each well-formed one's fields handed to Text, and counts what it
// read and skipped. It is pure: no I/O, no clock.
type Ingest struct {
	split  csvio.Splitter
	carry  []byte // bytes of a record not yet complete
	offset int64  // file offset of carry[0]: everything before is consumed
	Report schema.FileReport

	// MaxRecord bounds the bytes held for one record: a longer record is
	// skipped (RecordSkipper, nothing more held) and counted as malformed,
	// as the reference counts it. schema.MaxRecordBytes unless set.
	MaxRecord int
	// OnOversized, if set, hears the file offset of each record skipped
	// for its size.
	OnOversized func(offset int64)
	// Text takes each well-formed record's fields (valid only during the
	// call): the upload of a job, whose plan reads the file's columns as
	// text (services/dataflow/sql/sqlops.Source). A record of another
	// field count than TextWidth (the header's) is malformed.
	Text      func(fields [][]byte)
	TextWidth int

	skipping bool
	skipFrom int64  // where the record being skipped began
	skipHead []byte // its first bytes, for its Reject
	skipper  csvio.RecordSkipper
}

// New returns an Ingest that starts at the given file offset (the end of
// the header, or a resume point) with what was counted before it. The
// offsets it keeps only grow by the lengths of the bytes it is fed, so
// they stay within the bytes its caller has counted (the gateway's upload
// path counts them, with checked arithmetic, against the file's declared
// size); a negative start is refused.
func New(offset int64, report schema.FileReport) (*Ingest, error) {
	in := &Ingest{offset: offset, Report: report}
	if in.Report.Missing == nil {
		in.Report.Missing = map[string]int64{}
	}
	if offset < 0 {
		return in, fmt.Errorf("an upload cannot start at offset %d", offset)
	}
	return in, nil
}

// Pending is the number of bytes held for a record not yet complete.
func (in *Ingest) Pending() int { return len(in.carry) }

// Offset is the file offset up to which every record has been handed on.
// While a record too long to hold is being skipped it is where that record
// began: an upload resumed from there meets the record again.
func (in *Ingest) Offset() int64 {
	if in.skipping {
		return in.skipFrom
	}
	return in.offset
}

// Feed parses every complete record of the bytes fed so far and hands its
// fields to Text. With atEOF the input ends here and a last record without a newline
// is complete. The records that lie whole in data are parsed where they
// are: only a record cut by a chunk's end is copied, into the carry, and
// completed with the start of the next chunk (joinCarry).
func (in *Ingest) Feed(data []byte, atEOF bool) {
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
		data = in.joinCarry(data, atEOF)
	}
	in.carry = append(in.carry, in.parse(data, atEOF)...)
	if max := in.RecordLimit(); len(in.carry) > max && !atEOF {
		// Too long to hold: skip the rest of this record as it comes.
		in.skipping, in.skipFrom, in.skipper = true, in.offset, csvio.RecordSkipper{}
		in.skipHead = append(in.skipHead[:0], in.carry[:min(len(in.carry), schema.RejectHeadBytes)]...)
		carry := in.carry
		in.carry = nil // let the held bytes go
		in.Feed(carry, false)
	}
}

// joinCarry parses the carry (the bytes of a record not yet complete)
// with data's bytes up to its first line end, which usually complete it,
// and returns the bytes of data it did not take. When the carry still
// holds a record that is not complete (a quoted field with a line break)
// and data has more, it takes all of data, as if fed at once.
func (in *Ingest) joinCarry(data []byte, atEOF bool) []byte {
	line := len(data)
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		line = i + 1
	}
	in.carry = append(in.carry, data[:line]...)
	data = data[line:]
	in.carry = append(in.carry[:0], in.parse(in.carry, atEOF && len(data) == 0)...)
	if len(in.carry) == 0 || len(data) == 0 {
		return data
	}
	in.carry = append(in.carry, data...)
	in.carry = append(in.carry[:0], in.parse(in.carry, atEOF)...)
	return nil
}

// parse hands on the records of buf, counting every one, and returns the
// bytes after the last complete one: a record that needs more (none when
// atEOF).
func (in *Ingest) parse(buf []byte, atEOF bool) []byte {
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
			in.record(fields, at, raw)
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

// record hands a record of fields, the bytes raw at offset at, to Text,
// or counts it malformed for its field count.
func (in *Ingest) record(f [][]byte, at int64, raw []byte) {
	if in.widthRight(f, in.TextWidth, at, raw) {
		in.Text(f)
	}
}
