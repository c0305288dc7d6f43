// Package jobid makes and checks the ids of jobs: the gateway makes one
// for every job a client creates without naming it, and checks every id a
// client gives before anything is created or looked up for it; the client
// makes one for a submit without --job.
//
// It is a leaf: it knows nothing of the channel protocol, which takes any
// job name safe as a store key (transport.ValidJob) and leaves the format
// to the gateway, the one place jobs are created.
package jobid

import "crypto/rand"

// MaxLen is the longest job id.
const MaxLen = 64

// Valid reports whether id is a well-formed job id: 1 to MaxLen ASCII
// letters, digits, '-' or '_'. Job ids become store keys, file and log
// content: the gateway checks them where it creates jobs and looks them
// up, before anything is created for the job.
func Valid(id string) bool {
	if len(id) == 0 || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// New returns a fresh random job id: 12 characters from an alphabet
// without look-alikes (no l, o, 0, 1).
func New() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
