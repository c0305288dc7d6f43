package operators

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// q2BenchMatches is the number of distinct matches of BenchmarkQ2Grouper:
// the full dataset's scale, where the grouper's state outgrows every cache.
const q2BenchMatches = 3_000_000

// benchToken writes the 16-character token of match i: distinct for
// distinct i (the first 11 characters spell a bijection of i), in the
// alphabet of datagen's tokens.
func benchToken(dst []byte, i uint64, r *rand.Rand) []byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	x := i * 0x9e3779b97f4a7c15 // odd, so a bijection of uint64
	for range 11 {
		dst = append(dst, alphabet[x&63])
		x >>= 6
	}
	y := r.Uint64()
	for range 5 {
		dst = append(dst, alphabet[y&63])
		y >>= 6
	}
	return dst
}

// q2BenchRows returns the player rows of n matches with 2 or 3 players
// each, shuffled within windows of 16384 rows as datagen does (a match's
// rows arrive close together, in any order).
func q2BenchRows(n int) []batch.Player {
	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]batch.Player, 0, n*5/2)
	var token []byte
	for i := range n {
		token = benchToken(token[:0], uint64(i), r)
		match := bytes.Clone(token)
		players := 2 + r.IntN(2)
		winner := r.IntN(players)
		for p := range players {
			row := batch.Player{Match: match, Winner: batch.False}
			if p == winner {
				row.Winner = batch.True
			}
			if r.IntN(20) > 0 {
				row.Rating, row.HasRating = schema.NumberFromUnits(int64(800+r.IntN(1700))*1_000_000), true
			}
			rows = append(rows, row)
		}
	}
	const window = 1 << 14
	for lo := 0; lo < len(rows); lo += window {
		w := rows[lo:min(lo+window, len(rows))]
		r.Shuffle(len(w), func(i, j int) { w[i], w[j] = w[j], w[i] })
	}
	return rows
}

// q2BenchBatches cuts the rows into batches of stage.DefaultBatchRows.
func q2BenchBatches(rows []batch.Player) []*wololov1.RowBatch {
	var out []*wololov1.RowBatch
	var b batch.PlayerBuilder
	for i := range rows {
		b.Add(&rows[i])
		if b.Len() == stage.DefaultBatchRows {
			out = append(out, b.Build())
		}
	}
	if b.Len() > 0 {
		out = append(out, b.Build())
	}
	return out
}

var q2Bench struct {
	once    sync.Once
	rows    int
	batches []*wololov1.RowBatch
}

// loadQ2Bench builds the benchmark's batches once per process.
func loadQ2Bench() ([]*wololov1.RowBatch, int) {
	q2Bench.once.Do(func() {
		rows := q2BenchRows(q2BenchMatches)
		q2Bench.rows = len(rows)
		q2Bench.batches = q2BenchBatches(rows)
	})
	return q2Bench.batches, q2Bench.rows
}

// BenchmarkQ2Grouper applies 3M distinct matches of 2 or 3 players each
// (about 7.5M rows in batches of 8192) to a fresh grouper and finishes it.
// Besides ns/row it reports the grouper's live heap once every row is in
// (live-MB, after a collection) and, on Linux, how much the process's peak
// RSS grew over the run (peak-RSS-MB).
func BenchmarkQ2Grouper(b *testing.B) {
	batches, rows := loadQ2Bench()
	base := settledHeap()
	resetPeakRSS()
	rssBefore, rssOK := rssMB("VmRSS")
	var live uint64
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		g := NewQ2Grouper()
		for _, rb := range batches {
			if err := g.Apply(Q2Players, rb, stage.Discard); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		live = settledHeap() - base
		b.StartTimer()
		if err := g.Finish(stage.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
	b.ReportMetric(float64(live)/(1<<20), "live-MB")
	if peak, ok := rssMB("VmHWM"); ok && rssOK {
		b.ReportMetric(peak-rssBefore, "peak-RSS-MB")
	}
}

// settledHeap collects garbage and returns the bytes of live heap objects.
func settledHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// resetPeakRSS returns freed memory to the OS and, on Linux, resets the
// process's peak RSS (VmHWM) to its current RSS.
func resetPeakRSS() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// rssMB reads a field of /proc/self/status (VmRSS, VmHWM) in MiB.
func rssMB(field string) (float64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		name, rest, ok := bytes.Cut(s.Bytes(), []byte(":"))
		if !ok || string(name) != field {
			continue
		}
		kb, err := strconv.ParseFloat(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 64)
		return kb / 1024, err == nil
	}
	return 0, false
}

// BenchmarkQ2Snapshot writes the snapshot of a grouper holding 3M matches
// (what a shard's grouper holds at the end of a full-scale job, twice
// over) and reads it back into a fresh one.
func BenchmarkQ2Snapshot(b *testing.B) {
	batches, _ := loadQ2Bench()
	g := NewQ2Grouper()
	for _, rb := range batches {
		if err := g.Apply(Q2Players, rb, stage.Discard); err != nil {
			b.Fatal(err)
		}
	}
	state, err := g.AppendSnapshot(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("write", func(b *testing.B) {
		b.SetBytes(int64(len(state)))
		buf := make([]byte, 0, len(state))
		for range b.N {
			if _, err := g.AppendSnapshot(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("restore", func(b *testing.B) {
		b.SetBytes(int64(len(state)))
		for range b.N {
			if err := NewQ2Grouper().Restore(state); err != nil {
				b.Fatal(err)
			}
		}
	})
}
