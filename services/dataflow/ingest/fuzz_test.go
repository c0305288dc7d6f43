package ingest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/schema"
)

// FuzzIngestChunks: on any bytes, what an Ingest hands on and counts (rows,
// report with its rejects and oversized records, final offset) does not
// depend on the chunks the bytes arrive in, nor on a resume, with the
// report so far, at the Offset reached after any prefix: an upload is
// parsed alike however the network cuts it and wherever it is resumed.
// MaxRecord is small, so that records too long to hold are skipped in
// pieces; it is at least RejectHeadBytes, as the gateway's limit is.
func FuzzIngestChunks(f *testing.F) {
	for _, cf := range testFiles() {
		body := cf.bytes()[cf.start():]
		f.Add(body, uint8(cf.file), uint8(7), uint16(len(body)/2), uint16(1000))
	}
	long := strings.Repeat("y", 150)
	f.Add([]byte("m1,1,Celts,1\nm2,\""+long+"\n\",2,x,0\nm3,"+long+",Aztecs,1\n"), uint8(schema.Players), uint8(13), uint16(30), uint16(20))
	f.Add([]byte("m1,1,\"open quote\nm2,1,Celts,1\n"), uint8(schema.Players), uint8(1), uint16(5), uint16(0))
	f.Add([]byte("\r\n\n t,RM,True,1,map,server,0:00:01\r"), uint8(schema.Matches), uint8(2), uint16(3), uint16(0))
	f.Fuzz(func(t *testing.T, body []byte, file, chunk uint8, cut, maxRecord uint16) {
		cf := testFiles()[int(file)%len(schema.Files)]
		limit := schema.RejectHeadBytes + int(maxRecord)%512
		const start = 100 // where the header ends, as far as the Ingest knows
		ingest := func(offset int64, report schema.FileReport) *Ingest {
			in := newIngest(t, cf, offset, report)
			in.MaxRecord = limit
			return in
		}
		feedIn := func(in *Ingest, out *ingestEmitter, data []byte, size int, eof bool) {
			for off := 0; off < len(data); off += size {
				feed(in, data[off:min(off+size, len(data))], false, out)
			}
			if eof {
				feed(in, nil, true, out)
			}
		}

		whole, wholeOut := ingest(start, schema.FileReport{}), &ingestEmitter{}
		feed(whole, body, true, wholeOut)
		want := summary(whole, wholeOut)
		if whole.Offset() != start+int64(len(body)) {
			t.Fatalf("whole: Offset %d, want %d", whole.Offset(), start+len(body))
		}

		chunked, chunkedOut := ingest(start, schema.FileReport{}), &ingestEmitter{}
		feedIn(chunked, chunkedOut, body, 1+int(chunk), true)
		if got := summary(chunked, chunkedOut); got != want {
			t.Fatalf("in chunks of %d:\n%s\nwhole:\n%s", 1+int(chunk), got, want)
		}

		// The upload breaks after k bytes, not at the end of its input.
		k := int(cut) % (len(body) + 1)
		first, out := ingest(start, schema.FileReport{}), &ingestEmitter{}
		feedIn(first, out, body[:k], 1+int(chunk), false)
		at := first.Offset()
		if at < start || at > start+int64(k) {
			t.Fatalf("after a prefix of %d bytes: Offset %d, outside [%d, %d]", k, at, start, start+k)
		}
		second := ingest(at, copyReport(first.Report))
		feed(second, body[at-start:], true, out)
		if got := summary(second, out); got != want {
			t.Fatalf("resumed at %d after a prefix of %d bytes:\n%s\nwhole:\n%s", at, k, got, want)
		}
	})
}

// summary is everything an Ingest emitted and counted, for comparing.
func summary(in *Ingest, out *ingestEmitter) string {
	return fmt.Sprintf("offset %d\nreport %+v\nrows:\n%s", in.Offset(), in.Report, strings.Join(out.rows, "\n"))
}
