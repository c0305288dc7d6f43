//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package segstore

import (
	"os"
	"path/filepath"
)

// lockDir creates dir/LOCK without locking it: this platform has no
// flock in the standard library, so nothing stops a second Open.
func lockDir(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
}
