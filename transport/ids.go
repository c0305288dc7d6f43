package transport

import (
	"crypto/rand"
	"errors"
)

// Bounds on what a peer may claim, checked before any state is created for
// the claim.
const (
	// MaxJobIDLen is the longest job id.
	MaxJobIDLen = 64
	// MaxNameLen is the longest stream or instance name a frame may carry.
	MaxNameLen = 128
	// MaxReasonLen is the longest reason a FailJob may give; a longer one
	// is cut.
	MaxReasonLen = 1024
	// MaxIncarnationStep is how far above the newest incarnation known of
	// an instance (0 for one not seen yet) a claimed incarnation may be.
	// Real incarnations count up by one per start; a claim far above would
	// fence every real one to come.
	MaxIncarnationStep = 1 << 20
)

var (
	// ErrInvalid: a frame or request that breaks the protocol's rules (a
	// malformed job id, an oversized name, an incarnation out of range).
	ErrInvalid = errors.New("invalid request")
	// ErrNotPeer: an instance the topology does not connect to this one.
	ErrNotPeer = errors.New("not a peer of this instance")
	// ErrNotSelf: a caller that claims to be an instance its certificate
	// does not name.
	ErrNotSelf = errors.New("a caller may only speak as itself")
	// ErrUnauthenticated: a caller without a verified certificate where
	// one is required.
	ErrUnauthenticated = errors.New("no verified certificate")
)

// ValidJobID reports whether id is a well-formed job id: 1 to MaxJobIDLen
// ASCII letters, digits, '-' or '_'. Job ids become store keys, file and log
// content: every entry point (JobService, Exchange, DropJob) checks them
// before anything is created for the job.
func ValidJobID(id string) bool {
	if len(id) == 0 || len(id) > MaxJobIDLen {
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
