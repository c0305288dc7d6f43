//go:build unix

package storetest

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wololo/wololo/transport"
)

// crashJobs is how many jobs the crash child commits at once.
const crashJobs = 3

func crashJob(g int) string { return fmt.Sprint("crash", g) }

// CrashChild is the child side of a crash test: it takes a new
// incarnation, then commits the crash jobs concurrently from where the
// store stands, writing "inc N" and then "c JOB I" to w after each commit
// returns, until it is killed (or a commit fails).
func CrashChild(s transport.Store, w io.Writer) error {
	var mu sync.Mutex
	out := bufio.NewWriter(w)
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush() // one write per line, after the commit returned
	}
	inc, err := s.NextIncarnation(transport.ClockIncarnation(time.Now()))
	if err != nil {
		return err
	}
	say("inc %d", inc)
	img, err := s.Load()
	if err != nil {
		return err
	}
	errs := make(chan error, crashJobs)
	for g := range crashJobs {
		job := crashJob(g)
		var from uint64 = 1
		if j := img.Jobs[job]; j != nil {
			from = j.Watermarks[CrashInput(job, 0)] + 1
		}
		go func() {
			errs <- CrashLoop(s, job, from, 0, func(i uint64) { say("c %s %d", job, i) })
		}()
	}
	return <-errs
}

// CrashTest is the parent side: Rounds times over the same store, it
// starts Child (a process running CrashChild on the store), SIGKILLs it
// after a random number of reported commits, reopens the store with Open
// and checks that every commit the child saw return is there and that no
// commit is there in part.
type CrashTest struct {
	Rounds int
	// MaxCommits bounds the random number of commits before the kill
	// (plus 20).
	MaxCommits int
	Child      func(round int) *exec.Cmd
	Open       func(round int) (transport.Store, error)
	// Describe adds to each round's log line (optional).
	Describe func(round int, s transport.Store) string
}

// Run runs the rounds.
func (c CrashTest) Run(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	reported := map[string]uint64{}
	var lastInc uint64
	for round := range c.Rounds {
		commits := c.killRound(t, round, 20+r.IntN(c.MaxCommits), time.Duration(r.IntN(3000))*time.Microsecond, reported, &lastInc)
		s, err := c.Open(round)
		if err != nil {
			t.Fatalf("round %d: reopen after kill: %v", round, err)
		}
		img, err := transport.LoadAll(s)
		if err != nil {
			t.Fatal(err)
		}
		var found []string
		for g := range crashJobs {
			job := crashJob(g)
			n, err := CheckCrashJob(job, img.Jobs[job])
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if n < reported[job] {
				t.Fatalf("round %d: %s recovered at commit %d, but commit %d had returned", round, job, n, reported[job])
			}
			found = append(found, fmt.Sprintf("%s=%d (reported %d)", job, n, reported[job]))
			reported[job] = n
		}
		extra := ""
		if c.Describe != nil {
			extra = "; " + c.Describe(round, s)
		}
		t.Logf("round %d: killed after %d reported commits; recovered %s%s", round, commits, strings.Join(found, ", "), extra)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// killRound runs the child until it has reported killAfter commits, waits
// a little more, kills it, and reads every line it wrote before dying.
func (c CrashTest) killRound(t *testing.T, round, killAfter int, extra time.Duration, reported map[string]uint64, lastInc *uint64) int {
	cmd := c.Child(round)
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
	commits := 0
	handle := func(line string) {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "inc":
			inc, _ := strconv.ParseUint(f[1], 10, 64)
			if inc <= *lastInc {
				t.Errorf("round %d: incarnation %d after %d", round, inc, *lastInc)
			}
			*lastInc = inc
		case len(f) == 3 && f[0] == "c":
			i, _ := strconv.ParseUint(f[2], 10, 64)
			if i <= reported[f[1]] {
				t.Errorf("round %d: %s commit %d reported after %d", round, f[1], i, reported[f[1]])
			}
			reported[f[1]] = i
			commits++
		default:
			t.Errorf("round %d: child said %q", round, line)
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
	time.Sleep(extra) // the kill lands anywhere in the next commits
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for line := range lines { // lines written before the kill
		handle(line)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("round %d: child ended with %v, not by the kill", round, err)
	}
	return commits
}
