// Package cpuprofile is the --cpuprofile flag of the long-running commands
// (worker, local, demo): a CPU profile of the whole process, written to a
// file until the command ends; and demo's --memprofile, a heap profile
// written once (WriteHeap). A leaf, so that a runner that only needs the
// profile does not link what the profiled process runs.
package cpuprofile

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
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
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}
