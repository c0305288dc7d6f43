package transport

import "errors"

// Bounds on what a peer may claim, checked before any state is created for
// the claim (the bounds on incarnations are in incarnation.go).
const (
	// MaxJobLen is the longest job name a frame may carry.
	MaxJobLen = 64
	// MaxNameLen is the longest stream or instance name a frame may carry.
	MaxNameLen = 128
	// MaxReasonLen is the longest reason a FailJob may give; a longer one
	// is cut.
	MaxReasonLen = 1024
)

var (
	// ErrInvalid: a frame or request that breaks the protocol's rules (a
	// malformed job name, an oversized name, an incarnation out of range).
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

// ValidJob reports whether job may name a channel's job: 1 to MaxJobLen
// bytes, each an ASCII letter, digit, '-' or '_'. The channel protocol does
// not make job names and does not know how they are made (the gateway
// does, services/base/jobid); it checks only that a name it is given is
// safe where the name goes: a store key, a log field. Every entry point
// (Exchange, IntroduceJob, DropJob, FailJob) checks it before anything is
// created for the job.
//
// It takes exactly the names the gateway's job ids may be (jobid.Valid;
// the gateway's tests pin that the two agree), so no receiver takes or
// refuses a name it did not when the job id format lived here; and a
// receiver takes streams only of jobs the gateway introduced, which it
// does only under ids it made or checked.
func ValidJob(job string) bool {
	if len(job) == 0 || len(job) > MaxJobLen {
		return false
	}
	for i := 0; i < len(job); i++ {
		if !keyByte(job[i]) {
			return false
		}
	}
	return true
}

// keyByte reports whether c may appear in a job name: an ASCII letter,
// digit, '-' or '_', nothing a store key or a log line would need to
// escape.
func keyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}
