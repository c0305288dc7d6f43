package durable

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// Run with:
//
//	go test -run='^$' -bench=. -benchtime=2s ./transport/durable/

// payload is storetest.Payload: the benchmarks of both stores commit the
// same batches through the same harness (storetest.BenchCommits).
func payload(size int) *wololov1.RowBatch { return storetest.Payload(size) }

func openBench(b *testing.B, noSync bool) *Store {
	b.Helper()
	s, err := Open(b.TempDir(), Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// benchCommits runs b.N commits of one watermark and one output of rows
// from g goroutines, each on its own channels of one job.
func benchCommits(b *testing.B, s *Store, g int, rows *wololov1.RowBatch) {
	storetest.BenchCommits(b, s, g, rows)
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
	b.SetBytes(storetest.PayloadBytes(rows))
	benchCommits(b, openBench(b, false), 1, rows)
	if hwm := peakRSS(); hwm > 0 {
		b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MB")
	}
}

// (c') large commits from 4 goroutines: group commit of 1 MiB batches.
func BenchmarkCommitLarge4Goroutines(b *testing.B) {
	rows := payload(1 << 20)
	b.SetBytes(storetest.PayloadBytes(rows))
	benchCommits(b, openBench(b, false), 4, rows)
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

// (e) a job's worth of 1 MiB batches (WOLOLO_BENCH_JOB_MIB of them; the
// benchmark is skipped without it), each trimmed 4 commits later: disk during and after the job,
// after 3 s idle, after a reopen, of a fresh store; CPU and bytes sent to
// disk per byte of input. The same as segstore's BenchmarkJob.
func BenchmarkJob(b *testing.B) {
	input, err := strconv.ParseInt(os.Getenv("WOLOLO_BENCH_JOB_MIB"), 10, 64)
	if err != nil || input <= 0 {
		b.Skip("set WOLOLO_BENCH_JOB_MIB (290 for the full dataset's size) to run it")
	}
	for range b.N {
		r := storetest.BenchJob(b, func(dir string) transport.Store {
			s, err := Open(dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}, input<<20, payload(1<<20), 4, 3*time.Second)
		r.Report(b)
	}
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
