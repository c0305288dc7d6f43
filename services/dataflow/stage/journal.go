package stage

import (
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/protoscan"
)

// Field numbers of wololo.v1.Journal and Applied, read from journal.proto's
// descriptors.
var (
	journalAppliedField  = protoscan.FieldOf(&wololov1.Journal{}, "applied")
	journalSnapshotField = protoscan.FieldOf(&wololov1.Journal{}, "snapshot")

	appliedStream = protoscan.FieldOf(&wololov1.Applied{}, "stream")
	appliedSender = protoscan.FieldOf(&wololov1.Applied{}, "sender")
	appliedSeq    = protoscan.FieldOf(&wololov1.Applied{}, "seq")
	appliedEOF    = protoscan.FieldOf(&wololov1.Applied{}, "eof")
	appliedRows   = protoscan.FieldOf(&wololov1.Applied{}, "rows")
)

// readJournal reads a state log entry into jr as proto.Unmarshal does,
// except that the rows of its batches and its snapshot are not copied:
// they alias raw. A restarted stage reads its whole state log this way
// (tens of megabytes at full scale, each byte then read once by the
// operator), so raw must not change while jr is in use: replay reads
// each entry from a copy of the store's bytes. An entry in another form than
// proto.Marshal writes (protoscan) is read by proto.Unmarshal.
func readJournal(raw []byte, jr *wololov1.Journal) error {
	jr.Reset()
	if scanJournal(raw, jr) {
		return nil
	}
	jr.Reset()
	return proto.Unmarshal(raw, jr)
}

// scanJournal reads raw into jr (reset) when it is in the form
// proto.Marshal writes; false otherwise, jr then half read.
func scanJournal(raw []byte, jr *wololov1.Journal) bool {
	r := protoscan.New(raw, journalAppliedField)
	for f, more := r.Next(); more; f, more = r.Next() {
		switch {
		case f.IsBytes(journalAppliedField):
			a, ok := scanApplied(f.Bytes)
			if !ok {
				return false
			}
			jr.Applied = append(jr.Applied, a)
		case f.IsBytes(journalSnapshotField):
			jr.Snapshot = f.Bytes
		default:
			return false
		}
	}
	return r.OK()
}

// scanApplied reads one Applied in the form proto.Marshal writes; its
// strings are valid UTF-8, as proto.Unmarshal requires of them.
func scanApplied(b []byte) (*wololov1.Applied, bool) {
	a := &wololov1.Applied{}
	r := protoscan.New(b, 0)
	for f, more := r.Next(); more; f, more = r.Next() {
		switch {
		case f.IsBytes(appliedStream) && utf8.Valid(f.Bytes):
			a.Stream = string(f.Bytes)
		case f.IsBytes(appliedSender) && utf8.Valid(f.Bytes):
			a.Sender = string(f.Bytes)
		case f.IsVarint(appliedSeq):
			a.Seq = f.Value
		case f.IsVarint(appliedEOF):
			a.Eof = f.Value != 0
		case f.IsBytes(appliedRows):
			a.Rows = f.Bytes
		default:
			return nil, false
		}
	}
	return a, r.OK()
}
