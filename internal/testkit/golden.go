package testkit

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update is the -update flag of every test binary that uses testkit: the
// golden files are rewritten with what the tests got instead of compared.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with what the tests got, instead of comparing with them")

// Golden compares got with the golden file testdata/<name> of the
// package under test, and fails t with a line diff when they differ (or
// the file is missing). Run with -update, it writes got to the file
// instead, creating testdata/ if need be: review the change with git diff.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	golden(t, filepath.Join("testdata", name), got, *update)
}

func golden(t testing.TB, path string, got []byte, rewrite bool) {
	t.Helper()
	if rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("golden file: %v", err)
			return
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden file: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Errorf("golden file %s does not exist: run the test with -update to write it from what the test got:\n%s", path, got)
		return
	}
	if err != nil {
		t.Fatalf("golden file: %v", err)
		return
	}
	if !bytes.Equal(want, got) {
		t.Errorf("the output differs from the golden file %s (-want +got; if the change is meant, rerun with -update and review git diff):\n%s", path, Diff(string(want), string(got)))
	}
}

// Command is one line of a script: a command and its arguments.
type Command struct {
	Line int      // in the script, from 1
	Text string   // the line without its comment, trimmed
	Args []string // the fields of Text: Args[0] is the command
	// Notes are the comment lines above the command (since the one
	// before), without "#": what the script says the command is for,
	// repeated in the record. An empty note stands for a blank line
	// between two of them.
	Notes []string
}

// ParseScript reads a script: one command a line, "#" starting a comment
// (a whole line, or the end of one), blank lines ignored but between
// comments.
func ParseScript(r io.Reader) ([]Command, error) {
	var cmds []Command
	var notes []string
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "#"); ok {
			notes = append(notes, strings.TrimSpace(rest))
			continue
		}
		text, _, _ := strings.Cut(line, "#")
		text = strings.TrimSpace(text)
		if text == "" {
			if len(notes) > 0 && notes[len(notes)-1] != "" {
				notes = append(notes, "") // a paragraph break
			}
			continue
		}
		if len(notes) > 0 && notes[len(notes)-1] == "" {
			notes = notes[:len(notes)-1]
		}
		cmds = append(cmds, Command{Line: n, Text: text, Args: strings.Fields(text), Notes: notes})
		notes = nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return cmds, nil
}

// GoldenScript runs the script testdata/<script> one command at a time
// through do, which writes to w what the code under test decided, and
// compares the whole record with the golden file testdata/<golden> (see
// Golden). The record repeats each command's notes ("# ...") and the
// command ("> ...") above what do wrote, so that it reads on its own. An
// error from do fails the test with the script's line.
func GoldenScript(t testing.TB, script, golden string, do func(w io.Writer, c Command) error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", script))
	if err != nil {
		t.Fatalf("script: %v", err)
		return
	}
	defer f.Close()
	cmds, err := ParseScript(f)
	if err != nil {
		t.Fatalf("script %s: %v", script, err)
		return
	}
	var rec bytes.Buffer
	for i, c := range cmds {
		if len(c.Notes) > 0 && i > 0 {
			rec.WriteString("\n")
		}
		for _, note := range c.Notes {
			if note == "" {
				rec.WriteString("\n")
				continue
			}
			fmt.Fprintf(&rec, "# %s\n", note)
		}
		fmt.Fprintf(&rec, "> %s\n", c.Text)
		if err := do(&rec, c); err != nil {
			t.Fatalf("%s:%d: %s: %v", script, c.Line, c.Text, err)
			return
		}
	}
	Golden(t, golden, rec.Bytes())
}

// maxDiffCells bounds the table Diff fills (lines of a times lines of b);
// beyond it Diff shows the first differing line only.
const maxDiffCells = 1 << 22

// diffContext is how many equal lines Diff shows around a change.
const diffContext = 2

// Diff shows how b differs from a, line by line: each line of a that b
// drops marked "-", each it adds "+", and diffContext equal lines around
// every change, the runs between them elided. It is "" when they are
// equal.
func Diff(a, b string) string {
	if a == b {
		return ""
	}
	x, y := lines(a), lines(b)
	if len(x)*len(y) > maxDiffCells {
		i := 0
		for i < len(x) && i < len(y) && x[i] == y[i] {
			i++
		}
		return fmt.Sprintf("too long to diff (%d and %d lines); the first difference is at line %d:\n-%s+%s", len(x), len(y), i+1, at(x, i), at(y, i))
	}
	// lcs[i][j] is the length of a longest common subsequence of x[i:]
	// and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		mark byte // ' ', '-' or '+'
		line string
	}
	var ops []op
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			ops = append(ops, op{' ', x[i]})
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', x[i]}) // a's lines first
			i++
		default:
			ops = append(ops, op{'+', y[j]})
			j++
		}
	}
	// Keep the changes and the equal lines near one.
	near := make([]bool, len(ops))
	for k, o := range ops {
		if o.mark != ' ' {
			for d := max(0, k-diffContext); d <= min(len(ops)-1, k+diffContext); d++ {
				near[d] = true
			}
		}
	}
	var out strings.Builder
	line := 0 // of a
	for k := 0; k < len(ops); k++ {
		if !near[k] {
			skipped := 0
			for ; k < len(ops) && !near[k]; k++ {
				skipped++
				line++
			}
			fmt.Fprintf(&out, "  ... %d equal lines (up to line %d)\n", skipped, line)
			k--
			continue
		}
		o := ops[k]
		if o.mark != '+' {
			line++
		}
		out.WriteByte(o.mark)
		out.WriteString(o.line)
		if !strings.HasSuffix(o.line, "\n") {
			out.WriteString("\n\\ no newline at the end\n")
		}
	}
	return out.String()
}

// lines splits s after each newline; a last line without one is kept.
func lines(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// at is line i of lines, or a note that there is none.
func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(no line)\n"
}
