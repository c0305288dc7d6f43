//go:build !linux

package segstore

import "os"

// fdatasync falls back to (*os.File).Sync where fdatasync(2) is not in
// the standard library (on macOS Sync is an F_FULLFSYNC).
func fdatasync(f *os.File) error { return f.Sync() }
