package main

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is this module's path; the rules below name packages relative to
// it ("" is the root main package).
const module = "github.com/wololo/wololo"

// under reports whether pkg is dir or a package below it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// importRule constrains the imports of this module's packages that from
// selects: each may import only packages of this module that allow accepts.
// A direct rule checks each package's own imports; a transitive one checks
// everything the package depends on and names the chain.
type importRule struct {
	name       string // of the subtest
	rule       string // the rule, as a failure states it
	from       func(pkg string) bool
	allow      func(dep string) bool
	transitive bool
}

// importRules are the directions the module's dependencies may point in.
// Tests count: a package's test files are held to its rules.
var importRules = []importRule{
	{
		name:  "election",
		rule:  "election (the pure Bully state machine) imports nothing of this module",
		from:  func(p string) bool { return p == "election" },
		allow: func(string) bool { return false },
	},
	{
		name:  "deploy",
		rule:  "deploy imports nothing of this module",
		from:  func(p string) bool { return p == "deploy" },
		allow: func(string) bool { return false },
	},
	{
		name:  "proto",
		rule:  "proto/... imports nothing of this module but proto/...",
		from:  func(p string) bool { return under(p, "proto") },
		allow: func(d string) bool { return under(d, "proto") },
	},
	{
		name:  "transport",
		rule:  "transport/... imports only proto/... and transport/... of this module",
		from:  func(p string) bool { return under(p, "transport") },
		allow: func(d string) bool { return under(d, "proto") || under(d, "transport") },
	},
	{
		name:  "tools-imported-only-by-tools-and-main",
		rule:  "only tools/... and the root main package import tools/...",
		from:  func(p string) bool { return p != "" && !under(p, "tools") },
		allow: func(d string) bool { return !under(d, "tools") },
	},
	{
		name:       "services-never-on-tools",
		rule:       "services/... never depends on tools/..., not even through another package",
		from:       func(p string) bool { return under(p, "services") },
		allow:      func(d string) bool { return !under(d, "tools") },
		transitive: true,
	},
	{
		name:  "atomicfile",
		rule:  "services/base/atomicfile (a leaf anyone may use) imports nothing of this module",
		from:  func(p string) bool { return p == "services/base/atomicfile" },
		allow: func(string) bool { return false },
	},
	{
		name:  "datagen",
		rule:  "services/base/datagen imports nothing of this module but services/base/atomicfile, so it shares no bug with the engines it tests",
		from:  func(p string) bool { return p == "services/base/datagen" },
		allow: func(d string) bool { return d == "services/base/atomicfile" },
	},
}

// importGraph is the module's import graph, from `go list -deps -test`:
// package → imported package → whether only a test build imports it.
type importGraph map[string]map[string]bool

// loadImportGraph lists every package of the module with its tests and
// keeps the edges between the module's own packages.
func loadImportGraph(t *testing.T) importGraph {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the import-direction rules need the go command to list the packages: %v", err)
	}
	cmd := exec.Command(gobin, "list", "-deps", "-test", "-f", `{{.ImportPath}}{{"\t"}}{{.ForTest}}{{"\t"}}{{join .Imports " "}}`, "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -test ./...: %v\n%s", err, stderr.Bytes())
	}
	g := importGraph{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(fields) != 3 {
			t.Fatalf("go list printed %q, want three tab-separated fields", line)
		}
		path, forTest, imports := fields[0], fields[1], fields[2]
		if strings.HasSuffix(path, ".test") {
			continue // the generated main package of a test binary
		}
		pkg, ok := modulePackage(path)
		if !ok {
			continue
		}
		// A package compiled with its tests, or its external _test
		// package, carries ForTest: its imports include the tests'.
		inTest := forTest != ""
		pkg = strings.TrimSuffix(pkg, "_test")
		if g[pkg] == nil {
			g[pkg] = map[string]bool{}
		}
		for _, imp := range strings.Fields(imports) {
			dep, ok := modulePackage(imp)
			if !ok || dep == pkg {
				continue
			}
			if testOnly, seen := g[pkg][dep]; !seen || testOnly {
				g[pkg][dep] = inTest
			}
		}
	}
	if len(g) == 0 {
		t.Fatal("go list named no package of " + module)
	}
	return g
}

// modulePackage returns path relative to the module, without the
// " [x.test]" of a test variant, and whether it is a package of the module.
func modulePackage(path string) (string, bool) {
	path, _, _ = strings.Cut(path, " ")
	if path == module {
		return "", true
	}
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}

// packages returns the graph's packages, sorted.
func (g importGraph) packages() []string {
	var pkgs []string
	for p := range g {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	return pkgs
}

// imports returns what pkg imports directly, sorted.
func (g importGraph) imports(pkg string) []string {
	var deps []string
	for d := range g[pkg] {
		deps = append(deps, d)
	}
	slices.Sort(deps)
	return deps
}

// violations lists, one message each, the imports that break r.
func (g importGraph) violations(r importRule) []string {
	var msgs []string
	for _, pkg := range g.packages() {
		if !r.from(pkg) {
			continue
		}
		if !r.transitive {
			for _, dep := range g.imports(pkg) {
				if !r.allow(dep) {
					msgs = append(msgs, show(pkg)+" imports "+show(dep)+g.where(pkg, dep))
				}
			}
			continue
		}
		// Breadth first, so that the chain named is a shortest one. The
		// tests of pkg count, those of its dependencies are not built.
		prev := map[string]string{} // the package each one was reached from
		queue := []string{pkg}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, dep := range g.imports(cur) {
				if _, seen := prev[dep]; seen || dep == pkg || cur != pkg && g[cur][dep] {
					continue
				}
				prev[dep] = cur
				if r.allow(dep) {
					queue = append(queue, dep)
					continue
				}
				chain := []string{dep}
				for p := cur; p != pkg; p = prev[p] {
					chain = append(chain, p)
				}
				chain = append(chain, pkg)
				slices.Reverse(chain)
				names := make([]string, len(chain))
				for i, p := range chain {
					names[i] = show(p)
				}
				msgs = append(msgs, show(pkg)+" depends on "+show(dep)+g.where(pkg, chain[1])+": "+strings.Join(names, " -> "))
			}
		}
	}
	return msgs
}

// where says when only pkg's tests import dep.
func (g importGraph) where(pkg, dep string) string {
	if g[pkg][dep] {
		return " (in its tests)"
	}
	return ""
}

func show(pkg string) string {
	if pkg == "" {
		return "the root main package"
	}
	return pkg
}

// TestImportDirections pins which way the module's dependencies point:
// see importRules.
func TestImportDirections(t *testing.T) {
	g := loadImportGraph(t)
	for _, r := range importRules {
		t.Run(r.name, func(t *testing.T) {
			constrained := slices.ContainsFunc(g.packages(), r.from)
			if !constrained {
				t.Fatalf("the rule constrains no package: was a directory renamed? (packages: %s)", strings.Join(g.packages(), ", "))
			}
			for _, msg := range g.violations(r) {
				t.Errorf("%s, which breaks the rule %q", msg, r.rule)
			}
		})
	}
}

// TestImportRulesCatchBadImports runs the rules over made-up graphs, so
// that a checker that lets everything through cannot pass unnoticed.
func TestImportRulesCatchBadImports(t *testing.T) {
	rule := func(name string) importRule {
		for _, r := range importRules {
			if r.name == name {
				return r
			}
		}
		t.Fatalf("no rule %q", name)
		return importRule{}
	}
	cases := []struct {
		name string
		rule string
		g    importGraph
		want []string
	}{
		{"clean", "transport", importGraph{
			"transport":         {"proto/wololo/v1": false, "transport/storetest": true},
			"transport/durable": {"transport": false},
		}, nil},
		{"election imports a service", "election", importGraph{
			"election": {"services/schema": false},
		}, []string{"election imports services/schema"}},
		{"a transport test imports a service", "transport", importGraph{
			"transport/durable": {"transport": false, "services/schema": true},
		}, []string{"transport/durable imports services/schema (in its tests)"}},
		{"a service imports a tool", "tools-imported-only-by-tools-and-main", importGraph{
			"":                {"tools/datagen": false},
			"tools/chaos":     {"tools/compose": false},
			"services/client": {"tools/datagen": false},
		}, []string{"services/client imports tools/datagen"}},
		{"a service depends on a tool through another", "services-never-on-tools", importGraph{
			"services/demo":   {"services/client": false},
			"services/client": {"services/csvio": false},
			"services/csvio":  {"tools/datagen": false},
		}, []string{
			"services/client depends on tools/datagen: services/client -> services/csvio -> tools/datagen",
			"services/csvio depends on tools/datagen: services/csvio -> tools/datagen",
			"services/demo depends on tools/datagen: services/demo -> services/client -> services/csvio -> tools/datagen",
		}},
		{"the tests of a dependency are not built", "services-never-on-tools", importGraph{
			"services/batch":  {"services/schema": false},
			"services/schema": {"tools/datagen": true},
		}, []string{"services/schema depends on tools/datagen (in its tests): services/schema -> tools/datagen"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.g.violations(rule(c.rule))
			if !slices.Equal(got, c.want) {
				t.Errorf("violations of %q:\n got %q\nwant %q", c.rule, got, c.want)
			}
		})
	}
}
