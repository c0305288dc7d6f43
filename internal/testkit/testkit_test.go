package testkit

import (
	"fmt"
	"os"
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
