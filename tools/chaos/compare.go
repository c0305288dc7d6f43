package chaos

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// answers are what a job's output files should hold.
type answers struct {
	names []string          // the files, in order
	files map[string][]byte // by name
	from  string            // where they come from, for messages
}

// compare checks the outputs in outDir, byte for byte, against want.
// When they differ, the expected files are written to refDir for a diff,
// and diffs describes each differing file.
func compare(want *answers, outDir, refDir string) (equal bool, diffs []string, refPath string, err error) {
	for _, name := range want.names {
		got, err := os.ReadFile(filepath.Join(outDir, name))
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		if d := diffSummary(name, got, want.files[name]); d != "" {
			diffs = append(diffs, d)
		}
	}
	if len(diffs) == 0 {
		return true, nil, "", nil
	}
	if err := os.MkdirAll(refDir, 0o755); err != nil {
		return false, diffs, "", err
	}
	for _, name := range want.names {
		if err := os.WriteFile(filepath.Join(refDir, name), want.files[name], 0o644); err != nil {
			return false, diffs, "", err
		}
	}
	diffs = append(diffs, fmt.Sprintf("%s are in %s; compare with: diff -ru %s %s", want.from, refDir, refDir, outDir))
	return false, diffs, refDir, nil
}

// expected is what a job's output files should hold, and their names in
// order. A job of the built-in graph (no queries) has q1.csv..q4.csv, the
// reference evaluator's answers. A job of SQL queries has NAME.csv for
// each query: a default one's (q1..q4 with the text of queries/NAME.sql)
// is the reference's answer too, which shares no code with the SQL
// engine; any other query's is the SQL engine's answer in this process on
// the same files and the same topology's tasks (sqlops.Answer).
func expected(matches, players string, qs []sqljob.Query, top deploy.Topology) (*answers, error) {
	var names []string
	var user []sqljob.Query
	if len(qs) == 0 {
		names = schema.ResultFiles(queries.Names)
	}
	for _, q := range qs {
		names = append(names, schema.ResultFile(q.Name))
		if !isDefault(q) {
			user = append(user, q)
		}
	}
	want := map[string][]byte{}
	if len(user) < len(qs) || len(qs) == 0 {
		ref, err := reference.EvaluateFiles(matches, players)
		if err != nil {
			return nil, fmt.Errorf("the reference: %w", err)
		}
		maps.Copy(want, ref.Files())
	}
	if len(user) > 0 {
		files, err := inProcess(matches, players, user, top)
		if err != nil {
			return nil, err
		}
		for _, q := range user {
			want[schema.ResultFile(q.Name)] = files[q.Name]
		}
	}
	return &answers{names: names, files: want, from: expectedFrom(qs)}, nil
}

// inProcess is the SQL engine's answer to the queries on the files, run in
// this process on the topology's tasks.
func inProcess(matches, players string, qs []sqljob.Query, top deploy.Topology) (map[string][]byte, error) {
	tables := map[string]*exec.Table{}
	for name, path := range map[string]string{"matches": matches, "match_players": players} {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("the SQL engine's answers: %w", err)
		}
		t, err := exec.ReadCSV(f, reference.MaxRecordBytes)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("the SQL engine's answers: read %s: %w", path, err)
		}
		tables[name] = t
	}
	shape, err := physical.ShapeOf(top)
	if err != nil {
		return nil, fmt.Errorf("the SQL engine's answers: %w", err)
	}
	files, err := sqlops.Answer(qs, tables, shape)
	if err != nil {
		return nil, fmt.Errorf("the SQL engine's answers: %w", err)
	}
	return files, nil
}

// expectedFrom says where a job's expected answers come from, for
// messages.
func expectedFrom(qs []sqljob.Query) string {
	var def, user []string
	for _, q := range qs {
		if isDefault(q) {
			def = append(def, schema.ResultFile(q.Name))
		} else {
			user = append(user, schema.ResultFile(q.Name))
		}
	}
	switch {
	case len(qs) == 0:
		return "the reference's answers"
	case len(user) == 0:
		return "the reference's answers (" + strings.Join(def, ", ") + ")"
	case len(def) == 0:
		return "the SQL engine's in-process answers (" + strings.Join(user, ", ") + ")"
	}
	return "the reference's answers (" + strings.Join(def, ", ") + ") and the SQL engine's in-process ones (" + strings.Join(user, ", ") + ")"
}

// outputsMatch is the verdict's description of the outputs when they all
// matched.
func outputsMatch(qs []sqljob.Query) string {
	if len(qs) == 0 {
		return "q1.csv..q4.csv byte-equal to the reference"
	}
	return "every output byte-equal to " + expectedFrom(qs)
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
