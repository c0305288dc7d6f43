package chaos

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wololo/wololo/services/dataflow/reference"
)

// resultFiles are the four outputs, in order.
var resultFiles = []string{"q1.csv", "q2.csv", "q3.csv", "q4.csv"}

// compare answers the files with the reference evaluator and compares the
// four outputs in outDir with it, byte for byte. When they differ, the
// reference's files are written to refDir for a diff, and diffs describes
// each differing file.
func compare(matches, players, outDir, refDir string) (equal bool, diffs []string, refPath string, err error) {
	want, err := reference.EvaluateFiles(matches, players)
	if err != nil {
		return false, nil, "", err
	}
	wantFiles := map[string][]byte{"q1.csv": want.Q1, "q2.csv": want.Q2, "q3.csv": want.Q3, "q4.csv": want.Q4}
	for _, name := range resultFiles {
		got, err := os.ReadFile(filepath.Join(outDir, name))
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		if d := diffSummary(name, got, wantFiles[name]); d != "" {
			diffs = append(diffs, d)
		}
	}
	if len(diffs) == 0 {
		return true, nil, "", nil
	}
	if err := reference.WriteDir(want, refDir); err != nil {
		return false, diffs, "", err
	}
	diffs = append(diffs, fmt.Sprintf("the reference's answers are in %s; compare with: diff -ru %s %s", refDir, refDir, outDir))
	return false, diffs, refDir, nil
}

// diffSummary describes how got differs from want in one line ("" if
// equal): sizes, the first differing line, and how many lines only one
// side has.
func diffSummary(name string, got, want []byte) string {
	if bytes.Equal(got, want) {
		return ""
	}
	gl, wl := lines(got), lines(want)
	first := -1
	for i := 0; i < max(len(gl), len(wl)); i++ {
		if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
			first = i
			break
		}
	}
	count := map[string]int{}
	for _, l := range wl {
		count[l]++
	}
	extra := 0
	for _, l := range gl {
		if count[l] > 0 {
			count[l]--
		} else {
			extra++
		}
	}
	missing := 0
	for _, n := range count {
		missing += n
	}
	at := func(ls []string, i int) string {
		if i < len(ls) {
			return fmt.Sprintf("%.120q", ls[i])
		}
		return "(end of file)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: got %d lines (%d bytes), want %d lines (%d bytes)", name, len(gl), len(got), len(wl), len(want))
	if first >= 0 {
		fmt.Fprintf(&b, "; first difference at line %d: got %s, want %s", first+1, at(gl, first), at(wl, first))
	}
	fmt.Fprintf(&b, "; %d lines only in the output (extra or changed), %d only in the reference (missing or changed)", extra, missing)
	if extra == 0 && missing == 0 {
		b.WriteString(" — same lines, different order or line ends")
	}
	return b.String()
}

func lines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
