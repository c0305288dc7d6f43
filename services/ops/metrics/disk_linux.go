package metrics

import "syscall"

// filesystem is the bytes available to unprivileged writers and the size
// of the filesystem that holds dir.
func filesystem(dir string) (avail, size uint64, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, false
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), true
}
