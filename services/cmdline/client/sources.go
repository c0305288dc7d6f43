package client

import (
	"errors"
	"flag"
	"fmt"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/inputfile"
	"github.com/wololo/wololo/services/dataflow/ingest"
)

// sources are the inputs of one submit or append, each opened once
// (inputfile.Open: a gzip-compressed file sized by one counting pass,
// standard input spooled to a temporary file) and read from there by
// every upload of the command, resumes and rebuilds included; by path.
type sources map[string]*inputfile.File

// inputPaths are the files o names: the two files (none for a job of
// tables only) and its tables'.
func inputPaths(o SubmitOptions) []string {
	var paths []string
	if o.Matches != "" || o.Players != "" {
		paths = append(paths, o.Matches, o.Players)
	}
	for _, t := range o.Tables {
		paths = append(paths, t.Path)
	}
	return paths
}

// CheckPair refuses, as a usage error of fs, one of --matches and
// --players without the other: a job has both files, or neither (a job
// of --table files only).
func CheckPair(fs *flag.FlagSet, matches, players string) error {
	switch {
	case matches != "" && players == "":
		return cli.Usagef(fs, "--players is required with --matches (give neither for a job of --table files only)")
	case matches == "" && players != "":
		return cli.Usagef(fs, "--matches is required with --players (give neither for a job of --table files only)")
	}
	return nil
}

// CheckInputs refuses, as usage errors, inputs no job has: one of the two
// files without the other, standard input ("-") for more than one input.
func CheckInputs(o SubmitOptions) error {
	if (o.Matches == "") != (o.Players == "") {
		return cli.Mark(errors.New("give both --matches and --players, or neither for a job of --table files only"), cli.ErrUsage)
	}
	stdins := 0
	for _, p := range inputPaths(o) {
		if p == inputfile.Stdin {
			stdins++
		}
	}
	if stdins > 1 {
		return cli.Mark(fmt.Errorf("standard input (-) given for %d inputs: it can be one of them at most", stdins), cli.ErrUsage)
	}
	return nil
}

// openSources opens o's inputs (CheckInputs first); Close them.
func openSources(o SubmitOptions) (sources, error) {
	if err := CheckInputs(o); err != nil {
		return nil, err
	}
	s := sources{}
	for _, p := range inputPaths(o) {
		if s[p] != nil {
			continue
		}
		f, err := inputfile.Open(p, o.Stdin, "")
		if err != nil {
			s.Close()
			return nil, err
		}
		s[p] = f
	}
	return s, nil
}

// Close closes every source (removing standard input's spool).
func (s sources) Close() {
	for _, f := range s {
		f.Close()
	}
}

// header reads the header row of the input at path (ingest.ReadHeader:
// no column required; the gateway's checks, sqljob.Check, find those the
// queries read) and its size and fingerprint, for the job to remember;
// nil for no path (a file of a job of tables only).
func (s sources) header(path string) (*wololov1.FileHeader, error) {
	if path == "" {
		return nil, nil
	}
	src := s[path]
	c, err := src.Content()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	hd, err := ingest.ReadHeader(c, src.Name())
	if err != nil {
		return nil, err
	}
	return &wololov1.FileHeader{Columns: hd.Columns, DataOffset: hd.DataOffset, Size: src.Size(), Fingerprint: src.Fingerprint()}, nil
}

// headers are the headers of o's inputs as CreateJob and AppendJob take
// them: the two files' (nil for none) and each table's, an error naming
// the input that cannot be read.
func (s sources) headers(o SubmitOptions) (matches, players *wololov1.FileHeader, tables []*wololov1.Table, err error) {
	if matches, err = s.header(o.Matches); err != nil {
		return nil, nil, nil, fmt.Errorf("the matches file: %w", err)
	}
	if players, err = s.header(o.Players); err != nil {
		return nil, nil, nil, fmt.Errorf("the players file: %w", err)
	}
	for _, t := range o.Tables {
		h, err := s.header(t.Path)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("table %s: %w", t.Name, err)
		}
		tables = append(tables, &wololov1.Table{Name: t.Name, Header: h})
	}
	return matches, players, tables, nil
}
