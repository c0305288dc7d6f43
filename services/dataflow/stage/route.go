package stage

// Route picks a receiver instance among n for a row key: FNV-1a (64 bit) of
// the key, modulo n. It must never change: senders on different processes,
// and a process after a restart, must send a key to the same place.
func Route(key []byte, n int) int {
	if n <= 1 {
		return 0
	}
	return int(FNV1a(key) % uint64(n))
}

// FNV1a is the 64-bit FNV-1a hash of key (hash/fnv's New64a, without its
// interface: a call per key, not per write).
func FNV1a(key []byte) uint64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for _, c := range key {
		h ^= uint64(c)
		h *= prime64
	}
	return h
}
