// Package cli holds what every `wololo` subcommand's flag handling shares:
// a flag set whose -h prints the command's usage text and then its flags,
// a Parse that refuses stray positional arguments, and the ErrUsage kind of
// error (a wrong command line), on which main exits with status 2. It knows
// nothing of any command; each command keeps its own flags and text.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

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
// success or -h, 2 for a usage error, 1 for anything else.
func ExitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, ErrUsage):
		return 2
	default:
		return 1
	}
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
