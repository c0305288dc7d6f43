package segstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sync"

	"github.com/wololo/wololo/transport"
)

// Record framing (see doc.go): a record is
//
//	length  uint32 little-endian   bytes of payload
//	crc     uint32 little-endian   CRC-32C (Castagnoli) of payload
//	payload length bytes: kind, body, trailer
//
// and every payload ends with an 8-byte trailer, the offset up to which
// the segment was known to be on stable storage when the record was made
// (see "Torn tails" in doc.go).
const (
	frameLen   = 8
	trailerLen = 8
	// minPayload is a kind byte and the trailer.
	minPayload = 1 + trailerLen
	// maxPayload is what the length field can say.
	maxPayload = math.MaxUint32

	formatVersion = 1
	segMagic      = "wololo segstore"
)

// Payload kinds.
const (
	kindHeader      byte = 1 // first record of every segment
	kindCommit      byte = 2 // one transport.Commit
	kindTrim        byte = 3 // one Trim
	kindDrop        byte = 4 // one DropJob, the job's tombstone
	kindIncarnation byte = 5 // one NextIncarnation
	kindCopy        byte = 6 // live items copied forward by compaction
	kindAck         byte = 7 // one Acknowledge: a trim's layout, no entry dropped

	lastKind = kindAck
)

// Tags of the items of a copy record.
const (
	tagJob         byte = 1 // the job exists
	tagWatermark   byte = 2
	tagReserved    byte = 3
	tagAcked       byte = 4
	tagRecord      byte = 5
	tagEntry       byte = 6
	tagState       byte = 7
	tagTombstone   byte = 8
	tagIncarnation byte = 9
)

// Flags of a commit and of an outbox entry.
const (
	commitReset    byte = 1 << 0
	commitHasState byte = 1 << 1

	entryEOF     byte = 1 << 0
	entryHasRows byte = 1 << 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(crc uint32, p []byte) uint32 { return crc32.Update(crc, castagnoli, p) }

// appendFrame appends the frame of a payload of n bytes with checksum crc.
func appendFrame(b []byte, n int, crc uint32) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	return binary.LittleEndian.AppendUint32(b, crc)
}

// parseFrame reads a frame: the payload length and checksum.
func parseFrame(h []byte) (n int64, crc uint32) {
	return int64(binary.LittleEndian.Uint32(h)), binary.LittleEndian.Uint32(h[4:])
}

func appendTrailer(b []byte, synced int64) []byte {
	return binary.LittleEndian.AppendUint64(b, uint64(synced))
}

// putTrailer sets the trailer of a whole payload.
func putTrailer(p []byte, synced int64) {
	binary.LittleEndian.PutUint64(p[len(p)-trailerLen:], uint64(synced))
}

// trailerOf returns a payload's trailer: the synced offset it claims.
func trailerOf(p []byte) uint64 {
	return binary.LittleEndian.Uint64(p[len(p)-trailerLen:])
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// appendChannel encodes ch relative to the job of the record or item that
// holds it: its Job component is one 0 byte when it is that job.
func appendChannel(b []byte, job string, ch transport.ChannelID) []byte {
	if ch.Job == job {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(ch.Job))+1)
		b = append(b, ch.Job...)
	}
	b = appendString(b, ch.Stream)
	b = appendString(b, ch.Sender)
	return appendString(b, ch.Receiver)
}

// channelSize is len(appendChannel(nil, job, ch)).
func channelSize(job string, ch transport.ChannelID) int {
	n := 1
	if ch.Job != job {
		n = uvarintLen(uint64(len(ch.Job))+1) + len(ch.Job)
	}
	return n + stringSize(ch.Stream) + stringSize(ch.Sender) + stringSize(ch.Receiver)
}

func stringSize(s string) int { return uvarintLen(uint64(len(s))) + len(s) }

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// errFormat is wrapped by every decoding error: a payload whose checksum
// matched but whose content does not parse.
var errFormat = errors.New("malformed record")

// decoder reads a payload. The first error sticks; later reads return
// zero values, so a caller checks err once at the end.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w at payload byte %d: %s", errFormat, d.off, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) byte() byte {
	if d.err != nil || d.off >= len(d.b) {
		d.fail("truncated")
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.off += n
	return v
}

// span returns the offset of the next n bytes and skips them.
func (d *decoder) span(n uint64) (off, length int) {
	if d.err != nil {
		return 0, 0
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail("length %d beyond the payload", n)
		return 0, 0
	}
	off = d.off
	d.off += int(n)
	return off, int(n)
}

func (d *decoder) bytes() []byte {
	off, n := d.span(d.uvarint())
	return d.b[off : off+n]
}

func (d *decoder) str() string { return string(d.bytes()) }

func (d *decoder) channel(job string) transport.ChannelID {
	var ch transport.ChannelID
	switch n := d.uvarint(); n {
	case 0:
		ch.Job = job
	default:
		off, l := d.span(n - 1)
		ch.Job = string(d.b[off : off+l])
	}
	ch.Stream, ch.Sender, ch.Receiver = d.str(), d.str(), d.str()
	return ch
}

// left returns the bytes not read yet.
func (d *decoder) left() int { return len(d.b) - d.off }

// record is a decoded payload. Offsets are payload offsets.
type record struct {
	kind   byte
	synced uint64

	segno  uint64 // header
	commit *commitRec
	trimCh transport.ChannelID // trim, ack
	trimTo uint64
	job    string     // drop
	inc    uint64     // incarnation
	items  []copyItem // copy
}

// commitRec is a commit record's content, as the decoder finds it and as
// the encoder lays it out; size fields are each part's encoded bytes, the
// unit of the live-bytes accounting.
type commitRec struct {
	job      string
	reset    bool
	inputs   []wmOp
	outputs  []entryOp
	records  []recordOp
	hasState bool
	stateOff int
	stateLen int
	stateSz  int
	// n is the job's state-log index before the commit: the index of its
	// state entry, and the start of the log after a reset.
	n uint64
}

type wmOp struct {
	ch   transport.ChannelID
	v    uint64
	size int
}

type entryOp struct {
	ch      transport.ChannelID
	seq     uint64
	eof     bool
	hasRows bool
	rowsOff int
	rowsLen int
	size    int
}

type recordOp struct {
	name  string
	value []byte // the caller's slice (encoder) or a slice of the payload (decoder)
	size  int
}

// copyItem is one item of a copy record.
type copyItem struct {
	tag     byte
	job     string
	ch      transport.ChannelID
	v       uint64 // value, seq or state index
	name    string
	eof     bool
	hasRows bool
	dataOff int // record value, rows or state entry
	dataLen int
	size    int
}

// decodePayload parses a payload whose checksum matched. It never panics
// on arbitrary bytes (FuzzDecode).
func decodePayload(p []byte) (*record, error) {
	if len(p) < minPayload {
		return nil, fmt.Errorf("%w: payload of %d bytes", errFormat, len(p))
	}
	// The decoder never sees the trailer: no field can run into it.
	d := &decoder{b: p[:len(p)-trailerLen]}
	r := &record{kind: d.byte(), synced: trailerOf(p)}
	switch r.kind {
	case kindHeader:
		if magic := d.str(); magic != segMagic && d.err == nil {
			return nil, fmt.Errorf("%w: not a segment (magic %q)", errFormat, magic)
		}
		if v := d.uvarint(); v != formatVersion && d.err == nil {
			return nil, fmt.Errorf("%w: format version %d, this build reads %d", errFormat, v, formatVersion)
		}
		r.segno = d.uvarint()
	case kindCommit:
		r.commit = decodeCommit(d)
	case kindTrim, kindAck:
		job := d.str()
		r.trimCh = d.channel(job)
		r.trimTo = d.uvarint()
	case kindDrop:
		r.job = d.str()
	case kindIncarnation:
		r.inc = d.uvarint()
	case kindCopy:
		for d.err == nil && d.left() > 0 {
			r.items = append(r.items, decodeItem(d))
		}
	default:
		return nil, fmt.Errorf("%w: unknown kind %d", errFormat, r.kind)
	}
	if d.err == nil && d.left() != 0 {
		d.fail("%d bytes left before the trailer", d.left())
	}
	if d.err != nil {
		return nil, d.err
	}
	return r, nil
}

func decodeCommit(d *decoder) *commitRec {
	c := &commitRec{job: d.str()}
	flags := d.byte()
	c.reset, c.hasState = flags&commitReset != 0, flags&commitHasState != 0
	for n := d.uvarint(); n > 0 && d.err == nil; n-- {
		start := d.off
		op := wmOp{ch: d.channel(c.job), v: d.uvarint()}
		op.size = d.off - start
		c.inputs = append(c.inputs, op)
	}
	for n := d.uvarint(); n > 0 && d.err == nil; n-- {
		start := d.off
		op := entryOp{ch: d.channel(c.job), seq: d.uvarint()}
		f := d.byte()
		op.eof, op.hasRows = f&entryEOF != 0, f&entryHasRows != 0
		if op.hasRows {
			op.rowsOff, op.rowsLen = d.span(d.uvarint())
		}
		op.size = d.off - start
		c.outputs = append(c.outputs, op)
	}
	for n := d.uvarint(); n > 0 && d.err == nil; n-- {
		start := d.off
		op := recordOp{name: d.str(), value: d.bytes()}
		op.size = d.off - start
		c.records = append(c.records, op)
	}
	if c.hasState {
		start := d.off
		c.stateOff, c.stateLen = d.span(d.uvarint())
		c.stateSz = d.off - start
	}
	c.n = d.uvarint()
	return c
}

func decodeItem(d *decoder) copyItem {
	start := d.off
	it := copyItem{tag: d.byte()}
	if it.tag != tagIncarnation {
		it.job = d.str()
	}
	switch it.tag {
	case tagJob, tagTombstone:
	case tagWatermark, tagReserved, tagAcked:
		it.ch = d.channel(it.job)
		it.v = d.uvarint()
	case tagRecord:
		it.name = d.str()
		it.dataOff, it.dataLen = d.span(d.uvarint())
	case tagEntry:
		it.ch = d.channel(it.job)
		it.v = d.uvarint()
		f := d.byte()
		it.eof, it.hasRows = f&entryEOF != 0, f&entryHasRows != 0
		if it.hasRows {
			it.dataOff, it.dataLen = d.span(d.uvarint())
		}
	case tagState:
		it.v = d.uvarint()
		it.dataOff, it.dataLen = d.span(d.uvarint())
	case tagIncarnation:
		it.v = d.uvarint()
	default:
		d.fail("unknown item tag %d", it.tag)
	}
	it.size = d.off - start
	return it
}

// encodedCommit is a commit's payload without its tail: the body, then
// the state, are built outside the store's lock, the tail (state index
// and trailer) under it.
type encodedCommit struct {
	body  []byte
	state []byte // c.State itself, the end of the body's bytes on disk
	crc   uint32 // of body and state
	rec   *commitRec
}

// encodeCommit encodes everything of c that does not depend on earlier
// commits; rows (encoded by the Committer) are copied into the body. The
// state, the bulk of a stage's commits (its journal of the batches it
// applied, or a snapshot of tens of megabytes), is not: the record is
// written from c.State itself, after the body, which Commit may do as it
// returns only once the record is written.
func encodeCommit(c *transport.Commit) (*encodedCommit, error) {
	rec := &commitRec{job: c.Job, reset: c.ResetState, hasState: c.State != nil}
	size := 1 + stringSize(c.Job) + 1 + 3*binary.MaxVarintLen64 + binary.MaxVarintLen64
	for ch := range c.Inputs {
		size += channelSize(c.Job, ch) + binary.MaxVarintLen64
	}
	for _, e := range c.Outputs {
		size += channelSize(c.Job, e.Channel) + 2*binary.MaxVarintLen64 + 1
		size += len(e.Rows)
	}
	for name, v := range c.Records {
		size += stringSize(name) + binary.MaxVarintLen64 + len(v)
	}
	b := getBuffer(size)
	b = append(b, kindCommit)
	b = appendString(b, c.Job)
	var flags byte
	if c.ResetState {
		flags |= commitReset
	}
	if c.State != nil {
		flags |= commitHasState
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(c.Inputs)))
	for ch, v := range c.Inputs {
		start := len(b)
		b = appendChannel(b, c.Job, ch)
		b = binary.AppendUvarint(b, v)
		rec.inputs = append(rec.inputs, wmOp{ch: ch, v: v, size: len(b) - start})
	}
	b = binary.AppendUvarint(b, uint64(len(c.Outputs)))
	for _, e := range c.Outputs {
		start := len(b)
		b = appendChannel(b, c.Job, e.Channel)
		b = binary.AppendUvarint(b, e.Seq)
		var f byte
		if e.EOF {
			f |= entryEOF
		}
		if e.Rows != nil {
			f |= entryHasRows
		}
		b = append(b, f)
		op := entryOp{ch: e.Channel, seq: e.Seq, eof: e.EOF, hasRows: e.Rows != nil}
		if e.Rows != nil {
			b = binary.AppendUvarint(b, uint64(len(e.Rows)))
			op.rowsOff = len(b)
			b = append(b, e.Rows...)
			op.rowsLen = len(e.Rows)
		}
		op.size = len(b) - start
		rec.outputs = append(rec.outputs, op)
	}
	b = binary.AppendUvarint(b, uint64(len(c.Records)))
	for name, v := range c.Records {
		start := len(b)
		b = appendString(b, name)
		b = appendBytes(b, v)
		rec.records = append(rec.records, recordOp{name: name, value: v, size: len(b) - start})
	}
	if c.State != nil {
		start := len(b)
		b = binary.AppendUvarint(b, uint64(len(c.State)))
		rec.stateOff, rec.stateLen = len(b), len(c.State)
		rec.stateSz = len(b) - start + len(c.State)
	}
	return &encodedCommit{body: b, state: c.State, crc: checksum(checksum(0, b), c.State), rec: rec}, nil
}

// Commit bodies are recycled once written: a 1 MiB commit then costs
// no fresh (zeroed) megabyte, nor the garbage collection of one.
var buffers sync.Pool

// maxPooled bounds the buffers kept for reuse.
const maxPooled = 8 << 20

func getBuffer(size int) []byte {
	if size <= maxPooled {
		if p, ok := buffers.Get().(*[]byte); ok {
			if cap(*p) >= size {
				return (*p)[:0]
			}
			buffers.Put(p) // for a smaller commit
		}
	}
	return make([]byte, 0, size)
}

// putBuffer gives back a body no longer referenced.
func putBuffer(b []byte) {
	if cap(b) <= maxPooled {
		buffers.Put(&b)
	}
}

// commitTail is the end of a commit's payload: the state index and the
// trailer.
func commitTail(n uint64, synced int64) []byte {
	b := make([]byte, 0, binary.MaxVarintLen64+trailerLen)
	return appendTrailer(binary.AppendUvarint(b, n), synced)
}

// headerPayload, markPayload, dropPayload and incarnationPayload are the
// payloads of the small records, made whole under the lock.
func headerPayload(segno uint64) []byte {
	b := []byte{kindHeader}
	b = appendString(b, segMagic)
	b = binary.AppendUvarint(b, formatVersion)
	b = binary.AppendUvarint(b, segno)
	return appendTrailer(b, 0)
}

// markPayload is a trim's (kind kindTrim) or an ack's (kindAck): the
// channel and the seq of its acked mark.
func markPayload(kind byte, ch transport.ChannelID, seq uint64, synced int64) []byte {
	b := []byte{kind}
	b = appendString(b, ch.Job)
	b = appendChannel(b, ch.Job, ch)
	b = binary.AppendUvarint(b, seq)
	return appendTrailer(b, synced)
}

func dropPayload(job string, synced int64) []byte {
	b := appendString([]byte{kindDrop}, job)
	return appendTrailer(b, synced)
}

func incarnationPayload(n uint64, synced int64) []byte {
	b := binary.AppendUvarint([]byte{kindIncarnation}, n)
	return appendTrailer(b, synced)
}

// frameRecord returns a whole record: frame and payload.
func frameRecord(p []byte) []byte {
	return append(appendFrame(make([]byte, 0, frameLen+len(p)), len(p), checksum(0, p)), p...)
}

// copyEncoder builds the body of a copy record (kind byte and items) and
// the items' layout, as decodePayload would find it.
type copyEncoder struct {
	b     []byte
	items []copyItem
}

func newCopyEncoder() *copyEncoder { return &copyEncoder{b: []byte{kindCopy}} }

func (e *copyEncoder) add(it copyItem, data []byte) {
	start := len(e.b)
	e.b = append(e.b, it.tag)
	if it.tag != tagIncarnation {
		e.b = appendString(e.b, it.job)
	}
	switch it.tag {
	case tagWatermark, tagReserved, tagAcked:
		e.b = appendChannel(e.b, it.job, it.ch)
		e.b = binary.AppendUvarint(e.b, it.v)
	case tagRecord:
		e.b = appendString(e.b, it.name)
		e.b = binary.AppendUvarint(e.b, uint64(len(data)))
		it.dataOff, it.dataLen = len(e.b), len(data)
		e.b = append(e.b, data...)
	case tagEntry:
		e.b = appendChannel(e.b, it.job, it.ch)
		e.b = binary.AppendUvarint(e.b, it.v)
		var f byte
		if it.eof {
			f |= entryEOF
		}
		if it.hasRows {
			f |= entryHasRows
		}
		e.b = append(e.b, f)
		if it.hasRows {
			e.b = binary.AppendUvarint(e.b, uint64(len(data)))
			it.dataOff, it.dataLen = len(e.b), len(data)
			e.b = append(e.b, data...)
		}
	case tagState:
		e.b = binary.AppendUvarint(e.b, it.v)
		e.b = binary.AppendUvarint(e.b, uint64(len(data)))
		it.dataOff, it.dataLen = len(e.b), len(data)
		e.b = append(e.b, data...)
	case tagIncarnation:
		e.b = binary.AppendUvarint(e.b, it.v)
	}
	it.size = len(e.b) - start
	e.items = append(e.items, it)
}
