package csvio

import (
	"bytes"
	"encoding/csv"
	"io"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
)

// benchInput returns a generated matches.csv-like file: a header and
// 11-column rows with realistic values (a 16-byte token, booleans, ladder,
// patch, a decimal rating, map, size, players, server and a duration that
// is sometimes "N day, H:MM:SS" and so quoted). With quoteAll every field
// is quoted, as some exports do.
func benchInput(quoteAll bool) []byte {
	const rows = 60000
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	rng := rand.New(rand.NewPCG(42, 7))
	maps := []string{"arabia", "arena", "islands", "black_forest", "nomad", "gold_rush", "megarandom"}
	servers := []string{"ukwest", "westeurope", "eastus", "koreacentral", "southeastasia", "brazilsouth", "australiasoutheast"}
	sizes := []string{"tiny", "small", "medium", "normal", "large"}
	var b []byte
	var f []string
	write := func() {
		for i, v := range f {
			if i > 0 {
				b = append(b, ',')
			}
			if quoteAll {
				b = append(b, '"')
				b = append(b, v...)
				b = append(b, '"')
			} else {
				b = AppendField(b, v)
			}
		}
		b = append(b, '\n')
	}
	f = []string{"token", "winning_team", "mirror", "ladder", "patch", "average_rating", "map", "map_size", "num_players", "server", "duration"}
	write()
	var tok [16]byte
	for range rows {
		for i := range tok {
			tok[i] = alphabet[rng.IntN(len(alphabet))]
		}
		rating := ""
		if rng.IntN(20) != 0 {
			rating = strconv.Itoa(800+rng.IntN(1500)) + ".0"
		}
		secs := 300 + rng.IntN(5000)
		dur := strconv.Itoa(secs/3600) + ":" + pad2(secs/60%60) + ":" + pad2(secs%60)
		if rng.IntN(200) == 0 {
			dur = "1 day, " + dur
		}
		f = append(f[:0], string(tok[:]), strconv.Itoa(1+rng.IntN(2)), []string{"True", "False"}[rng.IntN(2)],
			[]string{"RM_1v1", "RM_TEAM"}[rng.IntN(2)], strconv.Itoa(35584+rng.IntN(10000)), rating,
			maps[rng.IntN(len(maps))], sizes[rng.IntN(len(sizes))], strconv.Itoa(2*(1+rng.IntN(4))),
			servers[rng.IntN(len(servers))], dur)
		write()
	}
	return b
}

func pad2(v int) string {
	if v < 10 {
		return "0" + strconv.Itoa(v)
	}
	return strconv.Itoa(v)
}

var benchInputs = sync.OnceValues(func() ([]byte, []byte) { return benchInput(false), benchInput(true) })

func benchData(quoted bool) []byte {
	plain, all := benchInputs()
	if quoted {
		return all
	}
	return plain
}

func benchSplitter(b *testing.B, quoted bool) {
	data := benchData(quoted)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var sp Splitter
	for b.Loop() {
		records := 0
		for buf := data; ; {
			kind, fields, n := sp.Next(buf, true)
			if kind == NeedMore {
				break
			}
			if kind != Record || len(fields) != 11 {
				b.Fatalf("got %v with %d fields", kind, len(fields))
			}
			records++
			buf = buf[n:]
		}
		if records != 60001 {
			b.Fatalf("%d records", records)
		}
	}
}

func benchScanner(b *testing.B, quoted bool) {
	data := benchData(quoted)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sc := NewScanner(bytes.NewReader(data))
		records := 0
		for sc.Scan() {
			records += len(sc.Fields()) / 11
		}
		if sc.Err() != nil || records != 60001 {
			b.Fatalf("%d records, err %v", records, sc.Err())
		}
	}
}

func benchEncodingCSV(b *testing.B, quoted bool) {
	data := benchData(quoted)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := csv.NewReader(bytes.NewReader(data))
		r.FieldsPerRecord = -1
		r.ReuseRecord = true // its fastest setting
		records := 0
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			records += len(rec) / 11
		}
		if records != 60001 {
			b.Fatalf("%d records", records)
		}
	}
}

func BenchmarkSplitter(b *testing.B)            { benchSplitter(b, false) }
func BenchmarkScanner(b *testing.B)             { benchScanner(b, false) }
func BenchmarkEncodingCSV(b *testing.B)         { benchEncodingCSV(b, false) }
func BenchmarkSplitterQuoteAll(b *testing.B)    { benchSplitter(b, true) }
func BenchmarkScannerQuoteAll(b *testing.B)     { benchScanner(b, true) }
func BenchmarkEncodingCSVQuoteAll(b *testing.B) { benchEncodingCSV(b, true) }

func BenchmarkAppendRecord(b *testing.B) {
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendRecord(buf[:0], "Franks", "1204", "2310", "52.1212")
		buf = AppendRecord(buf, "1 day, 2:03:04", `say "hi"`)
	}
}
