//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package segstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive flock on dir/LOCK, so that a second Open of
// the same directory, in this process or another, fails rather than
// sharing the segments. The kernel drops the lock when the process dies.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		ferr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB)
	}); err != nil {
		f.Close()
		return nil, err
	}
	if ferr != nil {
		f.Close()
		if errors.Is(ferr, syscall.EWOULDBLOCK) {
			return nil, errInUse
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), ferr)
	}
	return f, nil
}
