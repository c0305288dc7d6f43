package master

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/wololo/wololo/election"
	"github.com/wololo/wololo/election/driver"
	"github.com/wololo/wololo/services/base/atomicfile"
)

// TermFile is the name of the term file in a master's data directory.
const TermFile = "term"

// termFile is a master's durable driver.TermStore: the file DATA/term,
// holding the term in decimal and a newline, replaced atomically and
// fsynced on every Save.
type termFile string

var _ driver.TermStore = termFile("")

// Load implements driver.TermStore; a missing file is term 0.
func (f termFile) Load() (election.Term, error) { return ReadTerm(string(f)) }

// Save implements driver.TermStore.
func (f termFile) Save(t election.Term) error {
	// A crash leaves the old term or the new one, never a torn one.
	return atomicfile.Write(string(f), []byte(strconv.FormatUint(uint64(t), 10)+"\n"), 0o600)
}

// ReadTerm reads a term file; a missing file (or an empty path) is term 0.
func ReadTerm(path string) (election.Term, error) {
	if path == "" {
		return 0, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read term: %w", err)
	}
	t, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("term file %s: %q is not a term", path, strings.TrimSpace(string(b)))
	}
	return election.Term(t), nil
}
