//go:build !unix

package storetest

import (
	"time"
)

// cpuTime is unknown here: CPU figures read 0.
func cpuTime() time.Duration { return 0 }
