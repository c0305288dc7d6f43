package directio

import (
	"os"
	"syscall"
)

// Flag is the open(2) flag that asks for direct I/O: O_DIRECT on Linux,
// 0 elsewhere (where nothing is written directly).
const Flag = syscall.O_DIRECT

// OpenDirect opens path for direct writes; nil where the file system
// refuses it (the caller writes through the page cache).
func OpenDirect(path string) *os.File {
	f, err := os.OpenFile(path, os.O_WRONLY|Flag, 0)
	if err != nil {
		return nil
	}
	return f
}
