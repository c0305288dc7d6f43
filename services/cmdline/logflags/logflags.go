// Package logflags gives every long-running wololo command the same two
// log flags, --log-level and --log-json, and the hclog logger they
// describe. With --log-json every line is one JSON object (hclog's: @level,
// @message, @module, @timestamp, then the line's keys, among them job,
// stage and instance wherever a line concerns one), for a log shipper.
//
// It parses two flags and builds a logger; what is logged is every
// package's own business.
package logflags

import (
	"flag"
	"io"

	"github.com/hashicorp/go-hclog"
)

// Flags are the log flags of one command.
type Flags struct {
	Level string
	JSON  bool
}

// Register adds --log-level (default level) and --log-json to fs.
func Register(fs *flag.FlagSet, level string) *Flags {
	f := &Flags{}
	fs.StringVar(&f.Level, "log-level", level, "log level: trace, debug, info, warn, error")
	fs.BoolVar(&f.JSON, "log-json", false, "log one JSON object per line (@level, @message, @module, @timestamp and the line's keys)")
	return f
}

// Logger is a logger named name writing to out as the flags say.
func (f *Flags) Logger(name string, out io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: hclog.LevelFromString(f.Level), Output: out, JSONFormat: f.JSON})
}

// Args are the flags again, for a child process that takes them too.
func (f *Flags) Args() []string {
	args := []string{"--log-level", f.Level}
	if f.JSON {
		args = append(args, "--log-json")
	}
	return args
}
