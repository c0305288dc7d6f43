package schema

import (
	"crypto/rand"
	"regexp"
)

// A job id is 1-64 letters, digits, '-' or '_': the gateway refuses any
// other, and a client may choose its own (to resume) or take a NewJobID.
var jobIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidJobID reports whether id is a well-formed job id.
func ValidJobID(id string) bool { return jobIDPattern.MatchString(id) }

// NewJobID returns a fresh random job id: 12 characters from an alphabet
// without look-alikes (no l, o, 0, 1).
func NewJobID() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
