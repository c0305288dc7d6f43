// Package cpuprofile is the --cpuprofile flag of the long-running commands
// (worker, local, demo): a CPU profile of the whole process, written to a
// file until the command ends; and demo's --memprofile, a heap profile
// written once (WriteHeap) or at the live heap's peak (WatchPeak). A leaf, so that a runner that only needs the
// profile does not link what the profiled process runs.
package cpuprofile

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// Start starts writing a CPU profile of this process to path and returns
// the function that ends it. With an empty path it does nothing.
func Start(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// WriteHeap writes a heap profile of this process to path, after a
// garbage collection, so that its in-use figures are the memory live at
// the call (go tool pprof -sample_index=inuse_space). With an empty path
// it does nothing.
func WriteHeap(path string) error {
	if path == "" {
		return nil
	}
	runtime.GC()
	return writeProfile(path)
}

// writeProfile writes the heap profile as the last garbage collection
// left it to path.
func writeProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}

// WatchPeak writes a heap profile to path each time the live heap (as the
// last garbage collection found it) passes its largest so far by a
// sixteenth, checked every interval, until stop is called: the file then
// holds what was live near the run's peak, where a profile at the end
// (WriteHeap) sees what the run kept. With an empty path it does nothing.
func WatchPeak(path string, interval time.Duration) (stop func() error) {
	if path == "" {
		return func() error { return nil }
	}
	done, over := make(chan struct{}), make(chan error, 1)
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		var err error
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				over <- err
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				continue
			}
			if live := sample[0].Value.Uint64(); live > peak+peak/16 {
				peak = live
				err = writeProfile(path)
			}
		}
	}()
	return func() error {
		close(done)
		return <-over
	}
}
