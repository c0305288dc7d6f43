package segstore

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/directio"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// The crash test runs this test binary as a child process that commits
// in a loop (TestHelperProcess) and kills it.
const (
	helperEnv    = "WOLOLO_SEGSTORE_HELPER"
	helperDirEnv = "WOLOLO_SEGSTORE_HELPER_DIR"
	helperSegEnv = "WOLOLO_SEGSTORE_HELPER_SEGMENT"
	// helperEveryBlockEnv set: the child writes every whole block
	// directly (Options.minDirect), not only large groups.
	helperEveryBlockEnv = "WOLOLO_SEGSTORE_HELPER_EVERY_BLOCK"
)

// TestHelperProcess is the child of the crash test; it does nothing in a
// normal test run.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for the crash test")
	}
	if err := helper(mode, os.Getenv(helperDirEnv)); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	os.Exit(0) // never Close: the process dies with the store open
}

func helper(mode, dir string) error {
	if mode != "loop" {
		return fmt.Errorf("unknown mode %q", mode)
	}
	segSize, _ := strconv.ParseInt(os.Getenv(helperSegEnv), 10, 64)
	opts := Options{SegmentSize: segSize, IdleAfter: 5 * time.Millisecond} // the janitor's idle compaction runs too
	if os.Getenv(helperEveryBlockEnv) != "" {
		opts.minDirect = directio.Block
	}
	s, err := Open(dir, opts)
	if err != nil {
		return err
	}
	return storetest.CrashChild(s, os.Stdout)
}

func helperCmd(mode, dir string, extraEnv ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode, helperDirEnv + "=" + dir}, extraEnv...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestCrashAtomicity kills a committing child at random moments, several
// times over the same directory, and checks after each kill that every
// commit the child saw return is there and that no commit is half there.
// Half of the rounds use 48 KiB segments, so that the kill may land in a
// rotation, a compaction or a deletion of segments, and write every whole
// block directly, so that it may land between a group's direct write and
// the buffered write of its last block's end.
func TestCrashAtomicity(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	segSize := func(round int) int64 {
		if round%2 == 1 {
			return 0 // the default
		}
		return 48 << 10
	}
	storetest.CrashTest{
		Rounds: 16, MaxCommits: 200,
		Child: func(round int) *exec.Cmd {
			env := []string{fmt.Sprint(helperSegEnv, "=", segSize(round))}
			if segSize(round) != 0 {
				env = append(env, helperEveryBlockEnv+"=1")
			}
			return helperCmd("loop", dir, env...)
		},
		Open: func(int) (transport.Store, error) { return Open(dir, Options{Log: testLog(t), IdleAfter: -1}) },
		Describe: func(round int, s transport.Store) string {
			d := s.(*Store).Disk()
			return fmt.Sprintf("segments of %d: %d segments, %d bytes", segSize(round), d.Segments, d.DiskBytes)
		},
	}.Run(t)
}
