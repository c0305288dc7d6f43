package stage

import (
	"encoding/binary"
	"math/bits"
)

// Route picks a receiver instance among n for a row key: FNV-1a (64 bit) of
// the key, modulo n. It must never change: senders on different processes,
// and a process after a restart, must send a key to the same place.
//
// Among two (the default topology's shards) it is computed without the
// hash: FNV-1a's lowest bit, which modulo 2 is, is that of its offset
// basis (1) flipped by the lowest bit of each byte of the key, as each
// step xors a byte in and multiplies by an odd prime (an odd factor
// keeps a product's lowest bit). The bytes are read eight at a time, where
// the hash takes a multiplication per byte, one after the other: a
// twentieth of the gateway's CPU in an upload of the full dataset.
func Route(key []byte, n int) int {
	switch {
	case n <= 1:
		return 0
	case n == 2:
		return 1 ^ lowBitsParity(key)
	}
	return int(FNV1a(key) % uint64(n))
}

// lowBitsParity is the parity of the lowest bits of key's bytes.
func lowBitsParity(key []byte) int {
	var x uint64
	for ; len(key) >= 8; key = key[8:] {
		x ^= binary.LittleEndian.Uint64(key)
	}
	for _, c := range key {
		x ^= uint64(c)
	}
	return bits.OnesCount64(x&0x0101010101010101) & 1
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
