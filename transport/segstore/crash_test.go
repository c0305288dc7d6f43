package segstore

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// The crash test runs this test binary as a child process that commits
// in a loop (TestHelperProcess) and kills it.
const (
	helperEnv    = "WOLOLO_SEGSTORE_HELPER"
	helperDirEnv = "WOLOLO_SEGSTORE_HELPER_DIR"
	helperSegEnv = "WOLOLO_SEGSTORE_HELPER_SEGMENT"

	crashOutputs = 3    // outputs per commit
	crashPayload = 2000 // bytes of rows per output
)

// Every commit i of job J writes values that all carry i: both input
// watermarks, one entry per output channel, the "last" record and the
// record "r<i%4>", and a state entry (a snapshot replacing the log every
// tenth commit). Every fifth commit is followed by a Trim of each output
// channel to i-3. checkCrashJob can so tell whether a commit is all there.
func crashInput(job string, k int) transport.ChannelID {
	return storetest.Ch(job, "in", fmt.Sprint("up", k), "me")
}

func crashOutput(job string, k int) transport.ChannelID {
	return storetest.Ch(job, "out", "me", fmt.Sprint("down", k))
}

func crashRows(job string, i uint64, k int) *wololov1.RowBatch {
	tag := fmt.Sprintf("%s/%d/%d/", job, i, k)
	data := bytes.Repeat([]byte(tag), crashPayload/len(tag)+1)[:crashPayload]
	return &wololov1.RowBatch{Rows: &wololov1.RowBatch_Tokens{Tokens: &wololov1.TokenRows{
		Token: &wololov1.TextColumn{Data: data, Ends: []uint32{uint32(len(data))}},
	}}}
}

func crashState(i uint64) []byte {
	if i%10 == 0 {
		return fmt.Appendf(nil, "snap %d", i)
	}
	return fmt.Append(nil, i)
}

func crashCommit(job string, i uint64) *transport.Commit {
	c := &transport.Commit{
		Job:        job,
		Inputs:     map[transport.ChannelID]uint64{crashInput(job, 0): i, crashInput(job, 1): i},
		Records:    map[string][]byte{"last": fmt.Append(nil, i), fmt.Sprint("r", i%4): fmt.Append(nil, i)},
		State:      crashState(i),
		ResetState: i%10 == 0,
	}
	for k := range crashOutputs {
		c.Outputs = append(c.Outputs, transport.Entry{Channel: crashOutput(job, k), Seq: i, Rows: crashRows(job, i, k)})
	}
	return c
}

// commitLoop commits job's commits from..to (to 0: forever), calling
// report after each returns.
func commitLoop(s transport.Store, job string, from, to uint64, report func(uint64)) error {
	for i := from; to == 0 || i <= to; i++ {
		if err := s.Commit(crashCommit(job, i)); err != nil {
			return err
		}
		report(i)
		if i%5 == 0 && i > 3 {
			for k := range crashOutputs {
				if err := s.Trim(crashOutput(job, k), i-3); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkCrashJob checks that job j holds exactly commits 1..n for some n
// (nothing of a commit after n, all of every commit up to n) and returns
// n. Trims may be lost (they are not synced), but never half of one.
func checkCrashJob(id string, j *transport.JobImage) (uint64, error) {
	if j == nil {
		return 0, nil
	}
	n := j.Watermarks[crashInput(id, 0)]
	fail := func(format string, args ...any) (uint64, error) {
		return n, fmt.Errorf("job %s at commit %d: %s", id, n, fmt.Sprintf(format, args...))
	}
	if n == 0 {
		if len(j.Watermarks)+len(j.Reserved)+len(j.Acked)+len(j.Outbox)+len(j.Records)+len(j.State) != 0 {
			return fail("no watermark but other values: %+v", j)
		}
		return 0, nil
	}
	if w := j.Watermarks[crashInput(id, 1)]; w != n {
		return fail("second input watermark %d", w)
	}
	if len(j.Watermarks) != 2 {
		return fail("watermarks %v", j.Watermarks)
	}
	for k := range crashOutputs {
		ch := crashOutput(id, k)
		if r := j.Reserved[ch]; r != n {
			return fail("%s reserved %d", ch, r)
		}
		acked := j.Acked[ch]
		if acked >= n {
			return fail("%s acked %d", ch, acked)
		}
		q := j.Outbox[ch]
		if uint64(len(q)) != n-acked {
			return fail("%s holds %d entries, want %d..%d", ch, len(q), acked+1, n)
		}
		for x, e := range q {
			want := acked + 1 + uint64(x)
			if e.Seq != want || e.Channel != ch || e.EOF || !proto.Equal(e.Rows, crashRows(id, want, k)) {
				return fail("%s entry %d is seq %d (or its rows differ)", ch, x, e.Seq)
			}
		}
	}
	if string(j.Records["last"]) != fmt.Sprint(n) {
		return fail("record last = %q", j.Records["last"])
	}
	for m := range uint64(4) {
		name := fmt.Sprint("r", m)
		got, ok := j.Records[name]
		if n < m || (m == 0 && n < 4) {
			if ok {
				return fail("record %s = %q, want none", name, got)
			}
			continue
		}
		want := n - (n-m)%4
		if string(got) != fmt.Sprint(want) {
			return fail("record %s = %q, want %d", name, got, want)
		}
	}
	var want [][]byte
	start := n / 10 * 10
	if start == 0 {
		start = 1
	}
	for i := start; i <= n; i++ {
		want = append(want, crashState(i))
	}
	if !slices.EqualFunc(j.State, want, bytes.Equal) {
		return fail("state log %q, want %q", j.State, want)
	}
	return n, nil
}

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
			from = j.Watermarks[crashInput(job, 0)] + 1
		}
		go func() {
			errs <- commitLoop(s, job, from, 0, func(i uint64) { say("c %s %d", job, i) })
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
			n, err := checkCrashJob(job, img.Jobs[job])
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
