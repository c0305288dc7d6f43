package testkit

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWaitForReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	WaitFor(t, "three polls", time.Second, func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("polled %d times, want 3", n)
	}
}

func TestAwaitReportsWhetherTheConditionHeld(t *testing.T) {
	if Await(20*time.Millisecond, func() bool { return false }) {
		t.Error("Await of a condition that never holds reported true")
	}
	n := 0
	if !Await(time.Second, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("Await returned after %d polls, want true after 3", n)
	}
}

func TestAwaitEveryAsksAtItsPeriod(t *testing.T) {
	var asked []time.Time
	AwaitEvery(time.Second, 10*time.Millisecond, func() bool { asked = append(asked, time.Now()); return len(asked) == 4 })
	for i := 1; i < len(asked); i++ {
		if gap := asked[i].Sub(asked[i-1]); gap < 10*time.Millisecond {
			t.Errorf("asked again after %s, want 10ms at least", gap)
		}
	}
}

func TestWaitForNilReportsTheLastError(t *testing.T) {
	r := &recordingT{}
	n := 0
	WaitForNil(r, "the answer", 20*time.Millisecond, func() error { n++; return fmt.Errorf("try %d", n) })
	if len(r.failures) != 1 || !strings.Contains(r.failures[0], "waiting for the answer: try ") {
		t.Errorf("failed with %q, want the last error named", r.failures)
	}
}

func TestNextMillisecondTurnsTheMillisecond(t *testing.T) {
	for range 3 {
		before := time.Now().UnixMilli()
		NextMillisecond()
		if after := time.Now().UnixMilli(); after <= before {
			t.Fatalf("NextMillisecond returned at %d ms, called at %d ms", after, before)
		}
	}
}

func TestSyncBufferAwaitSeesAWrite(t *testing.T) {
	var b SyncBuffer
	b.Write([]byte("starting\n"))
	go func() { b.Write([]byte("ready\n")) }()
	b.WaitFor(t, "the ready line", 10*time.Second, func(s string) bool { return strings.Contains(s, "ready") })
	if b.Await(20*time.Millisecond, func(s string) bool { return strings.Contains(s, "never") }) {
		t.Error("Await of a line never written reported true")
	}
}

func TestSyncBufferKeepsEveryConcurrentWrite(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { fmt.Fprintf(&b, "%d\n", i) })
	}
	wg.Wait()
	if got := len(b.String()); got != 16 {
		t.Errorf("kept %d bytes, want 16", got)
	}
	b.Write([]byte("tail"))
	if since, n := b.Since(16); since != "tail" || n != 20 {
		t.Errorf("Since(16) = %q, %d; want \"tail\", 20", since, n)
	}
}

func TestSharedIsMadeOnceInItsDirectory(t *testing.T) {
	made := 0
	s := NewShared("wololo-testkit-", func(dir string) (string, error) { made++; return dir, nil })
	if s.Dir() != "" {
		t.Errorf("Dir before Get = %q", s.Dir())
	}
	first, second := s.Get(t), s.Get(t)
	if made != 1 || first != second || first != s.Dir() {
		t.Errorf("made %d times, got %q then %q, Dir %q", made, first, second, s.Dir())
	}
	removeAll()
	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("%s still there after the tests: %v", s.Dir(), err)
	}
}
