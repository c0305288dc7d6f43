//go:build !unix

package storetest

import (
	"os"
	"time"
)

// cpuTime is unknown here: CPU figures read 0.
func cpuTime() time.Duration { return 0 }

func allocated(fi os.FileInfo) int64 { return fi.Size() }
