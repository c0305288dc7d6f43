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
	// testsMay, when set, also allows the dependencies it accepts to the
	// package's tests (direct rules only): the shared test helpers.
	testsMay func(dep string) bool
}

// testHelpers is the module's one test-helper package: it imports nothing
// of the module, so a package's tests may use it whatever the package's
// own rule says.
func testHelpers(dep string) bool { return dep == "internal/testkit" }

// sqlPhysical is the SQL engine's physical planner, which alone of the
// engine knows the cluster's tasks.
const sqlPhysical = "services/dataflow/sql/physical"

// sqlOps runs the physical plan: it routes rows by the stage runtime's
// hash.
const sqlOps = "services/dataflow/sql/sqlops"

// sqlOpsWire is sqlops's wire codec: a channel's rows and their bytes.
const sqlOpsWire = sqlOps + "/wire"

// importRules are the directions the module's dependencies may point in.
// Tests count: a package's test files are held to its rules.
var importRules = []importRule{
	{
		name:  "election",
		rule:  "election (the pure Bully state machine) imports nothing of this module",
		from:  func(p string) bool { return p == "election" },
		allow: func(string) bool { return false },
		// The golden tests read their scripts through the test helpers.
		testsMay: testHelpers,
	},
	{
		name:     "deploy",
		rule:     "deploy imports nothing of this module",
		from:     func(p string) bool { return p == "deploy" },
		allow:    func(string) bool { return false },
		testsMay: testHelpers,
	},
	{
		name:  "proto",
		rule:  "proto/... imports nothing of this module but proto/...",
		from:  func(p string) bool { return under(p, "proto") },
		allow: func(d string) bool { return under(d, "proto") },
	},
	{
		name:  "transport",
		rule:  "transport/... (the channel protocol) imports only proto/..., transport/... and the generic leaves of internal/ of this module: not the PKI, not the gRPC setup, nothing that knows rows",
		from:  func(p string) bool { return under(p, "transport") },
		allow: func(d string) bool { return under(d, "proto") || under(d, "transport") || internalLeaf(d) },
		// The tests share waits, loggers and the in-memory network with
		// the rest of the module.
		testsMay: testHelpers,
	},
	{
		name:  "internal-leaves",
		rule:  "internal/... but testkit (generic leaves anyone may use) imports nothing of this module",
		from:  internalLeaf,
		allow: func(string) bool { return false },
		// Their tests may use the shared test helpers.
		testsMay: testHelpers,
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
		name:     "floor-base",
		rule:     "services/base/... (the leaves) imports nothing of this module but services/base/... and the generic leaves of internal/",
		from:     func(p string) bool { return under(p, "services/base") },
		allow:    func(d string) bool { return under(d, "services/base") || internalLeaf(d) },
		testsMay: testHelpers,
	},
	{
		name: "floor-wire",
		rule: "services/wire/... (how Wololo speaks gRPC and who is who) imports only services/base, services/wire, proto and the generic leaves of internal/ of this module: not transport, which it serves without knowing",
		from: func(p string) bool { return under(p, "services/wire") },
		allow: func(d string) bool {
			return under(d, "services/base") || under(d, "services/wire") || under(d, "proto") || internalLeaf(d)
		},
		// Its tests serve and dial in memory, as the rest of the module's.
		testsMay: testHelpers,
	},
	{
		name: "floor-dataflow",
		rule: "services/dataflow/... imports only services/base, services/wire, services/dataflow, proto, deploy, transport and internal/ of this module",
		from: func(p string) bool { return under(p, "services/dataflow") && p != "services/dataflow/reference" },
		allow: func(d string) bool {
			return under(d, "services/base") || under(d, "services/wire") || under(d, "services/dataflow") || below(d)
		},
		// Tests may also read the default queries' SQL files, which
		// import nothing of the module.
		testsMay: func(d string) bool { return testHelpers(d) || d == "queries" },
	},
	{
		name: "sql-engine",
		rule: "services/dataflow/sql/... (the SQL engine) imports of this module only services/dataflow/sql/..., services/dataflow/csvio, services/dataflow/schema and services/base/snapcodec (the snapshot encoding)",
		from: func(p string) bool { return under(p, "services/dataflow/sql") && p != sqlPhysical && !under(p, sqlOps) },
		allow: func(d string) bool {
			return under(d, "services/dataflow/sql") || d == "services/dataflow/csvio" || d == "services/dataflow/schema" || d == "services/base/snapcodec"
		},
		// Its tests compare it with the reference on generated data.
		testsMay: func(d string) bool { return d == "services/dataflow/reference" || d == "services/base/datagen" },
	},
	{
		name:  "sqlgen-apart-from-the-engine",
		rule:  "services/dataflow/sql/sqlgen (random queries and their naive meaning, an oracle) imports nothing of this module, so it shares no code with the engine it checks",
		from:  func(p string) bool { return p == "services/dataflow/sql/sqlgen" },
		allow: func(string) bool { return false },
	},
	{
		name: "sql-ops",
		rule: "services/dataflow/sql/sqlops (the physical plan's operators and its in-process runner) imports of this module only services/dataflow/sql/..., services/dataflow/stage (the driver, the route hash and the Snapshotter contract), services/dataflow/batch, proto/wololo/v1 (the ColumnBatch row kind), services/dataflow/schema (the name of a job's result record) and services/base/snapcodec (the snapshot encoding); its wire codec (sqlops/wire) reads with services/base/protoscan",
		from: func(p string) bool { return p == sqlOps },
		allow: func(d string) bool {
			return under(d, "services/dataflow/sql") || d == "services/dataflow/stage" || d == "services/dataflow/batch" || d == "proto/wololo/v1" || d == "services/dataflow/schema" || d == "services/base/snapcodec"
		},
		// Its tests run the default queries against the reference on
		// generated data, and plans as the deployment's instances
		// (deploy.Instance) run them.
		testsMay: func(d string) bool {
			return testHelpers(d) || d == "queries" || d == "services/dataflow/reference" || d == "services/base/datagen" || d == "deploy"
		},
	},
	{
		name: "sql-ops-wire",
		rule: "services/dataflow/sql/sqlops/wire (the codec of a channel's rows) imports of this module only services/dataflow/sql/{exec,plan,value}, services/dataflow/batch, proto/wololo/v1 and services/base/protoscan: not the stage runtime, the plan or the rest of sqlops, which use it",
		from: func(p string) bool { return p == sqlOpsWire },
		allow: func(d string) bool {
			return d == "services/dataflow/sql/exec" || d == "services/dataflow/sql/plan" || d == "services/dataflow/sql/value" || d == "services/dataflow/batch" || d == "proto/wololo/v1" || d == "services/base/protoscan"
		},
		testsMay: testHelpers,
	},
	{
		name: "sql-ops-spill",
		rule: "services/dataflow/sql/sqlops/spill (an operator's spill files) imports of this module only services/dataflow/sql/{exec,plan}, the wire codec (sqlops/wire) and proto/wololo/v1: not the rest of sqlops, which uses it",
		from: func(p string) bool { return p == sqlOps+"/spill" },
		allow: func(d string) bool {
			return d == "services/dataflow/sql/exec" || d == "services/dataflow/sql/plan" || d == sqlOpsWire || d == "proto/wololo/v1"
		},
		testsMay: testHelpers,
	},
	{
		name:  "sql-physical",
		rule:  "services/dataflow/sql/physical (the physical planner) imports of this module only services/dataflow/sql/... and deploy (the cluster's tasks it places operators on)",
		from:  func(p string) bool { return p == sqlPhysical },
		allow: func(d string) bool { return under(d, "services/dataflow/sql") || d == "deploy" },
		// Its golden tests plan the default queries over the generator's
		// columns.
		testsMay: func(d string) bool { return testHelpers(d) || d == "queries" || d == "services/base/datagen" },
	},
	{
		name:  "queries",
		rule:  "queries (the SQL files of the four queries) imports nothing of this module; its tests run them through the SQL engine against the reference",
		from:  func(p string) bool { return p == "queries" },
		allow: func(string) bool { return false },
		testsMay: func(d string) bool {
			return testHelpers(d) || under(d, "services/dataflow/sql") || d == "services/dataflow/reference" || d == "services/base/datagen"
		},
	},
	{
		name:  "reference-apart-from-the-engine",
		rule:  "services/dataflow/reference (the oracle) imports of this module only services/dataflow/schema and services/cmdline/cli, nothing of the engine it checks",
		from:  func(p string) bool { return p == "services/dataflow/reference" },
		allow: func(d string) bool { return d == "services/dataflow/schema" || d == "services/cmdline/cli" },
	},
	{
		name: "floor-cmdline",
		rule: "services/cmdline/... imports only services/base, services/wire, services/dataflow, services/cmdline, proto, deploy, transport, internal/ and queries (the default queries' SQL files) of this module: never ops or roles",
		from: func(p string) bool { return under(p, "services/cmdline") },
		allow: func(d string) bool {
			return under(d, "services/base") || under(d, "services/wire") || under(d, "services/dataflow") || under(d, "services/cmdline") || below(d) || d == "queries"
		},
		testsMay: testHelpers,
	},
	{
		name: "floor-ops",
		rule: "services/ops/... imports only services/base, services/wire, services/cmdline, services/ops, proto, deploy, transport, internal/ and queries (the default queries' names) of this module: never dataflow or roles",
		from: func(p string) bool { return under(p, "services/ops") },
		allow: func(d string) bool {
			return under(d, "services/base") || under(d, "services/wire") || under(d, "services/cmdline") || under(d, "services/ops") || below(d) || d == "queries"
		},
		testsMay: testHelpers,
	},
	{
		name:  "e2e-imported-by-nobody",
		rule:  "nothing imports services/e2e (the end-to-end tests); services/roles, the top floor, may import every other package of services/",
		from:  func(p string) bool { return !under(p, "services/e2e") },
		allow: func(d string) bool { return !under(d, "services/e2e") },
	},
	{
		name:  "testkit-imports-nothing",
		rule:  "internal/testkit (the shared test helpers) imports nothing of this module, so that any package's tests may use it",
		from:  func(p string) bool { return p == "internal/testkit" },
		allow: func(string) bool { return false },
	},
	{
		name:     "testkit-only-in-tests",
		rule:     "only tests import internal/testkit",
		from:     func(p string) bool { return p != "internal/testkit" },
		allow:    func(d string) bool { return d != "internal/testkit" },
		testsMay: testHelpers,
	},
	{
		name:  "runtimetest-knows-no-runtime",
		rule:  "services/roles/master/runtimetest (the runtimes' conformance suite) imports of this module only services/roles/master: the runtimes and their processes come from its callers (its own tests bring the local runner and the test helpers)",
		from:  func(p string) bool { return p == "services/roles/master/runtimetest" },
		allow: func(d string) bool { return d == "services/roles/master" },
		testsMay: func(d string) bool {
			return testHelpers(d) || d == "services/roles/local" || d == "deploy"
		},
	},
	{
		name: "roles-apart",
		rule: "a package of services/roles that assembles no other role (every one but the assemblers node, worker and demo; master/runtimetest has its own rule) imports no other package of services/roles: a pure parser or constant two roles share belongs on the floor below them (the data path's on the dataflow floor), not in one of them",
		from: func(p string) bool {
			return under(p, "services/roles") && !slices.Contains(roleAssemblers, p) && p != "services/roles/master/runtimetest"
		},
		allow: func(d string) bool { return !under(d, "services/roles") },
	},
	{
		name:  "datagen",
		rule:  "services/base/datagen imports nothing of this module but services/base/atomicfile, so it shares no bug with the engines it tests",
		from:  func(p string) bool { return p == "services/base/datagen" },
		allow: func(d string) bool { return d == "services/base/atomicfile" },
	},
}

// roleAssemblers are the packages of services/roles that put other roles
// together, and so may import them: the node (a gateway or shard process,
// with the gateway's role when it has it), the worker (a node), and the
// demo (the SQL engine's in-process runner, or the nodes with --grpc).
// Every other role stands alone.
var roleAssemblers = []string{"services/roles/node", "services/roles/worker", "services/roles/demo"}

// floors are the folders services/ is grouped into (services/README.md),
// lowest first; every package of services/ is in one of them.
var floors = []string{"services/base", "services/wire", "services/dataflow", "services/cmdline", "services/ops", "services/roles", "services/e2e"}

// below reports whether dep is one of the module's packages outside
// services/ that every floor above base and wire may import: the API, the
// deployment description, the channel protocol and the generic leaves.
func below(dep string) bool {
	return under(dep, "proto") || dep == "deploy" || under(dep, "transport") || internalLeaf(dep)
}

// internalLeaf reports whether dep is one of the generic leaves under
// internal/ (internal/lifetime, internal/errinfo, internal/directio, internal/ratelog): everything there but the test helpers,
// which only tests may import.
func internalLeaf(dep string) bool { return under(dep, "internal") && dep != "internal/testkit" }

// floorOf returns the floor pkg is on, or "" when it is on none.
func floorOf(pkg string) string {
	for _, f := range floors {
		if under(pkg, f) && pkg != f {
			return f
		}
	}
	return ""
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
				if !r.allow(dep) && !(g[pkg][dep] && r.testsMay != nil && r.testsMay(dep)) {
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

// TestServicesOnFloors checks that every package of services/ is on one of
// the floors, so that the floor rules constrain it: a package added
// directly under services/ must first choose its floor.
func TestServicesOnFloors(t *testing.T) {
	g := loadImportGraph(t)
	for _, pkg := range g.packages() {
		if under(pkg, "services") && floorOf(pkg) == "" && pkg != "services/e2e" {
			t.Errorf("%s is on no floor of services/ (%s): move it to the floor its imports allow", pkg, strings.Join(floors, ", "))
		}
	}
	for _, f := range floors {
		if !slices.ContainsFunc(g.packages(), func(p string) bool { return under(p, f) }) {
			t.Errorf("the floor %s holds no package: was it renamed?", f)
		}
	}
	if got := floorOf("services/stats"); got != "" {
		t.Errorf("floorOf(services/stats) = %q, want \"\"", got)
	}
	if got := floorOf("services/dataflow/stage"); got != "services/dataflow" {
		t.Errorf("floorOf(services/dataflow/stage) = %q, want services/dataflow", got)
	}
}

// TestImportRoleAssemblers keeps the exemption of roles-apart honest:
// each of roleAssemblers exists and imports another role, outside its
// tests; one that no longer does is held to the rule like any role.
func TestImportRoleAssemblers(t *testing.T) {
	g := loadImportGraph(t)
	for _, pkg := range roleAssemblers {
		if _, ok := g[pkg]; !ok {
			t.Errorf("%s is in roleAssemblers but is no package: was it renamed?", pkg)
			continue
		}
		if !slices.ContainsFunc(g.imports(pkg), func(d string) bool { return under(d, "services/roles") && !g[pkg][d] }) {
			t.Errorf("%s is in roleAssemblers but imports no other role: take it out, so that roles-apart holds it", pkg)
		}
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
			"election": {"services/dataflow/schema": false},
		}, []string{"election imports services/dataflow/schema"}},
		{"an election test uses the test helpers", "election", importGraph{
			"election": {"internal/testkit": true},
		}, nil},
		{"election itself uses the test helpers", "election", importGraph{
			"election": {"internal/testkit": false},
		}, []string{"election imports internal/testkit"}},
		{"a deploy test uses the test helpers, another a service", "deploy", importGraph{
			"deploy": {"internal/testkit": true, "services/dataflow/schema": true},
		}, []string{"deploy imports services/dataflow/schema (in its tests)"}},
		{"a transport test imports a service", "transport", importGraph{
			"transport/durable": {"transport": false, "services/dataflow/schema": true},
		}, []string{"transport/durable imports services/dataflow/schema (in its tests)"}},
		{"a transport test uses the test helpers", "transport", importGraph{
			"transport/durable": {"transport": false, "internal/testkit": true},
		}, nil},
		{"transport itself uses the test helpers", "transport", importGraph{
			"transport/durable": {"internal/testkit": false},
		}, []string{"transport/durable imports internal/testkit"}},
		{"the test helpers import the module", "testkit-imports-nothing", importGraph{
			"internal/testkit": {"services/cmdline/version": false},
		}, []string{"internal/testkit imports services/cmdline/version"}},
		{"code outside the tests imports the test helpers", "testkit-only-in-tests", importGraph{
			"services/roles/node": {"internal/testkit": false},
			"services/e2e":        {"internal/testkit": true},
		}, []string{"services/roles/node imports internal/testkit"}},
		{"a service imports a tool", "tools-imported-only-by-tools-and-main", importGraph{
			"":                        {"tools/datagen": false},
			"tools/chaos":             {"tools/compose": false},
			"services/cmdline/client": {"tools/datagen": false},
		}, []string{"services/cmdline/client imports tools/datagen"}},
		{"a service depends on a tool through another", "services-never-on-tools", importGraph{
			"services/roles/demo":     {"services/cmdline/client": false},
			"services/cmdline/client": {"services/dataflow/csvio": false},
			"services/dataflow/csvio": {"tools/datagen": false},
		}, []string{
			"services/cmdline/client depends on tools/datagen: services/cmdline/client -> services/dataflow/csvio -> tools/datagen",
			"services/dataflow/csvio depends on tools/datagen: services/dataflow/csvio -> tools/datagen",
			"services/roles/demo depends on tools/datagen: services/roles/demo -> services/cmdline/client -> services/dataflow/csvio -> tools/datagen",
		}},
		{"the floors clean", "floor-dataflow", importGraph{
			"services/dataflow/stage": {"services/dataflow/batch": false, "transport": false, "deploy": false, "proto/wololo/v1": false},
			"services/dataflow/batch": {"services/base/atomicfile": false, "services/dataflow/schema": true},
		}, nil},
		{"the tests of a floor use the test helpers", "floor-ops", importGraph{
			"services/ops/clusterview": {"internal/testkit": true, "services/ops/metrics": false},
		}, nil},
		{"the dataflow imports a role", "floor-dataflow", importGraph{
			"services/dataflow/batch": {"services/roles/gateway": false, "services/dataflow/schema": false},
			"services/dataflow/stage": {"services/cmdline/cli": true},
		}, []string{
			"services/dataflow/batch imports services/roles/gateway",
			"services/dataflow/stage imports services/cmdline/cli (in its tests)",
		}},
		{"the oracle imports the engine", "reference-apart-from-the-engine", importGraph{
			"services/dataflow/reference": {"services/dataflow/schema": false, "services/cmdline/cli": false, "services/dataflow/sql/sqlops": true},
		}, []string{"services/dataflow/reference imports services/dataflow/sql/sqlops (in its tests)"}},
		{"a leaf imports the dataflow", "floor-base", importGraph{
			"services/base/datagen":    {"services/base/atomicfile": false, "services/dataflow/schema": false},
			"services/base/atomicfile": {"proto/wololo/v1": false},
		}, []string{"services/base/atomicfile imports proto/wololo/v1", "services/base/datagen imports services/dataflow/schema"}},
		{"the client imports a role", "floor-cmdline", importGraph{
			"services/cmdline/client": {"services/roles/gateway": false, "services/dataflow/csvio": false, "services/wire/rpc": false, "internal/lifetime": false},
		}, []string{"services/cmdline/client imports services/roles/gateway"}},
		{"wire clean", "floor-wire", importGraph{
			"services/wire/rpc": {"services/wire/pki": false, "proto/wololo/v1": false, "internal/testkit": true},
			"services/wire/pki": {"services/base/atomicfile": false},
		}, nil},
		{"wire imports the channel protocol and a floor above", "floor-wire", importGraph{
			"services/wire/rpc": {"services/wire/pki": false, "transport": false, "services/ops/metrics": true},
			"services/wire/pki": {"deploy": false},
		}, []string{
			"services/wire/pki imports deploy",
			"services/wire/rpc imports services/ops/metrics (in its tests)",
			"services/wire/rpc imports transport",
		}},
		{"the channel protocol imports the PKI and the gRPC setup", "transport", importGraph{
			"transport":         {"services/wire/pki": false, "internal/lifetime": false},
			"transport/durable": {"services/wire/rpc": true},
		}, []string{"transport imports services/wire/pki", "transport/durable imports services/wire/rpc (in its tests)"}},
		{"a generic leaf imports the module", "internal-leaves", importGraph{
			"internal/lifetime": {"transport": false, "internal/testkit": true},
			"internal/testkit":  {"services/cmdline/version": false},
		}, []string{"internal/lifetime imports transport"}},
		{"ops imports a role and the dataflow", "floor-ops", importGraph{
			"services/ops/top":         {"services/cmdline/client": false, "services/roles/gateway": false},
			"services/ops/clusterview": {"services/dataflow/sql/sqlops": false, "services/ops/metrics": false},
		}, []string{"services/ops/clusterview imports services/dataflow/sql/sqlops", "services/ops/top imports services/roles/gateway"}},
		{"a role imports the end-to-end tests", "e2e-imported-by-nobody", importGraph{
			"services/roles/node": {"services/e2e": true, "services/ops/dashboard": false},
			"services/e2e":        {"services/roles/node": false},
		}, []string{"services/roles/node imports services/e2e (in its tests)"}},
		{"the runtime suite knows a runtime", "runtimetest-knows-no-runtime", importGraph{
			"services/roles/master/runtimetest": {"services/roles/master": false, "services/roles/local": false, "internal/testkit": true, "deploy": true},
		}, []string{"services/roles/master/runtimetest imports services/roles/local"}},
		{"roles apart but the assemblers", "roles-apart", importGraph{
			"services/roles/node":               {"services/roles/gateway": false},
			"services/roles/worker":             {"services/roles/node": false},
			"services/roles/demo":               {"services/roles/local": false, "services/roles/node": false},
			"services/roles/master/runtimetest": {"services/roles/master": false},
			"services/roles/master":             {"services/roles/gateway": false, "services/dataflow/ingest": false},
			"services/roles/local":              {"services/roles/master": false},
			"services/roles/dockerproxy":        {"services/roles/master": true, "services/cmdline/cli": false},
			"services/roles/gateway":            {"services/dataflow/ingest": false, "internal/testkit": true},
		}, []string{
			"services/roles/dockerproxy imports services/roles/master (in its tests)",
			"services/roles/local imports services/roles/master",
			"services/roles/master imports services/roles/gateway",
		}},
		{"the tests of a dependency are not built", "services-never-on-tools", importGraph{
			"services/dataflow/batch":  {"services/dataflow/schema": false},
			"services/dataflow/schema": {"tools/datagen": true},
		}, []string{"services/dataflow/schema depends on tools/datagen (in its tests): services/dataflow/schema -> tools/datagen"}},
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
