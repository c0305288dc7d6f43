// Package cpuprofile is the --cpuprofile flag of the long-running commands
// (worker, local, demo): a CPU profile of the whole process, written to a
// file until the command ends. A leaf, so that a runner that only needs the
// profile does not link what the profiled process runs.
package cpuprofile

import (
	"fmt"
	"os"
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
