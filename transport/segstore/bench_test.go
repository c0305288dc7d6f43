package segstore

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// Run with (the same benchmarks exist for the Pebble store in
// transport/durable, on the same harness, storetest.BenchCommits):
//
//	go test -run='^$' -bench=Commit -benchtime=2s ./transport/segstore/
//	WOLOLO_BENCH_JOB_MIB=290 go test -run='^$' -bench=Job -benchtime=1x ./transport/segstore/

func openBench(b *testing.B, noSync bool) *Store {
	b.Helper()
	s, err := Open(b.TempDir(), Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// (a) small commits, one goroutine, synced.
func BenchmarkCommitSmall(b *testing.B) {
	storetest.BenchCommits(b, openBench(b, false), 1, storetest.Payload(1024))
}

// (b) small commits from 8 goroutines: group commit.
func BenchmarkCommitSmall8Goroutines(b *testing.B) {
	storetest.BenchCommits(b, openBench(b, false), 8, storetest.Payload(1024))
}

// For reference: what the sync costs.
func BenchmarkCommitSmallNoSync(b *testing.B) {
	storetest.BenchCommits(b, openBench(b, true), 1, storetest.Payload(1024))
}

// (c) large commits: one output of about 1 MiB, synced.
func BenchmarkCommitLarge(b *testing.B) {
	rows := storetest.Payload(1 << 20)
	b.SetBytes(storetest.PayloadBytes(rows))
	storetest.BenchCommits(b, openBench(b, false), 1, rows)
	if hwm := storetest.PeakRSS(); hwm > 0 {
		b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MB")
	}
}

// (c') large commits from 4 goroutines: group commit of 1 MiB batches.
func BenchmarkCommitLarge4Goroutines(b *testing.B) {
	rows := storetest.Payload(1 << 20)
	b.SetBytes(storetest.PayloadBytes(rows))
	storetest.BenchCommits(b, openBench(b, false), 4, rows)
}

// (d) Load of a store holding 10k outbox entries of 1 KiB (10 channels,
// with their watermarks, records and a state log of 1000 entries),
// after a reopen.
func BenchmarkLoad10k(b *testing.B) {
	storetest.BenchLoad(b, func(dir string, noSync bool) (transport.Store, error) { return Open(dir, Options{NoSync: noSync}) })
}

// (e) a job's worth of 1 MiB batches (WOLOLO_BENCH_JOB_MIB of them; the
// benchmark is skipped without it), each trimmed 4 commits later: disk during and after the job,
// after 3 s idle, after a reopen, of a fresh store; CPU and bytes sent to
// disk per byte of input.
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
		}, input<<20, storetest.Payload(1<<20), 4, DefaultIdleAfter+time.Second)
		r.Report(b)
	}
}
