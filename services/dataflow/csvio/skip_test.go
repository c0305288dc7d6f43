package csvio

import "testing"

// FuzzRecordSkipperVsSplitter: whatever the bytes and however they are cut
// into pieces, RecordSkipper ends the first record where Splitter does.
func FuzzRecordSkipperVsSplitter(f *testing.F) {
	for _, s := range []string{
		"a,b,c\nd\n", "\"a\"\"b\",c\r\nx", "\"open\nquote", "ab\"c,d\ne\n", "\"a\"x,b\nc\n",
		"\"a\"\r\n", "\"a\"\rb\nc", "\n", "\r\n", "\r", "", "\"\"", "a,\"b\n,c\"\nd",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		var sp Splitter
		kind, _, want := sp.Next(data, true)
		if kind == NeedMore {
			return // empty input
		}
		var sk RecordSkipper
		step := int(cut%7) + 1
		got, ended := 0, false
		for got < len(data) && !ended {
			piece := data[got:min(got+step, len(data))]
			var n int
			n, ended = sk.Skip(piece)
			got += n
		}
		if got != want {
			t.Fatalf("%q: the skipper ends the first record at %d, the splitter (%s) at %d", data, got, kind, want)
		}
	})
}
