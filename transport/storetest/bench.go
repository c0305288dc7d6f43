package storetest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/diskuse"
)

// The benchmark harness shared by the stores' benchmarks, so that their
// figures compare: the same commits, the same counters.

// Payload is a RowBatch-like message of about size bytes: a text column
// of 40-byte tokens, as a filter stage emits.
func Payload(size int) []byte {
	const tok = 40
	n := max(1, size/(tok+2))
	ends := make([]uint32, n)
	for i := range ends {
		ends[i] = uint32((i + 1) * tok)
	}
	data := bytes.Repeat([]byte("0123456789abcdef0123456789abcdef01234567"), n)
	return encode(TextRows(&wololov1.TextColumn{Data: data, Ends: ends}))
}

// Usage is what the process has used: CPU time (user and system) and
// bytes sent to the storage layer (/proc/self/io write_bytes, -1 where
// unknown).
type Usage struct {
	CPU        time.Duration
	DiskWrites int64
}

// ReadUsage returns the process's usage so far.
func ReadUsage() Usage {
	return Usage{CPU: cpuTime(), DiskWrites: diskWrites()}
}

func diskWrites() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "write_bytes:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// Since returns the usage between u and now.
func (u Usage) Since() Usage {
	now := ReadUsage()
	d := Usage{CPU: now.CPU - u.CPU, DiskWrites: -1}
	if u.DiskWrites >= 0 && now.DiskWrites >= 0 {
		d.DiskWrites = now.DiskWrites - u.DiskWrites
	}
	return d
}

// DirUsage returns the disk space the files under dir take.
func DirUsage(dir string) int64 { return diskuse.Dir(dir) }

// BenchCommits runs b.N commits of one watermark and one output of rows
// from g goroutines, each on its own channels of one job, and reports
// commits/s, syncs/commit, CPU per commit (the whole process: the store's
// background work counts) and, for rows of 64 KiB or more, the bytes sent
// to disk per byte of payload.
func BenchCommits(b *testing.B, s transport.Store, g int, rows []byte) {
	var wg sync.WaitGroup
	per := b.N / g
	start0 := s.Stats()
	b.ResetTimer()
	use := ReadUsage()
	for w := range g {
		n := per
		if w == 0 {
			n += b.N % g
		}
		wg.Go(func() {
			in := Ch("bench", "in", fmt.Sprint("up", w), "me")
			out := Ch("bench", "out", "me", fmt.Sprint("down", w))
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
	u := use.Since()
	st := s.Stats()
	commits := st.Commits - start0.Commits
	b.ReportMetric(float64(commits)/b.Elapsed().Seconds(), "commits/s")
	if commits > 0 {
		b.ReportMetric(float64(st.Syncs-start0.Syncs)/float64(commits), "syncs/commit")
		b.ReportMetric(float64(u.CPU.Microseconds())/float64(commits), "cpu-us/commit")
	}
	if payload := int64(len(rows)) * commits; payload >= 64<<10*commits && u.DiskWrites >= 0 && commits > 0 {
		b.ReportMetric(float64(u.DiskWrites)/float64(payload), "disk-writes/payload")
	}
}

// JobReport is what BenchJob measured.
type JobReport struct {
	Input      int64         // payload bytes committed
	PeakDisk   int64         // the most the directory took during the job
	AfterJob   int64         // right after the last trim
	AfterIdle  int64         // after idle seconds without a call
	Reopened   int64         // after a Close and an Open (and idle seconds)
	Fresh      int64         // a store just created in an empty directory, idle seconds after
	CPU        time.Duration // the process's, from the first commit to the last trim
	DiskWrites int64         // bytes sent to disk in that time, -1 if unknown
}

// BenchJob plays a stage's job through a store: batches of rows
// committed one after the other (one watermark, one output each, a
// record), each trimmed lag commits later as the receiver acknowledges
// it, until input bytes are committed and all are trimmed. It measures
// the directory's disk usage during and after the job, after idle
// without calls (background compactions included), after a reopen, and
// that of a fresh store. open opens the store in a directory.
func BenchJob(b *testing.B, open func(dir string) transport.Store, input int64, rows []byte, lag int, idle time.Duration) JobReport {
	var r JobReport
	fresh := b.TempDir()
	s := open(fresh)
	time.Sleep(idle)
	r.Fresh = DirUsage(fresh)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}

	dir := b.TempDir()
	s = open(dir)
	in := Ch("job", "in", "up", "me")
	out := Ch("job", "out", "me", "down")
	per := int64(len(rows))
	n := uint64((input + per - 1) / per)
	use := ReadUsage()
	for i := uint64(1); i <= n; i++ {
		c := &transport.Commit{Job: "job", Inputs: map[transport.ChannelID]uint64{in: i},
			Outputs: []transport.Entry{{Channel: out, Seq: i, Rows: rows}},
			Records: map[string][]byte{"offset": fmt.Append(nil, i)}}
		if err := s.Commit(c); err != nil {
			b.Fatal(err)
		}
		r.Input += per
		if i > uint64(lag) {
			if err := s.Trim(out, i-uint64(lag)); err != nil {
				b.Fatal(err)
			}
		}
		if i%16 == 0 {
			r.PeakDisk = max(r.PeakDisk, DirUsage(dir))
		}
	}
	if err := s.Trim(out, n); err != nil {
		b.Fatal(err)
	}
	u := use.Since()
	r.CPU, r.DiskWrites = u.CPU, u.DiskWrites
	r.AfterJob = DirUsage(dir)
	r.PeakDisk = max(r.PeakDisk, r.AfterJob)
	time.Sleep(idle)
	r.AfterIdle = DirUsage(dir)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	s = open(dir)
	time.Sleep(idle)
	r.Reopened = DirUsage(dir)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return r
}

// Report reports r's figures as the benchmark's metrics.
func (r JobReport) Report(b *testing.B) {
	mb := func(n int64) float64 { return float64(n) / (1 << 20) }
	b.ReportMetric(mb(r.Input), "input-MiB")
	b.ReportMetric(float64(r.PeakDisk)/float64(r.Input), "peak-disk/input")
	b.ReportMetric(mb(r.AfterJob), "after-job-MiB")
	b.ReportMetric(mb(r.AfterIdle), "after-idle-MiB")
	b.ReportMetric(mb(r.Reopened), "reopened-MiB")
	b.ReportMetric(mb(r.Fresh), "fresh-MiB")
	b.ReportMetric(r.CPU.Seconds(), "cpu-s")
	if r.DiskWrites >= 0 {
		b.ReportMetric(float64(r.DiskWrites)/float64(r.Input), "disk-writes/input")
	}
}

// BenchLoad times Load of a store holding 10k outbox entries of 1 KiB (10
// channels, with their watermarks, records and a state log of 1000
// entries), after a reopen. open opens the store in dir, unsynced when
// noSync (for the filling).
func BenchLoad(b *testing.B, open func(dir string, noSync bool) (transport.Store, error)) {
	dir := b.TempDir()
	s, err := open(dir, true)
	if err != nil {
		b.Fatal(err)
	}
	rows := Payload(1024)
	for i := 1; i <= 1000; i++ {
		c := &transport.Commit{Job: "bench", Inputs: map[transport.ChannelID]uint64{}, Records: map[string][]byte{"last": fmt.Append(nil, i)}, State: fmt.Append(nil, i)}
		for k := range 10 {
			c.Inputs[Ch("bench", "in", fmt.Sprint("up", k), "me")] = uint64(i)
			c.Outputs = append(c.Outputs, transport.Entry{Channel: Ch("bench", "out", "me", fmt.Sprint("down", k)), Seq: uint64(i), Rows: rows})
		}
		if err := s.Commit(c); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if s, err = open(dir, false); err != nil {
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

// PeakRSS returns the process's peak resident set (VmHWM) in bytes, 0 if
// unknown.
func PeakRSS() int64 {
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

// Benchmarks runs the benchmarks both stores share, on the same harness so
// that their figures compare, as sub-benchmarks of b:
//
//   - CommitSmall, CommitSmall8Goroutines, CommitSmallNoSync: commits of
//     one 1 KiB output, synced (from 1 or 8 goroutines: group commit) or
//     not (what the sync costs);
//   - CommitLarge, CommitLarge4Goroutines: one output of about 1 MiB,
//     with the process's peak RSS;
//   - Load10k: BenchLoad;
//   - Job: a job's worth of 1 MiB batches (WOLOLO_BENCH_JOB_MIB of them;
//     skipped without it), each trimmed 4 commits later: BenchJob, with
//     idle the time to wait for the store's idle clean-up.
//
// open opens the store in dir, unsynced when noSync.
func Benchmarks(b *testing.B, open func(dir string, noSync bool) (transport.Store, error), idle time.Duration) {
	opened := func(b *testing.B, noSync bool) transport.Store {
		s, err := open(b.TempDir(), noSync)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	small, large := Payload(1024), Payload(1<<20)
	for _, c := range []struct {
		name       string
		goroutines int
		large      bool
		noSync     bool
	}{
		{"CommitSmall", 1, false, false},
		{"CommitSmall8Goroutines", 8, false, false},
		{"CommitSmallNoSync", 1, false, true},
		{"CommitLarge", 1, true, false},
		{"CommitLarge4Goroutines", 4, true, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			rows := small
			if c.large {
				rows = large
				b.SetBytes(int64(len(large)))
			}
			BenchCommits(b, opened(b, c.noSync), c.goroutines, rows)
			if hwm := PeakRSS(); hwm > 0 && c.large && c.goroutines == 1 {
				b.ReportMetric(float64(hwm)/(1<<20), "peak-RSS-MB")
			}
		})
	}
	b.Run("Load10k", func(b *testing.B) { BenchLoad(b, open) })
	b.Run("Job", func(b *testing.B) {
		input, err := strconv.ParseInt(os.Getenv("WOLOLO_BENCH_JOB_MIB"), 10, 64)
		if err != nil || input <= 0 {
			b.Skip("set WOLOLO_BENCH_JOB_MIB (290 for the full dataset's size) to run it")
		}
		for range b.N {
			r := BenchJob(b, func(dir string) transport.Store {
				s, err := open(dir, false)
				if err != nil {
					b.Fatal(err)
				}
				return s
			}, input<<20, large, 4, idle)
			r.Report(b)
		}
	})
}
