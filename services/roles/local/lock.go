package local

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// LockFile is the file in the data directory that the runner owning the
// directory holds locked (flock) while it runs, with its pid inside.
//
// A data directory holds one cluster's stores, its peers file and its
// ProcessService socket; a second runner on it used to start six processes
// that died on ports in use, report the first cluster's processes as its
// own and, stopped, remove the first one's socket. The lock is an flock
// rather than a pid file because the kernel drops it when its holder dies,
// SIGKILL included: a stale lock never stands in the way, and a pid that
// was reused since can never be taken for a live runner. The pid in the
// file serves only to name the holder. The file is never removed: a
// runner that removed it on exit could let a third one lock a new file
// while a second still holds the old one.
const LockFile = "local.lock"

// InUseError is the refusal of a data directory another runner holds.
type InUseError struct {
	Dir  string // the data directory
	PID  int    // the holder's pid, 0 if it could not be read
	Lock string // the lock file
}

func (e *InUseError) Error() string {
	holder := "another wololo local"
	if e.PID > 0 {
		holder += " (pid " + strconv.Itoa(e.PID) + ")"
	}
	return fmt.Sprintf("data directory %s is in use by %s, which holds %s: stop it first, or give this one another --data", e.Dir, holder, e.Lock)
}

// dirLock is a data directory this runner holds.
type dirLock struct {
	f    *os.File
	once sync.Once
}

// lockDataDir takes dir's lock or returns an *InUseError naming its holder.
func lockDataDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		content, _ := io.ReadAll(io.LimitReader(f, 64))
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &InUseError{Dir: dir, PID: holderPID(content), Lock: path}
		}
		return nil, fmt.Errorf("lock the data directory: flock %s: %w", path, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the data directory: %w", err)
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock the data directory: %w", err)
	}
	return &dirLock{f: f}, nil
}

// release gives the directory up (closing the file drops the flock). It is
// safe to call more than once, and on nil.
func (l *dirLock) release() {
	if l == nil {
		return
	}
	l.once.Do(func() { l.f.Close() })
}

// holderPID reads the pid a lock file holds; 0 if it holds none (its
// holder is between taking the lock and writing its pid).
func holderPID(content []byte) int {
	pid, err := strconv.Atoi(string(bytes.TrimSpace(content)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
