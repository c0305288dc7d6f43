//go:build !unix

package diskuse

import "io/fs"

func allocated(fi fs.FileInfo) int64 { return fi.Size() }
