// Package docblocks reads the commands, links and headings out of the
// project's Markdown (README.md, docs/*.md), so that tests can run the
// commands as written and check the links: the README and the docs then
// cannot drift from what the binary and the Makefile do.
//
// It is pure text processing, no I/O: the tests read the files and run
// the commands. Two kinds of blocks hold commands. A ```sh block is a
// script: one command a line (a trailing \ continues it), comments after
// #. A ```console block is a session: a command after "$ ", the lines up
// to the next one its output, which Check compares loosely (an error's
// gRPC code, a list line by line, a JSON object's role and instance),
// since ids, times and pids differ from run to run.
package docblocks

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Command is one command of a ```sh block.
type Command struct {
	Line    int    // 1-based, where it starts
	Text    string // continuation lines joined, the comment dropped
	Comment string // the comment after it, without the #
}

// Shell returns the commands of the ```sh blocks, one slice per block
// (an empty block is an empty slice).
func Shell(markdown string) [][]Command {
	var (
		blocks   [][]Command
		in, cont bool
	)
	for i, line := range strings.Split(markdown, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```sh":
			in = true
			blocks = append(blocks, []Command{})
		case in && strings.HasPrefix(trimmed, "```"):
			in, cont = false, false
		case !in:
		case cont:
			b := blocks[len(blocks)-1]
			text, _ := splitComment(line)
			cont = strings.HasSuffix(text, "\\")
			b[len(b)-1].Text += " " + strings.TrimSpace(strings.TrimSuffix(text, "\\"))
		default:
			text, comment := splitComment(line)
			if text == "" {
				continue
			}
			cont = strings.HasSuffix(text, "\\")
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], Command{Line: i + 1, Text: strings.TrimSpace(strings.TrimSuffix(text, "\\")), Comment: comment})
		}
	}
	return blocks
}

// splitComment splits a shell line at a # that starts a comment (at the
// start or after a blank, outside quotes).
func splitComment(line string) (text, comment string) {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:])
		}
	}
	return strings.TrimSpace(line), ""
}

// Fences returns the language of every fenced block (``` or ~~~), with
// the line it opens on: "" for a block without one.
func Fences(markdown string) (langs []string, lines []int) {
	fence := ""
	for i, line := range strings.Split(markdown, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
			langs, lines = append(langs, strings.TrimSpace(trimmed[3:])), append(lines, i+1)
		case fence != "" && strings.HasPrefix(trimmed, fence):
			fence = ""
		}
	}
	return langs, lines
}

// Session is one command of a ```console block and the output shown under
// it.
type Session struct {
	Line    int
	Command string // after "$ ", continuation lines joined
	Output  string
}

// Console returns the commands of the ```console blocks.
func Console(markdown string) []Session {
	var (
		out      []Session
		in, cont bool
	)
	for i, line := range strings.Split(markdown, "\n") {
		switch {
		case !in && strings.HasPrefix(strings.TrimSpace(line), "```console"):
			in = true
		case in && strings.HasPrefix(strings.TrimSpace(line), "```"):
			in, cont = false, false
		case !in:
		case cont:
			c := &out[len(out)-1]
			c.Command += " " + strings.TrimSpace(strings.TrimSuffix(line, "\\"))
			cont = strings.HasSuffix(line, "\\")
		case strings.HasPrefix(line, "$ "):
			out = append(out, Session{Line: i + 1, Command: strings.TrimSpace(strings.TrimSuffix(line[2:], "\\"))})
			cont = strings.HasSuffix(line, "\\")
		case len(out) > 0:
			out[len(out)-1].Output += line + "\n"
		}
	}
	return out
}

// IsAssignment reports whether a command only sets a shell variable
// (TLS="..."), which later commands of its session use.
func IsAssignment(command string) bool {
	return assignment.MatchString(command)
}

var (
	assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	grpcCode   = regexp.MustCompile(`Code: (\w+)`)
	shownField = regexp.MustCompile(`"(role|instance)": "([^"]*)"`)
)

// Check compares what a command printed (with its error: nil for exit 0)
// with the output the docs show: shown "ERROR:" wants a failure naming
// the same gRPC code; shown JSON wants a JSON object with the same "role"
// and "instance"; any other shown output wants the same lines (trimmed);
// none shown wants success.
func Check(shown string, got []byte, runErr error) error {
	shown = strings.TrimSpace(shown)
	switch {
	case strings.HasPrefix(shown, "ERROR:"):
		m := grpcCode.FindStringSubmatch(shown)
		if m == nil {
			return fmt.Errorf("the docs show an error without a code")
		}
		if runErr == nil || !strings.Contains(string(got), m[0]) {
			return fmt.Errorf("exit %v, want a failure with %q:\n%s", runErr, m[0], got)
		}
		return nil
	case runErr != nil:
		return fmt.Errorf("%v:\n%s", runErr, got)
	case shown == "":
		return nil
	case strings.HasPrefix(shown, "{"):
		var obj map[string]any
		if err := json.Unmarshal(got, &obj); err != nil {
			return fmt.Errorf("not a JSON object: %v:\n%s", err, got)
		}
		for _, m := range shownField.FindAllStringSubmatch(shown, 2) {
			if obj[m[1]] != m[2] {
				return fmt.Errorf("%s is %v, the docs show %q", m[1], obj[m[1]], m[2])
			}
		}
		return nil
	}
	if g := strings.TrimSpace(string(got)); g != shown {
		return fmt.Errorf("printed\n%s\nthe docs show\n%s", g, shown)
	}
	return nil
}

// Link is a link of the prose (not of code blocks or code spans).
type Link struct {
	Line   int
	Target string
}

var (
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	link     = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// Links returns the links of the prose outside code blocks and code spans.
func Links(markdown string) []Link {
	var out []Link
	fence := ""
	for i, line := range strings.Split(markdown, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		default:
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				out = append(out, Link{Line: i + 1, Target: m[1]})
			}
		}
	}
	return out
}

// IsRelative reports whether a link target points into the repository
// (not a URL with a scheme, nor mailto:).
func IsRelative(target string) bool {
	return !strings.Contains(target, "://") && !strings.HasPrefix(target, "mailto:")
}

// HeadingIDs are the ids GitHub gives the headings: the heading's text
// (links and code spans as their text), lower-cased, every character but
// letters, digits, blanks, - and _ dropped, blanks made -, and a repeated
// id suffixed -1, -2, ...
func HeadingIDs(markdown string) []string {
	seen := map[string]int{}
	var ids []string
	fence := ""
	for _, line := range strings.Split(markdown, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
			continue
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		hashes := len(line) - len(strings.TrimLeft(line, "#"))
		if hashes == 0 || hashes > 6 || len(line) == hashes || line[hashes] != ' ' {
			continue
		}
		text := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(line[hashes:]), "#"))
		text = linkText.ReplaceAllString(text, "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		id := b.String()
		if n := seen[id]; n > 0 {
			seen[id]++
			id = fmt.Sprintf("%s-%d", id, n)
		} else {
			seen[id] = 1
		}
		ids = append(ids, id)
	}
	return ids
}
