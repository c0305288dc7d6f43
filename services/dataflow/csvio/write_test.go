package csvio

import (
	"bytes"
	"encoding/csv"
	"reflect"
	"strings"
	"testing"
)

func TestAppendRecord(t *testing.T) {
	cases := []struct {
		fields []string
		want   string
	}{
		{[]string{"token"}, "token\n"},
		{[]string{"civ", "wins", "played", "win_pct"}, "civ,wins,played,win_pct\n"},
		{[]string{"a,b", `say "hi"`, "x\ny", "cr\r", ""}, `"a,b","say ""hi""","x` + "\ny\",\"cr\r\",\n"},
		{[]string{" lead", "trail ", "é", `"`}, ` lead,trail ,é,""""` + "\n"},
		{[]string{"", ""}, ",\n"},
		{[]string{""}, "\n"},
		{nil, "\n"},
	}
	for _, tc := range cases {
		if got := string(AppendRecord([]byte("prefix|"), tc.fields...)); got != "prefix|"+tc.want {
			t.Errorf("AppendRecord(%q) = %q, want %q", tc.fields, got, "prefix|"+tc.want)
		}
	}
}

// readBack is what a reader gets back from a quoted field: encoding/csv,
// and so Splitter, turn "\r\n" in a quoted field into "\n".
func readBack(fields []string) []string {
	out := make([]string, len(fields))
	for k, f := range fields {
		out[k] = strings.ReplaceAll(f, "\r\n", "\n")
	}
	return out
}

// TestAppendRecordRoundTrip: what AppendRecord writes, Splitter and
// encoding/csv read back as the same fields ("\r\n" read as "\n").
func TestAppendRecordRoundTrip(t *testing.T) {
	fields := []string{"plain", "", "a,b", `"q"`, "x\ny", "\r\n", "1 day, 2:03:04", `""`, " "}
	for i := range fields {
		for j := range fields {
			rec := []string{fields[i], fields[j], "end"}
			line := AppendRecord(nil, rec...)
			rec = readBack(rec)
			var sp Splitter
			kind, got, n := sp.Next(line, false)
			if kind != Record || n != len(line) || !reflect.DeepEqual(copyFields(got), rec) {
				t.Fatalf("Splitter read %q as %v %q (n=%d), want %q", line, kind, got, n, rec)
			}
			std, err := csv.NewReader(bytes.NewReader(line)).Read()
			if err != nil {
				t.Fatalf("encoding/csv: %v", err)
			}
			if !reflect.DeepEqual(std, rec) {
				t.Fatalf("encoding/csv read %q as %q, want %q", line, std, rec)
			}
		}
	}
}

func TestAppendRecordNoAllocs(t *testing.T) {
	buf := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendRecord(buf[:0], "Franks", "12", "20", "60.0000", `a "b"`)
	})
	if allocs != 0 {
		t.Fatalf("AppendRecord allocates %.1f times", allocs)
	}
}

func FuzzAppendRecordRoundTrip(f *testing.F) {
	f.Add("a", "b,c")
	f.Add(`"`, "\r\n")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		line := AppendRecord(nil, a, b)
		var sp Splitter
		kind, got, n := sp.Next(line, true)
		want := readBack([]string{a, b})
		if kind != Record || n != len(line) || !reflect.DeepEqual(copyFields(got), want) {
			t.Fatalf("Splitter read %q as %v %q (n=%d), want %q", line, kind, got, n, want)
		}
	})
}
