// Package diskuse measures what a directory takes on disk: the stores'
// benchmarks and `wololo bench` ask it how big a store is. It reads file
// metadata only and imports nothing of the module.
package diskuse

import (
	"io/fs"
	"path/filepath"
)

// Dir returns the disk space the files under dir take: their allocated
// blocks where the platform tells (so preallocated logs count whole),
// else their sizes; 0 if dir does not exist.
func Dir(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			n += allocated(fi)
		}
		return nil
	})
	return n
}
