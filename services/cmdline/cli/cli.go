// Package cli holds what every `wololo` subcommand's flag handling shares:
// a flag set whose -h prints the command's usage text and then its flags,
// a Parse that refuses stray positional arguments, flags whose default
// comes from a WOLOLO_* environment variable, and the kinds of error that
// give main its exit status (ExitCode: a wrong command line, a job that
// failed, a request the server refused, a server that cannot be reached).
// It knows nothing of any command; each command keeps its own flags and
// text.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// The exit statuses of every wololo command (`wololo help` lists them).
const (
	ExitOK          = 0   // success, or -h
	ExitError       = 1   // any failure not below
	ExitUsage       = 2   // a wrong command line (ErrUsage)
	ExitJobFailed   = 3   // the job ran and failed (ErrJobFailed)
	ExitRefused     = 4   // the server answered and refused the request (ErrRefused)
	ExitUnreachable = 5   // the server could not be reached in time (ErrUnreachable)
	ExitStalled     = 6   // the job made no progress for the stall timeout (ErrStalled)
	ExitCancelled   = 7   // the job was cancelled: deleted by its client or the operator (ErrCancelled)
	ExitInterrupted = 130 // SIGINT or SIGTERM stopped the command
)

// Kinds of failure beyond a usage error, matched with errors.Is; Mark
// attaches one to an error without changing its message.
var (
	// ErrJobFailed: the job was accepted and ran, and ended failed.
	ErrJobFailed = errors.New("the job failed")
	// ErrRefused: the server answered and said no (an unknown job, files
	// other than the job's, a credential it does not accept, a limit).
	ErrRefused = errors.New("the server refused the request")
	// ErrUnreachable: the server did not answer within the wait (it is
	// down, the address is wrong, or its TLS handshake fails).
	ErrUnreachable = errors.New("the server could not be reached")
	// ErrStalled: the server answers, but the job made no progress for
	// the client's stall timeout (a stage down, a process stopped).
	ErrStalled = errors.New("the job made no progress")
	// ErrCancelled: the job was deleted on purpose while the command
	// followed it (`wololo client cancel`, by its client or by the
	// operator): not a failure of the job, and not to be run again.
	ErrCancelled = errors.New("the job was cancelled")
)

// marked is an error that also matches a kind.
type marked struct{ err, kind error }

func (m marked) Error() string   { return m.err.Error() }
func (m marked) Unwrap() []error { return []error{m.kind, m.err} }

// Mark returns err, which also matches kind (errors.Is) and keeps its own
// message; nil stays nil.
func Mark(err, kind error) error {
	if err == nil {
		return nil
	}
	return marked{err: err, kind: kind}
}

// ErrUsage is matched (errors.Is) by every error about the command line
// itself: an unknown flag, a bad flag value, a stray argument, a missing
// required flag. main exits with status 2 on it, 1 on any other error.
var ErrUsage = errors.New("usage error")

// usageError is a command-line error with its own message.
type usageError struct{ err error }

func (e usageError) Error() string   { return e.err.Error() }
func (e usageError) Unwrap() []error { return []error{ErrUsage, e.err} }

// NewFlagSet returns a flag set for command name (say "wololo master")
// that reports errors on stderr and whose usage is the given text, then
// "flags:" and the flags' defaults.
func NewFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage+"\nflags:\n")
		fs.PrintDefaults()
	}
	return fs
}

// Parse parses args into fs and refuses any argument left over: every
// option of a wololo command is a flag. For -h it returns flag.ErrHelp,
// after the usage was printed; every other error is an ErrUsage.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

// Usagef prints fs's usage and returns an ErrUsage with the message: for
// what Parse cannot see (a required flag left out, flags that go together).
func Usagef(fs *flag.FlagSet, format string, args ...any) error {
	fs.Usage()
	return usageError{fmt.Errorf(format, args...)}
}

// Required returns an ErrUsage naming the first flag of names left empty
// (after printing the usage), or nil when all are set.
func Required(fs *flag.FlagSet, names ...string) error {
	for _, name := range names {
		if f := fs.Lookup(name); f != nil && f.Value.String() == "" {
			return Usagef(fs, "--%s is required", name)
		}
	}
	return nil
}

// ExitCode is the process status for what a command returned: 0 for
// success or -h, 2 for a usage error, 3, 4, 5, 6 or 7 for an error marked
// ErrJobFailed, ErrRefused, ErrUnreachable, ErrStalled or ErrCancelled, 1
// for anything else. (An interrupted command is main's to see: 130.)
func ExitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.Is(err, ErrUsage):
		return ExitUsage
	case errors.Is(err, ErrJobFailed):
		return ExitJobFailed
	case errors.Is(err, ErrRefused):
		return ExitRefused
	case errors.Is(err, ErrUnreachable):
		return ExitUnreachable
	case errors.Is(err, ErrStalled):
		return ExitStalled
	case errors.Is(err, ErrCancelled):
		return ExitCancelled
	default:
		return ExitError
	}
}

// ExitCodes describes every exit status, for `wololo help`.
const ExitCodes = `exit status:
  0    success
  1    an error (none of the below)
  2    a wrong command line (unknown flag, stray argument, missing flag,
       a malformed --server, a host that does not exist, or a --server
       that is not the gateway's public port: an admin or internal port)
  3    the job ran and failed (client submit, client watch, demo --grpc, local run)
  4    the gateway refused the request (unknown job, files other than the
       job's, a credential it does not accept, a limit reached)
  5    the gateway could not be reached within --connect-timeout (a
       refused port: within a few seconds), worth retrying
  6    the job made no progress for --stall-timeout (client submit); it
       stays at the gateway, and the message says which stage is stuck
  7    the job was cancelled while the command followed it: deleted by
       its client (client cancel) or the operator (client submit, client
       watch); it is not submitted again
  130  interrupted (Ctrl-C, SIGTERM)
`

// StringEnv defines a string flag whose default is $env when that is set
// and not empty, else def; the command line wins over both. The usage
// names the variable.
func StringEnv(fs *flag.FlagSet, p *string, name, env, def, usage string) {
	if v := os.Getenv(env); v != "" {
		def = v
	}
	fs.StringVar(p, name, def, usage+" ($"+env+")")
}

// Hinted is an error that knows what the user can do next (how to resume
// or fetch a job left behind); main prints the hint also when the command
// was interrupted.
type Hinted interface {
	error
	Hint() string
}

type hinted struct {
	err  error
	hint string
}

func (h hinted) Error() string { return h.err.Error() + "; " + h.hint }
func (h hinted) Unwrap() error { return h.err }
func (h hinted) Hint() string  { return h.hint }

// WithHint attaches a hint to err (nil stays nil).
func WithHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return hinted{err: err, hint: hint}
}
