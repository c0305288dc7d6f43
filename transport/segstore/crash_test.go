package segstore

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wololo/wololo/transport/storetest"
)

// The crash test runs this test binary as a child process that commits
// in a loop (TestHelperProcess) and kills it.
const (
	helperEnv    = "WOLOLO_SEGSTORE_HELPER"
	helperDirEnv = "WOLOLO_SEGSTORE_HELPER_DIR"
	helperSegEnv = "WOLOLO_SEGSTORE_HELPER_SEGMENT"
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
	segSize, _ := strconv.ParseInt(os.Getenv(helperSegEnv), 10, 64)
	// IdleAfter short: the janitor's idle compaction runs too.
	s, err := Open(dir, Options{SegmentSize: segSize, IdleAfter: 5 * time.Millisecond})
	if err != nil {
		return err
	}
	var outMu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush() // one write per line, after the commit returned
	}
	if mode != "loop" {
		return fmt.Errorf("unknown mode %q", mode)
	}
	inc, err := s.NextIncarnation()
	if err != nil {
		return err
	}
	say("inc %d", inc)
	img, err := s.Load()
	if err != nil {
		return err
	}
	errs := make(chan error, 3)
	for g := range 3 {
		job := fmt.Sprint("crash", g)
		var from uint64 = 1
		if j := img.Jobs[job]; j != nil {
			from = j.Watermarks[storetest.CrashInput(job, 0)] + 1
		}
		go func() {
			errs <- storetest.CrashLoop(s, job, from, 0, func(i uint64) { say("c %s %d", job, i) })
		}()
	}
	return <-errs
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
// rotation, a compaction or a deletion of segments.
func TestCrashAtomicity(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	reported := map[string]uint64{}
	var lastInc uint64
	for round := range 16 {
		segSize := int64(48 << 10)
		if round%2 == 1 {
			segSize = 0 // the default
		}
		cmd := helperCmd("loop", dir, fmt.Sprint(helperSegEnv, "=", segSize))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		killAfter := 20 + r.IntN(200)
		commits := 0
		handle := func(line string) {
			f := strings.Fields(line)
			switch {
			case len(f) == 2 && f[0] == "inc":
				inc, _ := strconv.ParseUint(f[1], 10, 64)
				if inc <= lastInc {
					t.Errorf("round %d: incarnation %d after %d", round, inc, lastInc)
				}
				lastInc = inc
			case len(f) == 3 && f[0] == "c":
				i, _ := strconv.ParseUint(f[2], 10, 64)
				if i <= reported[f[1]] {
					t.Errorf("round %d: %s commit %d reported after %d", round, f[1], i, reported[f[1]])
				}
				reported[f[1]] = i
				commits++
			default:
				t.Errorf("round %d: helper said %q", round, line)
			}
		}
		timeout := time.After(30 * time.Second)
	read:
		for commits < killAfter {
			select {
			case line, ok := <-lines:
				if !ok {
					break read
				}
				handle(line)
			case <-timeout:
				t.Fatalf("round %d: only %d commits in 30s", round, commits)
			}
		}
		time.Sleep(time.Duration(r.IntN(3000)) * time.Microsecond)
		if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for line := range lines { // lines written before the kill
			handle(line)
		}
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("round %d: helper ended with %v, not by the kill", round, err)
		}

		s, err := Open(dir, Options{Log: testLog(t), IdleAfter: -1})
		if err != nil {
			t.Fatalf("round %d: reopen after kill: %v", round, err)
		}
		img, err := s.Load()
		if err != nil {
			t.Fatal(err)
		}
		var found []string
		for g := range 3 {
			job := fmt.Sprint("crash", g)
			n, err := storetest.CheckCrashJob(job, img.Jobs[job])
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if n < reported[job] {
				t.Fatalf("round %d: %s recovered at commit %d, but commit %d had returned", round, job, n, reported[job])
			}
			found = append(found, fmt.Sprintf("%s=%d (reported %d)", job, n, reported[job]))
			reported[job] = n
		}
		d := s.Disk()
		t.Logf("round %d (segments of %d): killed after %d reported commits; recovered %s; %d segments, %d bytes",
			round, segSize, commits, strings.Join(found, ", "), d.Segments, d.DiskBytes)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
