// Package cli holds the two pieces every `wololo` subcommand's flag
// handling shares: a flag set whose -h prints the command's usage text and
// then its flags, and a Parse that refuses stray positional arguments. It
// knows nothing of any command; each command keeps its own flags and text.
package cli

import (
	"flag"
	"fmt"
	"io"
)

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
// after the usage was printed.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
