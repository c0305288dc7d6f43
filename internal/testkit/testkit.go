// Package testkit is the one home of the helpers this module's tests
// share: waiting until a condition holds (polled, or asked again at each
// write to a log) or until the clock's millisecond turns, a logger that
// writes to the test, a log output safe for concurrent writers, the wololo binary
// built as `make build` builds it, once per test binary, the data a test
// binary makes once (Shared), an in-memory network for gRPC servers and
// clients (BufNet, BufListener), golden files: a script of events run
// through the code under test, and the record of what it decided compared
// with testdata/ (golden.go; -update rewrites), and the byte-for-byte
// comparison of a job's outputs, keyed by name, with the expected ones
// (SameFiles, SameBytes).
//
// It exists so that each helper is written, and fixed, once: before it,
// every package kept its own copy, and the copies had drifted (a build
// without -trimpath or the version stamp, a wait that said only
// "condition not reached"). It imports nothing of this module, so that
// any package's tests may use it without pulling in what the package's
// import rules forbid (imports_test.go allows it to tests only), and it is
// under internal/ so that nothing outside the module depends on it.
package testkit

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Main runs the tests of m and then removes what the helpers left in the
// temporary directory for the whole test binary (the built binary and
// whatever was registered with RemoveAfterTests), whatever the outcome.
// A package whose tests use WololoBinary calls it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	removeAll()
	os.Exit(code)
}

var (
	cleanupMu sync.Mutex
	cleanups  []string
)

// RemoveAfterTests registers a directory shared by the tests of one
// binary for Main to remove once they have all run.
func RemoveAfterTests(dir string) {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	cleanups = append(cleanups, dir)
}

func removeAll() {
	cleanupMu.Lock()
	defer cleanupMu.Unlock()
	for _, dir := range cleanups {
		os.RemoveAll(dir)
	}
	cleanups = nil
}

// Await asks cond again after 1 ms, then after twice as long each time up
// to 100 ms between two asks (a condition that is quick to come is seen
// at once, one that runs a process or scrapes a server is not asked
// hundreds of times a second), until it holds or d has passed; it reports
// whether it held: for a test that goes on, and says what it saw, when it
// did not.
func Await(d time.Duration, cond func() bool) bool {
	return await(d, time.Millisecond, 100*time.Millisecond, cond)
}

// AwaitEvery is Await asking cond every period: for a state that lasts a
// short while (an upload under way, to be interrupted before it ends),
// which a pause grown to 100 ms could miss.
func AwaitEvery(d, every time.Duration, cond func() bool) bool {
	return await(d, every, every, cond)
}

func await(d, first, most time.Duration, cond func() bool) bool {
	pause := first
	for deadline := time.Now().Add(d); !cond(); pause = min(2*pause, most) {
		if time.Now().After(deadline) {
			return cond()
		}
		time.Sleep(pause)
	}
	return true
}

// WaitFor polls cond until it holds, and fails the test with "timed out
// waiting for <what>" when it has not within d.
func WaitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	if !Await(d, cond) {
		t.Fatalf("timed out after %s waiting for %s", d, what)
	}
}

// WaitForNil calls f until it returns nil, and fails the test with what it
// waited for and f's last error when it has not within d.
func WaitForNil(t testing.TB, what string, d time.Duration, f func() error) {
	t.Helper()
	var err error
	if !Await(d, func() bool { err = f(); return err == nil }) {
		t.Fatalf("timed out after %s waiting for %s: %v", d, what, err)
	}
}

// NextMillisecond returns once the wall clock reads a later millisecond
// than when it was called: what two events need to be told apart, or a
// duration to be more than 0, where the code under test keeps its times
// in milliseconds (the stores do) and has no clock a test could set.
func NextMillisecond() {
	for start := time.Now().UnixMilli(); time.Now().UnixMilli() == start; {
		time.Sleep(100 * time.Microsecond)
	}
}

// Writer is an io.Writer that logs each write to t, one t.Log per write
// without its trailing newline: a logger's or a child process's output
// shown with the test that caused it.
func Writer(t testing.TB) io.Writer { return testWriter{t} }

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Logger is an hclog.Logger named after the test that writes lines at
// level and above to it.
func Logger(t testing.TB, level hclog.Level) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: level, Output: Writer(t)})
}

// SyncBuffer is a log's output that keeps what it was written, safe for
// concurrent writers (a logger shared by goroutines). The zero value is
// ready to use.
type SyncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed by the next Write (Await), nil if none waits
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.b.Write(p)
}

// Await waits until cond holds of everything written so far, asking it
// again after each write, or until d has passed; it reports whether cond
// held. A log line a test waits for is seen as it is written.
func (b *SyncBuffer) Await(d time.Duration, cond func(written string) bool) bool {
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for {
		b.mu.Lock()
		s := b.b.String()
		if b.written == nil {
			b.written = make(chan struct{})
		}
		next := b.written
		b.mu.Unlock()
		if cond(s) {
			return true
		}
		select {
		case <-next:
		case <-timeout.C:
			return cond(b.String())
		}
	}
}

// WaitFor waits as Await does, and fails the test with "timed out waiting
// for <what>" and what was written when cond has not held within d.
func (b *SyncBuffer) WaitFor(t testing.TB, what string, d time.Duration, cond func(written string) bool) {
	t.Helper()
	if !b.Await(d, cond) {
		t.Fatalf("timed out after %s waiting for %s; written:\n%s", d, what, b.String())
	}
}

// String is everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Since is what was written after the first n bytes, and the length now.
func (b *SyncBuffer) Since(n int) (string, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.b.Bytes()[n:]), b.b.Len()
}

// versionPkg receives the commit by the linker, as the Makefile's
// VERSION_LDFLAGS pass it.
const versionPkg = "github.com/wololo/wololo/services/cmdline/version"

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// WololoBinary builds the wololo binary the way `make build` does
// (CGO_ENABLED=0, -trimpath, the commit and whether the checkout is
// modified passed to services/cmdline/version), once per test binary, and
// returns its path. Main removes it after the tests.
func WololoBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() { binPath, binErr = build() })
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func build() (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	dir, err := os.MkdirTemp("", "wololo-test-bin-")
	if err != nil {
		return "", err
	}
	RemoveAfterTests(dir)
	bin := filepath.Join(dir, "wololo")
	ldflags := fmt.Sprintf("-X %s.Commit=%s -X %s.Modified=%t", versionPkg, git(root, "rev-parse", "HEAD"), versionPkg, git(root, "status", "--porcelain") != "")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin, ".")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// git is the trimmed output of a git command in dir, or "" without git.
func git(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Shared is what the tests of one binary share and make once, such as
// generated datasets with their reference answers: the first test that
// asks makes it in a new directory of the temporary directory, which Main
// removes after the tests. A failure to make it fails every test that
// asks.
type Shared[T any] struct {
	prefix string
	make   func(dir string) (T, error)

	once sync.Once
	dir  string
	v    T
	err  error
}

// NewShared is a Shared made by make in a directory named with prefix.
func NewShared[T any](prefix string, make func(dir string) (T, error)) *Shared[T] {
	return &Shared[T]{prefix: prefix, make: make}
}

// Get makes the shared value on the first call and returns it.
func (s *Shared[T]) Get(t testing.TB) T {
	t.Helper()
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", s.prefix); s.err != nil {
			return
		}
		RemoveAfterTests(s.dir)
		s.v, s.err = s.make(s.dir)
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.v
}

// Dir is the directory the value was made in, "" before Get.
func (s *Shared[T]) Dir() string { return s.dir }
