package inputlog

import (
	"os"
	"syscall"
)

// openDirect opens path for direct writes (O_DIRECT); nil where the file
// system refuses it.
func openDirect(path string) *os.File {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_DIRECT, 0)
	if err != nil {
		return nil
	}
	return f
}
