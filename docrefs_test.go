package main

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The docs' and comments' references to the program itself: the files
// they name (TestNamedFilesExist) and the messages they quote
// (TestQuotedMessagesArePrinted) must be the repository's own.

// checkout is the repository's tree as the tests read it: every file and
// directory below the root (slash paths), without .git and without what
// the root entries of .gitignore name (bin/, data/, out/, deploy/tls/:
// made by commands, not held by the repository).
type checkout struct {
	paths   map[string]bool // files and directories
	bases   map[string]bool // the files' base names
	list    []string        // the files and directories, for suffix lookups
	ignored []string        // .gitignore's root entries, without their slashes
}

func readCheckout(t *testing.T) *checkout {
	t.Helper()
	c := &checkout{paths: map[string]bool{}, bases: map[string]bool{}}
	for _, line := range strings.Split(readFile(t, ".gitignore"), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "/"); ok && p != "" {
			c.ignored = append(c.ignored, strings.TrimSuffix(p, "/"))
		}
	}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		p = filepath.ToSlash(p)
		if p == "." {
			return nil
		}
		if p == ".git" || c.generated(p) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		c.paths[p] = true
		c.list = append(c.list, p)
		if !d.IsDir() {
			c.bases[path.Base(p)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// generated reports whether p is below a root entry of .gitignore.
func (c *checkout) generated(p string) bool {
	for _, g := range c.ignored {
		if p == g || strings.HasPrefix(p, g+"/") {
			return true
		}
	}
	return false
}

// holds reports whether the checkout has the file or directory p, named
// in a file of directory dir: from the root, from dir, by its base name
// when it has no directory, or as the tail of a longer path (a comment's
// "sqlops/run.go", "stage/driver.go").
func (c *checkout) holds(p, dir string) bool {
	if c.paths[p] || c.paths[path.Join(dir, p)] {
		return true
	}
	if !strings.Contains(p, "/") {
		return c.bases[p]
	}
	for _, q := range c.list {
		if strings.HasSuffix(q, "/"+p) {
			return true
		}
	}
	return false
}

// textFiles are the checkout's Markdown files and Go files.
func (c *checkout) textFiles(ext string) []string {
	var out []string
	for _, p := range c.list {
		if strings.HasSuffix(p, ext) && !c.isDir(p) {
			out = append(out, p)
		}
	}
	return out
}

func (c *checkout) isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// text is a stretch of prose: a Markdown file or a Go comment, with the
// line it starts on.
type text struct {
	file string
	line int
	body string
}

// prose is every Markdown file and every Go comment of the checkout.
func (c *checkout) prose(t *testing.T) []text {
	t.Helper()
	var out []text
	for _, f := range c.textFiles(".md") {
		out = append(out, text{f, 1, readFile(t, f)})
	}
	for _, f := range c.textFiles(".go") {
		src := readFile(t, f)
		fset := token.NewFileSet()
		var s scanner.Scanner
		s.Init(fset.AddFile(f, -1, len(src)), []byte(src), nil, scanner.ScanComments)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok == token.COMMENT {
				out = append(out, text{f, fset.Position(pos).Line, lit})
			}
		}
	}
	return out
}

// pathToken is a run of the characters a path is made of; pathTrim what
// ends a sentence around one.
var (
	pathToken = regexp.MustCompile(`[\w./:@$*~+-]+`)
	pathTrim  = ".,:;"
)

// fileExts are the extensions of the files a text names; a bare name (no
// directory) is taken for one of the repository's files only with one of
// bareExts (not "bad.sql" or "my.yaml", a reader's own file).
var (
	fileExts = []string{".go", ".md", ".proto", ".sql", ".sh", ".yaml", ".yml", ".json", ".html"}
	bareExts = []string{".go", ".md", ".proto"}
)

// placeholders are the words that stand for a name in a path
// (queries/NAME.sql, --out DIR/q1.csv): such a path names no one file.
var placeholders = []string{"FILE", "NAME", "DIR", "F", "ID", "PATH", "N", "X"}

// notRepoPaths are paths a text names that are not the repository's, and
// why.
var notRepoPaths = map[string]string{
	"internal/runtime/syscall/linux.Syscall6": "Go's own runtime, in a CPU profile",
}

// namedPaths are the repository paths a text names: a path with one of
// fileExts (with a directory, or bare with one of bareExts), or one that
// starts with a top directory of the checkout (a directory, or a
// package's identifier: services/wire/rpc.Pool).
func namedPaths(body string, tops []string) []named {
	var out []named
	for _, at := range pathToken.FindAllStringIndex(body, -1) {
		tok := strings.TrimRight(body[at[0]:at[1]], pathTrim)
		tok = strings.TrimPrefix(tok, "./")
		if tok == "" || strings.ContainsAny(tok, ":@$*~+") || strings.HasPrefix(tok, "/") || strings.Contains(tok, "...") {
			continue // a URL, an address, a variable, a pattern, an absolute path
		}
		parts := strings.Split(strings.TrimSuffix(tok, "/"), "/")
		if slices.ContainsFunc(parts, func(p string) bool {
			stem, _, _ := strings.Cut(p, ".")
			return slices.Contains(placeholders, stem)
		}) {
			continue
		}
		ext := path.Ext(tok)
		switch {
		case slices.Contains(fileExts, ext) && strings.Contains(tok, "/"):
		case slices.Contains(bareExts, ext) && !strings.Contains(tok, "/") && len(tok) > len(ext):
		case len(parts) > 1 && slices.Contains(tops, parts[0]):
		default:
			continue
		}
		out = append(out, named{tok, at[0]})
	}
	return out
}

// named is a path a text names, and where in the text.
type named struct {
	path   string
	offset int
}

// TestNamedFilesExist: a file or directory of the repository that a doc
// (any *.md) or a Go comment names exists (issue 39: nine comments
// pointed to two Markdown files of the root that the repository never
// held). What commands make (.gitignore's root entries: deploy/tls, data/)
// is not the repository's and is not checked; a path with a placeholder
// (queries/NAME.sql) names no one file.
func TestNamedFilesExist(t *testing.T) {
	c := readCheckout(t)
	var tops []string
	for _, p := range c.list {
		if !strings.Contains(p, "/") && c.isDir(p) {
			tops = append(tops, p)
		}
	}
	var missing []string
	checked := 0
	for _, tx := range c.prose(t) {
		dir := path.Dir(tx.file)
		for _, n := range namedPaths(tx.body, tops) {
			checked++
			clean := strings.TrimSuffix(n.path, "/")
			if _, ok := notRepoPaths[clean]; ok || c.generated(path.Clean(clean)) || c.holds(clean, dir) {
				continue
			}
			if i := strings.LastIndex(clean, "/"); i > 0 { // a package's identifier: services/wire/rpc.Pool
				if pkg, _, ok := strings.Cut(clean[i+1:], "."); ok && c.isDir(clean[:i+1]+pkg) {
					continue
				}
			}
			line := tx.line + strings.Count(tx.body[:n.offset], "\n")
			missing = append(missing, tx.file+":"+strconv.Itoa(line)+": "+n.path)
		}
	}
	if checked < 200 {
		t.Fatalf("%d paths named in the docs and comments; the extraction is broken", checked)
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		missing = slices.Compact(missing)
		t.Errorf("%d names of files or directories the repository does not hold (where named: the path); name the file that holds it now, or drop the reference:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}

// docQuote is a double-quoted stretch of a doc's prose (outside its
// fenced blocks) of at most five lines: where the docs quote what the
// program prints.
var docQuote = regexp.MustCompile(`"([^"\n]*(?:\n[^"\n]*){0,4})"`)

// quoteHoles are what a quoted message writes for what varies, and
// where its parts join: an ellipsis, a placeholder word (NAME, N), a
// number, a code span, and ": " and "; " (where an error wraps another:
// "%s: %w"). Each fragment between them is printed as it stands.
var quoteHoles = regexp.MustCompile(`\.\.\.|…|\b[A-Z][A-Z_]*\b|[0-9]+|` + "`[^`]*`" + `|: |; `)

// notMessages are quoted words of the docs that are not the program's,
// and why.
var notMessages = map[string]string{
	"Age of Empires II DE match data": "the dataset's title",
	"a qualifying token counts once":  "a rule of the queries, quoted",
	"A channel is a stream":           "a section's title",
	"told to shut down":               "Docker Swarm's words for a task",
	"nobody is revoked":               "what a forged list would read as",
}

// docQuotes are the quotes of at least three words in the prose of
// README.md and docs/*.md, with where each is.
func docQuotes(t *testing.T) (quotes, where []string) {
	t.Helper()
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range append([]string{"README.md"}, docs...) {
		lines := strings.Split(readFile(t, file), "\n")
		inFence := false
		for i, l := range lines { // blank the fenced blocks: commands and outputs, not prose
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inFence = !inFence
				lines[i] = ""
			} else if inFence {
				lines[i] = ""
			}
		}
		prose := strings.Join(lines, "\n")
		for _, m := range docQuote.FindAllStringSubmatchIndex(prose, -1) {
			q := strings.Join(strings.Fields(prose[m[2]:m[3]]), " ")
			if len(strings.Fields(q)) < 3 {
				continue
			}
			quotes = append(quotes, q)
			where = append(where, file+":"+strconv.Itoa(1+strings.Count(prose[:m[0]], "\n")))
		}
	}
	return quotes, where
}

// formatVerb is a verb of a format string: what it prints varies.
var formatVerb = regexp.MustCompile(`%[-+# 0-9.*]*[a-zA-Z%]`)

// programTexts are the pieces of the program's string literals (of its
// non-test Go files) between their format verbs, what it can print as it
// stands, and the operating system's error texts (syscall.Errno), which
// it prints as they come ("no space left on device").
type programTexts struct {
	pieces []string        // every piece
	whole  map[string]bool // the same, to look one up
}

func readProgramTexts(t *testing.T, c *checkout) *programTexts {
	t.Helper()
	p := &programTexts{whole: map[string]bool{}}
	add := func(pieces ...string) {
		for _, piece := range pieces {
			p.pieces = append(p.pieces, piece)
			p.whole[piece] = true
		}
	}
	for _, f := range c.textFiles(".go") {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src := readFile(t, f)
		fset := token.NewFileSet()
		var s scanner.Scanner
		s.Init(fset.AddFile(f, -1, len(src)), []byte(src), nil, 0)
		for {
			_, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if v, err := strconv.Unquote(lit); tok == token.STRING && err == nil {
				add(formatVerb.Split(v, -1)...)
			}
		}
	}
	for e := syscall.Errno(1); e < 256; e++ {
		if text := e.Error(); !strings.HasPrefix(text, "errno ") {
			add(text)
		}
	}
	return p
}

// prints reports whether the program prints fragment as it stands: in one
// piece, or across the values of format verbs ("job %q was %s" and
// "cancelled by its client" print "was cancelled by its client"): the
// end of a piece, then whole pieces, then the start of a piece.
func (p *programTexts) prints(fragment string) bool {
	if slices.ContainsFunc(p.pieces, func(s string) bool { return strings.Contains(s, fragment) }) {
		return true
	}
	// from[i]: fragment[:i] is printed, ending where a piece ends.
	from := make([]bool, len(fragment)+1)
	for i := 1; i < len(fragment); i++ {
		head := fragment[:i]
		from[i] = slices.ContainsFunc(p.pieces, func(s string) bool { return strings.HasSuffix(s, head) })
	}
	for i := 1; i < len(fragment); i++ {
		if !from[i] {
			continue
		}
		tail := fragment[i:]
		if slices.ContainsFunc(p.pieces, func(s string) bool { return strings.HasPrefix(s, tail) }) {
			return true
		}
		for j := i + 1; j < len(fragment); j++ { // a whole piece between two others
			if p.whole[fragment[i:j]] {
				from[j] = true
			}
		}
	}
	return false
}

// TestQuotedMessagesArePrinted: every message README.md and docs/*.md
// quote ("port 7100 ... is in use") is one the program prints: each of
// its fragments between the holes (quoteHoles: what varies, and where
// wrapped errors join) stands in one of the program's string literals,
// between its format verbs. The README quoted a refusal in words the
// program does not print ("data directory ... is locked by pid N").
// Quotes that are not the program's are listed in notMessages.
func TestQuotedMessagesArePrinted(t *testing.T) {
	texts := readProgramTexts(t, readCheckout(t))
	quotes, where := docQuotes(t)
	if len(quotes) < 10 {
		t.Fatalf("%d quotes in README.md and docs/*.md; the extraction is broken", len(quotes))
	}
	used := map[string]bool{}
	for i, q := range quotes {
		if _, ok := notMessages[q]; ok {
			used[q] = true
			continue
		}
		var missing []string
		for _, f := range quoteHoles.Split(q, -1) {
			f = strings.TrimSpace(f)
			if strings.ContainsFunc(f, func(r rune) bool { return r >= 'a' && r <= 'z' }) && !texts.prints(f) {
				missing = append(missing, strconv.Quote(f))
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s: the quote %q: the program prints no %s (quote its words; write ... or an UPPERCASE word for what varies; or list the quote in notMessages if it is not the program's)", where[i], q, strings.Join(missing, ", "))
		}
	}
	for q := range notMessages {
		if !used[q] {
			t.Errorf("notMessages lists %q, which the docs no longer quote: remove it", q)
		}
	}
}
