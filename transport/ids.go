package transport

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on what a peer may claim, checked before any state is created for
// the claim (the bounds on incarnations are in incarnation.go).
const (
	// MaxJobLen is the longest job name a frame may carry.
	MaxJobLen = 64
	// MaxNameLen is the longest stream or instance name a frame may carry.
	MaxNameLen = 128
	// MaxReasonLen is the longest reason a FailJob may give; a longer one
	// is cut (CleanReason).
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

// CleanReason is a job's failure reason as a client may be shown it: one
// line of printable text of at most MaxReasonLen bytes. Every rune that is
// not printable (unicode.IsPrint: the C0 and C1 controls, ESC of a
// terminal's escape sequences, \r, \n and \t among them, DEL, format
// characters such as the bidirectional overrides, line and paragraph
// separators) becomes a space, a byte that is not UTF-8 becomes U+FFFD,
// and the text is cut at the last whole rune that fits. A reason comes
// from a process's error text, which may quote what a peer or a job's
// input said: cleaned, it cannot move a client's cursor, recolour its
// terminal or fake a line of its own. FailJob cleans what a reporter says
// before anything else reads it, and the gateway cleans every failure it
// records or shows (services/roles/gateway).
func CleanReason(reason string) string {
	var b strings.Builder
	for len(reason) > 0 {
		r, n := utf8.DecodeRuneInString(reason)
		reason = reason[n:]
		if r != ' ' && !unicode.IsPrint(r) { // an invalid byte is RuneError, printable
			r = ' '
		}
		if b.Len()+utf8.RuneLen(r) > MaxReasonLen {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}
