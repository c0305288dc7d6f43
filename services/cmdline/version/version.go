// Package version is `wololo version` (and `wololo --version`): which build
// of the binary runs. It reads what the Go toolchain stamped into the
// binary (runtime/debug.ReadBuildInfo): the module's version, and the git
// commit it was built from with whether the tree had uncommitted changes
// (vcs.revision, vcs.time, vcs.modified, present when `go build` ran in a
// git checkout without -buildvcs=false; -trimpath keeps them), plus the Go
// version and platform. Plain text by default, one JSON object with
// --json.
//
// The toolchain stamps nothing in a linked git worktree (its .git is a
// file, which cmd/go does not take for a repository: golang/go#58218) or
// with -buildvcs=false, so `make build` also passes the commit with
// -ldflags -X (Commit, Modified below); the toolchain's stamp wins when
// there is one.
package version

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/wololo/wololo/services/cmdline/cli"
)

// Commit and Modified are set by the linker (`make build`: -X
// github.com/wololo/wololo/services/cmdline/version.Commit=$(git rev-parse HEAD),
// Modified=true|false) for builds the toolchain did not stamp.
var (
	Commit   string
	Modified string
)

// Info is what the binary knows of its build. Commit is "" when the build
// stamped no VCS information (a test binary, -buildvcs=false, a build
// outside a git checkout).
type Info struct {
	Module     string `json:"module"`
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
}

// FromBuildInfo reads an Info out of bi (nil: nothing known but the Go
// version and platform of this process).
func FromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Version: "unknown", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return in
	}
	goos, goarch := runtime.GOOS, runtime.GOARCH
	in.Module = bi.Main.Path
	if bi.Main.Version != "" {
		in.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		in.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Commit = s.Value
		case "vcs.time":
			in.CommitTime = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	in.Platform = goos + "/" + goarch
	return in
}

// Current is this binary's Info.
func Current() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return withLinked(FromBuildInfo(bi), Commit, Modified)
}

// withLinked fills in the commit the linker was given, when the toolchain
// stamped none.
func withLinked(in Info, commit, modified string) Info {
	if in.Commit == "" && commit != "" {
		in.Commit, in.Modified = commit, modified == "true"
	}
	return in
}

// WriteText writes in as a few lines for people.
func (in Info) WriteText(w io.Writer) error {
	commit := in.Commit
	switch {
	case commit == "":
		commit = "unknown (built without VCS information)"
	case in.Modified:
		commit += " (modified: built with uncommitted changes)"
	}
	if in.CommitTime != "" {
		commit += ", " + in.CommitTime
	}
	_, err := fmt.Fprintf(w, "wololo %s\n  module  %s\n  commit  %s\n  go      %s %s\n", in.Version, in.Module, commit, in.Go, in.Platform)
	return err
}

// WriteJSON writes in as one JSON object and a newline.
func (in Info) WriteJSON(w io.Writer) error {
	return json.NewEncoder(w).Encode(in)
}

// Run is `wololo version`.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo version", "usage: wololo version [--json]\n\nPrints the module version, the git commit the binary was built from (and\nwhether the tree had uncommitted changes), and the Go version. Also:\nwololo --version.\n", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object (module, version, commit, commit_time, modified, go, platform)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *asJSON {
		return Current().WriteJSON(stdout)
	}
	return Current().WriteText(stdout)
}
