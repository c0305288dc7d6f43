package csvio

import "testing"

// splitterEnd walks Splitter.Next over buf, with more input to come, and
// returns where it stops: the end of the last complete record.
func splitterEnd(buf []byte) int {
	var sp Splitter
	n := 0
	for {
		kind, _, k := sp.Next(buf[n:], false)
		if kind == NeedMore {
			return n
		}
		n += k
	}
}

func TestCompleteRecords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{"a,b", 0},
		{"a,b\n", 4},
		{"a,b\nc,d", 4},
		{"a,b\r\nc,d\r\n", 10},
		{"\n\n", 2},
		{"a,\"b\nc\",d\ne", 10},             // a line end inside quotes ends nothing
		{"a,\"b\nc", 0},                     // the quoted field is still open
		{"a,\"b\"\"c\",d\n", 11},            // "" is a quote inside the field
		{"a,\"b\"", 0},                      // a closing quote needs the byte after it
		{"a,\"b\"\r", 0},                    // and '"\r' the one after that
		{"a,\"b\"\r\nx", 7},                 // '"\r\n' ends the record
		{"a,\"b\"x,\"y\nz\n", 12},           // a bad quote: the record ends with its line
		{"ab\"c,\"d\ne\n", 10},              // a bare quote too, whatever follows it
		{"\"a\",\"b\"\n\"c\n", 8},           // quoted fields one after another
		{"x\n\"a\nb\"\ny,\"z", 8},           // a quoted line end, then an open field
		{"\"a\"\rb\nc\n", 8},                // '"\r' then not '\n': a bad quote
		{"a,b\n\"\"\n", 7},                  // an empty quoted field
		{"a\n\"open\nquote\nmore\n", 2},     // an open quote runs past every line end
		{"1,\"2,3\",4\n5,6,7\n8", 16},       // commas inside quotes
		{"\"a\"\"\n\"\"\"\n", 9},            // escaped quotes around a line end
		{"a,\"b\",\"c\"\"\nd\"\ne,f\n", 18}, // the third field holds a line end
	} {
		if got := CompleteRecords([]byte(c.in)); got != c.want {
			t.Errorf("CompleteRecords(%q) = %d, want %d", c.in, got, c.want)
		}
		if sp := splitterEnd([]byte(c.in)); sp != c.want {
			t.Errorf("the splitter ends %q's complete records at %d, the table says %d", c.in, sp, c.want)
		}
	}
}

// FuzzCompleteRecordsVsSplitter: whatever the bytes, CompleteRecords ends
// where Splitter.Next, called until it needs more input, does.
func FuzzCompleteRecordsVsSplitter(f *testing.F) {
	for _, s := range []string{
		"a,b,c\nd\n", "\"a\"\"b\",c\r\nx\n", "\"open\nquote", "ab\"c,d\ne\n", "\"a\"x,b\nc\n",
		"\"a\"\r\n", "\"a\"\rb\nc\n", "\n", "\r\n", "\r", "", "\"\"", "a,\"b\n,c\"\nd\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := CompleteRecords(data), splitterEnd(data); got != want {
			t.Fatalf("%q: CompleteRecords = %d, the splitter ends at %d", data, got, want)
		}
	})
}
