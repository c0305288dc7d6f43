package sqlops_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// adapterOnly are the stage runtime's names for a job and its outputs,
// which only the stage adapter may use.
var adapterOnly = []string{"stage.Emitter", "stage.JobSpec", "stage.Edge", "stage.Wiring", "stage.Operator", "stage.Interrupter", "stage.Spender"}

// concerns are the package's files by concern, lowest first: a file may
// use what the files of its own concern and of the concerns it may rely
// on declare, nothing else (the package doc says why they are files of
// one package and not packages of their own).
var concerns = []struct {
	name   string
	files  []string
	mayUse []string // the other concerns it may use
}{
	{"the operators and their snapshots", []string{"ops.go", "join.go", "reads.go", "spilling.go", "aggspill.go", "aggfinish.go", "exchange.go", "snapshot.go", "budget.go", "pool.go", "setop.go", "window.go"}, nil},
	{"the task", []string{"task.go", "tasksnap.go"}, []string{"the operators and their snapshots"}},
	{"the epoch task", []string{"epoch.go", "epochbuild.go", "epochfold.go", "epochsnap.go", "epochwire.go"}, []string{"the operators and their snapshots"}},
	{"the in-process runners", []string{"run.go", "answer.go", "runepochs.go"}, []string{"the operators and their snapshots", "the task", "the epoch task"}},
	{"the stage adapter", []string{"stage.go", "streams.go", "source.go", "epochstage.go"}, []string{"the operators and their snapshots", "the task", "the epoch task"}},
	{"the package doc", []string{"doc.go"}, nil},
}

// TestConcernsKeepApart: every file of the package is in one concern, and
// uses nothing another concern declares unless its concern may use that
// one: the operators nothing of the task, the runners or the stage
// adapter; the task nothing of the runners or the adapter; the runners
// and the adapter nothing of each other.
func TestConcernsKeepApart(t *testing.T) {
	concernOf := map[string]int{}
	for c, con := range concerns {
		for _, f := range con.files {
			concernOf[f] = c
		}
	}
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	declaredIn := map[string]string{} // a package-level name: its file
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if _, ok := concernOf[name]; !ok {
			t.Errorf("%s is in no concern: add it to concerns, and say what it is for in the package doc", name)
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
		for _, d := range f.Decls {
			for _, id := range declared(d) {
				declaredIn[id] = name
			}
		}
	}
	for name, f := range files {
		con := concerns[concernOf[name]]
		if con.name != "the stage adapter" {
			for _, used := range stageNamesUsed(f) {
				if slices.Contains(adapterOnly, used) {
					t.Errorf("%s (%s) uses %s, which only the stage adapter may", name, con.name, used)
				}
			}
		}
		for _, used := range packageNamesUsed(f, declaredIn) {
			from := declaredIn[used]
			other := concerns[concernOf[from]].name
			if other != con.name && !slices.Contains(con.mayUse, other) {
				t.Errorf("%s (%s) uses %s of %s (%s)", name, con.name, used, from, other)
			}
		}
	}
	for _, con := range concerns {
		for _, f := range con.files {
			if _, err := os.Stat(f); err != nil {
				t.Errorf("concern %s: %v", con.name, err)
			}
		}
	}
}

// stageNamesUsed are the stage.X f uses.
func stageNamesUsed(f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := s.X.(*ast.Ident); ok && x.Name == "stage" {
				out = append(out, "stage."+s.Sel.Name)
			}
		}
		return true
	})
	return out
}

// declared are the package-level names d declares (not methods).
func declared(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			out = append(out, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					out = append(out, n.Name)
				}
			}
		}
	}
	return out
}

// packageNamesUsed are the names of declaredIn that f uses and another
// file declares: its identifiers the parser did not resolve within f
// (declared in no scope of f) that are not a selector's field or method,
// a struct literal's key or a method's name.
func packageNamesUsed(f *ast.File, declaredIn map[string]string) []string {
	skip := map[*ast.Ident]bool{}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			skip[n.Name] = true
		case *ast.SelectorExpr:
			skip[n.Sel] = true
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok {
				skip[id] = true
			}
		case *ast.Ident:
			if _, ok := declaredIn[n.Name]; ok && n.Obj == nil && !skip[n] && !slices.Contains(out, n.Name) {
				out = append(out, n.Name)
			}
		}
		return true
	})
	return out
}
