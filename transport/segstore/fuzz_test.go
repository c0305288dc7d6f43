package segstore

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// seedRecords returns whole records of every kind, as the store writes
// them.
func seedRecords(t testing.TB) [][]byte {
	ch := storetest.Ch("j", "s", "a", "b")
	enc, err := encodeCommit(&transport.Commit{
		Job: "j", Inputs: map[transport.ChannelID]uint64{ch: 3, storetest.Ch("other", "s", "x", "y"): 1},
		Outputs: []transport.Entry{storetest.E(ch, 1, false, "rows"), storetest.E(ch, 2, true, "")},
		Records: map[string][]byte{"r": []byte("v")}, State: []byte("state"), ResetState: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	commit := append(enc.payload(), commitTail(7, 123)...)
	ce := newCopyEncoder()
	ce.add(copyItem{tag: tagJob, job: "j"}, nil)
	ce.add(copyItem{tag: tagWatermark, job: "j", ch: ch, v: 9}, nil)
	ce.add(copyItem{tag: tagReserved, job: "j", ch: ch, v: 9}, nil)
	ce.add(copyItem{tag: tagAcked, job: "j", ch: ch, v: 4}, nil)
	ce.add(copyItem{tag: tagRecord, job: "j", name: "r"}, []byte("value"))
	ce.add(copyItem{tag: tagEntry, job: "j", ch: ch, v: 5, eof: true, hasRows: true}, []byte{0x0a, 0})
	ce.add(copyItem{tag: tagState, job: "j", v: 2}, []byte("st"))
	ce.add(copyItem{tag: tagTombstone, job: "gone"}, nil)
	ce.add(copyItem{tag: tagIncarnation, v: 12}, nil)
	return [][]byte{
		frameRecord(headerPayload(1)),
		frameRecord(commit),
		frameRecord(markPayload(kindTrim, ch, 4, 99)),
		frameRecord(markPayload(kindAck, ch, 6, 99)),
		frameRecord(dropPayload("j", 5)),
		frameRecord(incarnationPayload(3, 0)),
		frameRecord(appendTrailer(ce.b, 1)),
	}
}

// scan does with data what Open does with a segment file, without files:
// frames, checksums, payloads, applied to an index; and looks for a
// durable record after the first bad one. It returns the records applied.
func scan(data []byte) int {
	ix := newIndex()
	n := 0
	for off := 0; off < len(data); {
		if len(data)-off < frameLen {
			break
		}
		plen, crc := parseFrame(data[off:])
		if plen < minPayload || int64(off)+frameLen+plen > int64(len(data)) {
			durableAfter(data[off:], int64(off))
			break
		}
		p := data[off+frameLen : off+frameLen+int(plen)]
		if checksum(0, p) != crc {
			durableAfter(data[off:], int64(off))
			break
		}
		r, err := decodePayload(p)
		if err != nil {
			break
		}
		ix.apply(r, at{seg: 1, off: int64(off), len: frameLen + plen}, p)
		n++
		off += frameLen + int(plen)
	}
	ix.image()
	return n
}

// FuzzDecode: arbitrary bytes, as a payload or as a segment, never panic
// the decoder, the replay into the index or the search for a durable
// record after a bad one.
func FuzzDecode(f *testing.F) {
	recs := seedRecords(f)
	for _, r := range recs {
		f.Add(r)
		f.Add(r[frameLen:])
	}
	f.Add(bytes.Join(recs, nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := decodePayload(data); err == nil {
			newIndex().apply(r, at{seg: 1, len: int64(frameLen + len(data))}, data)
		}
		durableAfter(data, 0)
		scan(data)
	})
}

// The seeds are all valid: scan applies every one.
func TestSeedRecordsScan(t *testing.T) {
	recs := seedRecords(t)
	if n := scan(bytes.Join(recs, nil)); n != len(recs) {
		t.Fatalf("scan applied %d of %d records", n, len(recs))
	}
}

// FuzzCommitRoundTrip: a commit encodes to a payload that decodes to the
// layout the encoder reported (the layout the live accounting uses at
// commit time is the one replay finds), and a copy record of the same
// values does too.
func FuzzCommitRoundTrip(f *testing.F) {
	f.Add("job-1", "q3-civs", "gw", "f0", "other", "offset", uint64(7), uint64(3), []byte("rows"), []byte("state"), byte(3))
	f.Add("", "", "", "", "", "", uint64(0), uint64(0), []byte{}, []byte(nil), byte(0))
	f.Add("j\x00", "\xff", "a", "b", "j\x00", "n", ^uint64(0), ^uint64(0), []byte(nil), []byte{}, byte(0xff))
	f.Fuzz(func(t *testing.T, job, stream, sender, receiver, otherJob, name string, seq, n uint64, rows, state []byte, flags byte) {
		ch := transport.ChannelID{Job: job, Stream: stream, Sender: sender, Receiver: receiver}
		other := transport.ChannelID{Job: otherJob, Stream: stream, Sender: receiver, Receiver: sender}
		c := &transport.Commit{Job: job, Inputs: map[transport.ChannelID]uint64{ch: seq}, Records: map[string][]byte{name: rows},
			ResetState: flags&1 != 0}
		if flags&2 != 0 {
			c.State = append([]byte{}, state...)
		}
		if flags&4 != 0 {
			c.Inputs[other] = n
		}
		e := transport.Entry{Channel: other, Seq: seq, EOF: flags&8 != 0}
		if flags&16 != 0 {
			e.Rows = append([]byte{}, rows...)
		}
		c.Outputs = []transport.Entry{e, {Channel: ch, Seq: n}}
		enc, err := encodeCommit(c)
		if err != nil {
			t.Fatal(err)
		}
		enc.rec.n = n
		body := enc.payload()
		p := append(body, commitTail(n, 42)...)
		if checksum(enc.crc, p[len(body):]) != checksum(0, p) {
			t.Fatal("the body's and state's checksum does not extend to the payload's")
		}
		r, err := decodePayload(p)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if r.kind != kindCommit || r.synced != 42 {
			t.Fatalf("kind %d synced %d", r.kind, r.synced)
		}
		got, want := *r.commit, *enc.rec
		if !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Fatalf("decoded layout differs:\ngot  %+v\nwant %+v", got, want)
		}
		sum := 0
		for _, op := range got.inputs {
			sum += op.size
		}
		for _, op := range got.outputs {
			sum += op.size
			if op.hasRows && string(p[op.rowsOff:op.rowsOff+op.rowsLen]) == "" && len(rows) > 0 {
				t.Fatal("rows lost")
			}
		}
		for _, op := range got.records {
			sum += op.size
		}
		if sum+got.stateSz >= len(p) {
			t.Fatalf("parts count %d of a %d-byte payload", sum+got.stateSz, len(p))
		}

		ce := newCopyEncoder()
		items := []copyItem{
			{tag: tagJob, job: job},
			{tag: tagWatermark, job: job, ch: other, v: seq},
			{tag: tagReserved, job: job, ch: ch, v: n},
			{tag: tagAcked, job: otherJob, ch: ch, v: n},
			{tag: tagRecord, job: job, name: name},
			{tag: tagEntry, job: job, ch: other, v: seq, eof: flags&8 != 0, hasRows: flags&16 != 0},
			{tag: tagState, job: job, v: n},
			{tag: tagTombstone, job: otherJob},
			{tag: tagIncarnation, v: seq},
		}
		for _, it := range items {
			ce.add(it, rows)
		}
		r, err = decodePayload(appendTrailer(ce.b, 1))
		if err != nil {
			t.Fatalf("decode copy: %v", err)
		}
		if !reflect.DeepEqual(r.items, ce.items) {
			t.Fatalf("decoded items differ:\ngot  %+v\nwant %+v", r.items, ce.items)
		}
	})
}

// normalize makes a commitRec comparable: inputs and records in encoding
// order already; values compared by content.
func normalize(c commitRec) commitRec {
	recs := make([]recordOp, len(c.records))
	for i, r := range c.records {
		recs[i] = recordOp{name: r.name, value: append([]byte{}, r.value...), size: r.size}
	}
	c.records = recs
	return c
}

// payload is the encoded commit's bytes as the record holds them, before
// its tail: the body, then the state.
func (e *encodedCommit) payload() []byte {
	return append(append([]byte{}, e.body...), e.state...)
}
