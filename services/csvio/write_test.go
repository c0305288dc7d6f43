package csvio

import (
	"bytes"
	"encoding/csv"
	"reflect"
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

// TestAppendRecordRoundTrip: what AppendRecord writes, Splitter and
// encoding/csv read back as the same fields.
func TestAppendRecordRoundTrip(t *testing.T) {
	fields := []string{"plain", "", "a,b", `"q"`, "x\ny", "\r\n", "1 day, 2:03:04", `""`, " "}
	for i := range fields {
		for j := range fields {
			rec := []string{fields[i], fields[j], "end"}
			line := AppendRecord(nil, rec...)
			var sp Splitter
			kind, got, n := sp.Next(line, false)
			if kind != Record || n != len(line) || !reflect.DeepEqual(copyFields(got), rec) {
				t.Fatalf("Splitter read %q as %v %q (n=%d), want %q", line, kind, got, n, rec)
			}
			std, err := csv.NewReader(bytes.NewReader(line)).Read()
			if err != nil {
				t.Fatalf("encoding/csv: %v", err)
			}
			for k := range rec {
				rec[k] = string(bytes.ReplaceAll([]byte(rec[k]), []byte("\r\n"), []byte("\n")))
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
		if kind != Record || n != len(line) || !reflect.DeepEqual(copyFields(got), []string{a, b}) {
			t.Fatalf("Splitter read %q as %v %q (n=%d), want %q", line, kind, got, n, []string{a, b})
		}
	})
}
