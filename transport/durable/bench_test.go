package durable

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// Run with:
//
//	go test -run='^$' -bench=. -benchtime=2s ./transport/durable/

// payload is a RowBatch-like message of about size bytes: a text column
// of 40-byte tokens, as a filter stage emits.
func payload(size int) *wololov1.RowBatch {
	const tok = 40
	n := max(1, size/(tok+2))
	ends := make([]uint32, n)
	for i := range ends {
		ends[i] = uint32((i + 1) * tok)
	}
	data := bytes.Repeat([]byte("0123456789abcdef0123456789abcdef01234567"), n)
	return &wololov1.RowBatch{Rows: &wololov1.RowBatch_Tokens{Tokens: &wololov1.TokenRows{
		Token: &wololov1.TextColumn{Data: data, Ends: ends},
	}}}
}

func openBench(b *testing.B, noSync bool) *Store {
	b.Helper()
	s, err := Open(b.TempDir(), Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func report(b *testing.B, s *Store) {
	st := s.Stats()
	b.ReportMetric(float64(st.Commits)/b.Elapsed().Seconds(), "commits/s")
	if st.Commits > 0 {
		b.ReportMetric(float64(st.Syncs)/float64(st.Commits), "syncs/commit")
	}
}

// benchCommits runs b.N commits of one watermark and one output of rows
// from g goroutines, each on its own channels of one job.
func benchCommits(b *testing.B, s *Store, g int, rows *wololov1.RowBatch) {
	var wg sync.WaitGroup
	per := b.N / g
	b.ResetTimer()
	for w := range g {
		n := per
		if w == 0 {
			n += b.N % g
		}
		wg.Go(func() {
			in := storetest.Ch("bench", "in", fmt.Sprint("up", w), "me")
			out := storetest.Ch("bench", "out", "me", fmt.Sprint("down", w))
			for i := 1; i <= n; i++ {
				c := &transport.Commit{Job: "bench",
					Inputs:  map[transport.ChannelID]uint64{in: uint64(i)},
					Outputs: []transport.Entry{{Channel: out, Seq: uint64(i), Rows: rows}}}
				if err := s.Commit(c); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	report(b, s)
}

// (a) small commits, one goroutine, synced.
func BenchmarkCommitSmall(b *testing.B) {
	benchCommits(b, openBench(b, false), 1, payload(1024))
}

// (b) small commits from 8 goroutines: Pebble groups them into shared
// WAL syncs.
func BenchmarkCommitSmall8Goroutines(b *testing.B) {
	benchCommits(b, openBench(b, false), 8, payload(1024))
}

// For reference: what the sync costs.
func BenchmarkCommitSmallNoSync(b *testing.B) {
	benchCommits(b, openBench(b, true), 1, payload(1024))
}

// (c) large commits: one output of about 1 MiB, synced.
func BenchmarkCommitLarge(b *testing.B) {
	rows := payload(1 << 20)
	b.SetBytes(int64(len(rows.GetTokens().GetToken().GetData()) + 4*len(rows.GetTokens().GetToken().GetEnds())))
	benchCommits(b, openBench(b, false), 1, rows)
	if hwm := peakRSS(); hwm > 0 {
		b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MB")
	}
}

// (d) Load of a store holding 10k outbox entries of 1 KiB (10 channels,
// with their watermarks, records and a state log of 1000 entries),
// after a reopen.
func BenchmarkLoad10k(b *testing.B) {
	dir := b.TempDir()
	s, err := Open(dir, Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	rows := payload(1024)
	for i := 1; i <= 1000; i++ {
		c := &transport.Commit{Job: "bench", Inputs: map[transport.ChannelID]uint64{}, Records: map[string][]byte{"last": fmt.Append(nil, i)}, State: fmt.Append(nil, i)}
		for k := range 10 {
			c.Inputs[storetest.Ch("bench", "in", fmt.Sprint("up", k), "me")] = uint64(i)
			c.Outputs = append(c.Outputs, transport.Entry{Channel: storetest.Ch("bench", "out", "me", fmt.Sprint("down", k)), Seq: uint64(i), Rows: rows})
		}
		if err := s.Commit(c); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if s, err = Open(dir, Options{}); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for range b.N {
		img, err := s.Load()
		if err != nil {
			b.Fatal(err)
		}
		if n := len(img.Jobs["bench"].Outbox); n != 10 {
			b.Fatalf("%d channels", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/load")
}

// peakRSS returns the process's peak resident set (VmHWM) in bytes, 0 if
// unknown.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
