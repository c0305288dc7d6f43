package durable

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// The crash tests run this test binary as a child process that commits in
// a loop (TestHelperProcess) and kill it or cut its WAL.
const (
	helperEnv    = "WOLOLO_DURABLE_HELPER"
	helperDirEnv = "WOLOLO_DURABLE_HELPER_DIR"
	helperNEnv   = "WOLOLO_DURABLE_HELPER_N"
)

// TestHelperProcess is the child of the crash tests; it does nothing in a
// normal test run.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for the crash tests")
	}
	err := helper(mode, os.Getenv(helperDirEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	os.Exit(0) // never Close: the process dies with the store open
}

func helper(mode, dir string) error {
	s, err := Open(dir, Options{})
	if err != nil {
		return err
	}
	switch mode {
	case "loop":
		return storetest.CrashChild(s, os.Stdout)
	case "write":
		n, err := strconv.ParseUint(os.Getenv(helperNEnv), 10, 64)
		if err != nil {
			return err
		}
		if err := storetest.CrashLoop(s, "crash0", 1, n, func(uint64) {}); err != nil {
			return err
		}
		fmt.Printf("done %d\n", n)
		return nil
	}
	return fmt.Errorf("unknown mode %q", mode)
}

func helperCmd(t *testing.T, mode, dir string, extraEnv ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode, helperDirEnv + "=" + dir}, extraEnv...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestCrashAtomicity kills a committing child at random moments, five
// times over the same directory, and checks after each kill that every
// commit the child saw return is there and that no commit is half there.
func TestCrashAtomicity(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	storetest.CrashTest{
		Rounds: 5, MaxCommits: 150,
		Child: func(int) *exec.Cmd { return helperCmd(t, "loop", dir) },
		Open:  func(int) (transport.Store, error) { return Open(dir, Options{}) },
	}.Run(t)
}

// walFiles returns the WAL files of dir, newest (highest number) last.
func walFiles(t *testing.T, dir string) []string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(logs) // zero-padded numbers
	return logs
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		src, err := os.Open(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(to, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		src.Close()
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWALTailCorruption writes commits in a child that exits without
// closing (the commits are only in the WAL), then truncates the newest WAL
// or flips a byte in it at several offsets and reopens a copy each time:
// Open must either fail with an error or give a prefix of the commits,
// every commit whole. What Pebble did is logged (and asserted where
// doc.go states it).
func TestWALTailCorruption(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	const n = 60 // ~400 KB of WAL: more than the first 256 KB memtable
	base := t.TempDir()
	out, err := helperCmd(t, "write", base, fmt.Sprint(helperNEnv, "=", n)).Output()
	if err != nil || strings.TrimSpace(string(out)) != fmt.Sprint("done ", n) {
		t.Fatalf("helper: %v, said %q", err, out)
	}
	logs := walFiles(t, base)
	if len(logs) == 0 {
		t.Fatal("no WAL file")
	}
	newest := filepath.Base(logs[len(logs)-1])
	fi, err := os.Stat(logs[len(logs)-1])
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	t.Logf("WAL files %d, newest %s of %d bytes", len(logs), newest, size)

	type variant struct {
		name     string
		truncate int64 // new size, or -1
		flip     int64 // offset of the byte to flip, or -1
	}
	var vs []variant
	for _, back := range []int64{1, 9, 100, 1000, 3000, 10000} {
		if back < size {
			vs = append(vs, variant{fmt.Sprintf("truncate -%d", back), size - back, -1})
		}
	}
	vs = append(vs, variant{"truncate to half", size / 2, -1}, variant{"truncate to 0", 0, -1})
	for _, back := range []int64{1, 9, 100, 1000, 3000} {
		if back < size {
			vs = append(vs, variant{fmt.Sprintf("flip -%d", back), -1, size - back})
		}
	}
	vs = append(vs, variant{"flip at half", -1, size / 2}, variant{"flip in the first record", -1, 20})

	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, base, dir)
			path := filepath.Join(dir, newest)
			if v.truncate >= 0 {
				if err := os.Truncate(path, v.truncate); err != nil {
					t.Fatal(err)
				}
			}
			if v.flip >= 0 {
				f, err := os.OpenFile(path, os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				b := make([]byte, 1)
				if _, err := f.ReadAt(b, v.flip); err != nil {
					t.Fatal(err)
				}
				b[0] ^= 0x5a
				if _, err := f.WriteAt(b, v.flip); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			var s *Store
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("Open panicked: %v", p)
					}
				}()
				s, err = Open(dir, Options{Log: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: testkit.Writer(t)})})
			}()
			if err != nil {
				t.Logf("%s: Open fails: %v", v.name, err)
				if !strings.Contains(err.Error(), "durable: open") {
					t.Errorf("error without context: %v", err)
				}
				if !IsCorruption(err) {
					t.Errorf("not reported as corruption: %v", err)
				}
				if strings.HasPrefix(v.name, "truncate") {
					t.Errorf("a truncated WAL tail should be tolerated")
				}
				return
			}
			defer s.Close()
			img, err := transport.LoadAll(s)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			got, err := storetest.CheckCrashJob("crash0", img.Jobs["crash0"])
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: Open succeeds with commits 1..%d of %d", v.name, got, n)
			if v.name == "flip at half" || v.name == "flip in the first record" {
				t.Errorf("a corrupt record followed by valid ones should fail Open, it gave commits 1..%d", got)
			}
		})
	}
}
