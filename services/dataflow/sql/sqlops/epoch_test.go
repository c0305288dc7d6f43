package sqlops_test

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/incr/incrtest"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// The helpers the tests of standing queries share (incrtest).
var (
	splitEpochs = incrtest.Epochs
	epochPrefix = incrtest.Prefix
	csvRows     = incrtest.Rows
	addChange   = incrtest.AddChange
)

// job is a job of queries over tables: their texts and their logical
// plans.
type job struct {
	names []string
	texts map[string]string
	roots map[string]*plan.Node
}

func newJob(t testing.TB, texts map[string]string, names []string, tables map[string]*exec.Table) job {
	t.Helper()
	cat := sql.Catalog{}
	for n, tab := range tables {
		cat[n] = tab.Columns
	}
	j := job{names: names, texts: texts, roots: map[string]*plan.Node{}}
	for _, n := range names {
		root, err := sql.Compile(texts[n], cat)
		if err != nil {
			t.Fatalf("%s: %s: %v", n, texts[n], err)
		}
		j.roots[n] = root
	}
	return j
}

// checkEpochs runs the job's plan on shards shards over the epochs and
// checks every version of every query: equal, byte for byte, to
// oracle.Execute's answer over the epochs so far, its changes adding up
// to it; and the final answers equal to the last versions. It returns
// the result.
func checkEpochs(t *testing.T, label string, j job, tables map[string]*exec.Table, parts []map[string]*exec.Table, shards int) *sqlops.EpochResult {
	t.Helper()
	p := planOf(t, j.texts, j.names, tables, shards)
	if err := sqlops.CheckStanding(p); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	res, err := sqlops.RunEpochs(p, parts)
	if err != nil {
		t.Fatalf("%s, %d shards: %v", label, shards, err)
	}
	if len(res.Versions) != len(parts) {
		t.Fatalf("%s: %d epochs of versions, want %d", label, len(res.Versions), len(parts))
	}
	for _, name := range j.names {
		sum := map[string]int64{}
		for k := range parts {
			v := res.Versions[k][name]
			want, err := oracle.Execute(j.roots[name], epochPrefix(parts, k+1))
			if err != nil {
				t.Fatalf("%s: %s: epoch %d: batch: %v", label, name, k+1, err)
			}
			if !bytes.Equal(v.CSV, want.CSV()) {
				t.Fatalf("%s, %d shards: %s (%s): epoch %d of %d:\n got %q\nwant %q\n%s", label, shards, name, j.texts[name], k+1, len(parts), v.CSV, want.CSV(), p)
			}
			if err := addChange(sum, v.Change); err != nil {
				t.Fatalf("%s: %s: epoch %d: %v", label, name, k+1, err)
			}
			if rows := csvRows(v.CSV); !maps.Equal(rows, sum) {
				t.Fatalf("%s, %d shards: %s: epoch %d: the changes add up to %v, the version is %v", label, shards, name, k+1, sum, rows)
			}
		}
		if last := res.Versions[len(parts)-1][name].CSV; !bytes.Equal(res.Files[name], last) {
			t.Fatalf("%s: %s: the final answer %q is not the last version %q", label, name, res.Files[name], last)
		}
	}
	// One epoch at a time, each epoch's versions handed over: the same.
	next := int64(1)
	feed := sqlops.EpochFeed{Columns: map[string][]string{}, Epochs: len(parts), Next: func(k int, table string, yield func(*exec.Batch) error) error {
		if k != int(next) {
			return fmt.Errorf("epoch %d's rows asked for, where %d's were due", k, next)
		}
		if t := parts[k-1][table]; t != nil {
			for _, b := range t.Batches {
				if err := yield(b); err != nil {
					return err
				}
			}
		}
		return nil
	}}
	for name, tab := range tables {
		feed.Columns[name] = tab.Columns
	}
	each, err := sqlops.RunEpochsEach(p, feed, func(epoch int64, vs map[string]sqlops.Version) error {
		if epoch != next {
			return fmt.Errorf("epoch %d's versions, where %d's were due", epoch, next)
		}
		next++
		if !maps.EqualFunc(vs, res.Versions[epoch-1], func(a, b sqlops.Version) bool {
			return a.Query == b.Query && a.Epoch == b.Epoch && bytes.Equal(a.CSV, b.CSV) && bytes.Equal(a.Change, b.Change)
		}) {
			return fmt.Errorf("epoch %d: versions not RunEpochs'", epoch)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s, %d shards: RunEpochsEach: %v", label, shards, err)
	}
	if next != int64(len(parts))+1 || each.Versions != nil || !maps.EqualFunc(each.Files, res.Files, bytes.Equal) {
		t.Fatalf("%s, %d shards: RunEpochsEach: %d epochs' versions of %d, %d kept, final answers RunEpochs' %v", label, shards, next-1, len(parts), len(each.Versions), maps.EqualFunc(each.Files, res.Files, bytes.Equal))
	}
	return res
}

// sqlgenJob is a job of 1 to 3 of sqlgen's random queries (of seeds
// about seed) over the tables of seed's case, which every case has the
// columns of.
func sqlgenJob(t testing.TB, seed uint64) (job, map[string]*exec.Table) {
	t.Helper()
	c := sqlgen.Generate(seed)
	tables := caseTables(t, c)
	// A plan travels as JSON, which writes a column named by bytes
	// that are not UTF-8 otherwise: such a literal is made one.
	texts := map[string]string{"r0": strings.ToValidUTF8(c.Query, "?")}
	names := []string{"r0"}
	for i := range int(seed % 3) {
		name := fmt.Sprintf("r%d", i+1)
		texts[name] = strings.ToValidUTF8(sqlgen.Generate(seed+100_000*uint64(i+1)).Query, "?")
		names = append(names, name)
	}
	return newJob(t, texts, names, tables), tables
}

// TestEpochsRandomQueries runs jobs of sqlgen's random queries (joins,
// semi-joins, DISTINCT, GROUP BY and HAVING, ORDER BY and LIMIT, global
// aggregates) as standing jobs over their tables split into 1 to 6
// random epochs, on one task and on 1, 2 and 3 shards: every version
// of every query is the batch answer over the epochs so far.
func TestEpochsRandomQueries(t *testing.T) {
	runs := 160
	if testing.Short() {
		runs = 40
	}
	versions := 0
	for seed := range uint64(runs) {
		j, tables := sqlgenJob(t, seed)
		r := rand.New(rand.NewPCG(seed, 41))
		parts := splitEpochs(r, tables, 1+r.IntN(6))
		shards := []int{0, 1, 2, 3}[seed%4]
		checkEpochs(t, fmt.Sprintf("seed %d", seed), j, tables, parts, shards)
		versions += len(parts) * len(j.names)
	}
	t.Logf("%d versions checked", versions)
}

// TestEpochsPhysicalOperators runs jobs of this package's own random
// queries (gen: partial and final aggregates of every function, MIN and
// MAX included, over rows that leave too, HAVING at the gateway,
// DISTINCT at the shards and again at the gateway, a LIMIT over
// groups, a shuffle from shard to shard, a semi-join on a subquery's
// groups) as standing jobs over random epochs on 1, 2 and 3 shards.
func TestEpochsPhysicalOperators(t *testing.T) {
	runs := 80
	if testing.Short() {
		runs = 20
	}
	for seed := range runs {
		g := gen{rand.New(rand.NewPCG(uint64(seed), 26))}
		tables := g.tables(t)
		texts, names := g.queries(1 + g.r.IntN(4))
		j := newJob(t, texts, names, tables)
		parts := splitEpochs(g.r, tables, 1+g.r.IntN(5))
		checkEpochs(t, fmt.Sprintf("seed %d", seed), j, tables, parts, 1+seed%3)
	}
}

// TestEpochsDefaultQueries runs the four default queries over generated
// datasets (duplicate match rows, players of matches that are not there
// or come epochs later) in 1 to 40 epochs, on one task and on 2 and 3
// shards.
func TestEpochsDefaultQueries(t *testing.T) {
	for seed := range int64(4) {
		_, _, tables := generated(t, 1500, seed)
		j := newJob(t, defaultTexts(), queries.Names, tables)
		r := rand.New(rand.NewPCG(uint64(seed), 42))
		n := []int{1, 3, 12, 40}[seed]
		res := checkEpochs(t, fmt.Sprintf("seed %d, %d epochs", seed, n), j, tables, splitEpochs(r, tables, n), []int{0, 2, 3, 2}[seed])
		// The final answers are the batch job's.
		batch, err := sqlops.Run(planOf(t, j.texts, j.names, tables, 2), tables)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range queries.Names {
			if !bytes.Equal(res.Files[name], batch.Files[name]) {
				t.Errorf("seed %d: %s: the standing job's final answer is not the batch job's", seed, name)
			}
		}
	}
}

// TestEpochsRestore restarts task instances from their snapshots at
// random points (between epochs and within them: the changes held for
// an epoch and its markers so far are in the snapshot), the instances
// taking their messages in random orders: every version, change and
// final answer is byte for byte the uninterrupted run's.
func TestEpochsRestore(t *testing.T) {
	var runs []epochRun
	for seed := range uint64(40) {
		j, tables := sqlgenJob(t, seed+7)
		r := rand.New(rand.NewPCG(seed, 43))
		runs = append(runs, epochRun{fmt.Sprintf("sqlgen seed %d", seed+7), planOf(t, j.texts, j.names, tables, 1+int(seed%3)), splitEpochs(r, tables, 1+r.IntN(5))})
	}
	for seed := range 20 {
		g := gen{rand.New(rand.NewPCG(uint64(seed), 27))}
		tables := g.tables(t)
		texts := map[string]string{}
		var names []string
		for i := range 1 + g.r.IntN(3) {
			texts[fmt.Sprintf("g%d", i)], _ = g.query()
			names = append(names, fmt.Sprintf("g%d", i))
		}
		runs = append(runs, epochRun{fmt.Sprintf("gen seed %d", seed), planOf(t, texts, names, tables, 1+seed%3), splitEpochs(g.r, tables, 1+g.r.IntN(5))})
	}
	_, _, tables := generated(t, 1000, 9)
	runs = append(runs, epochRun{"default queries", planOf(t, defaultTexts(), queries.Names, tables, 2), splitEpochs(rand.New(rand.NewPCG(9, 9)), tables, 6)})
	restarts := 0
	for i, rn := range runs {
		want, err := sqlops.RunEpochs(rn.plan, rn.epochs)
		if err != nil {
			t.Fatalf("%s: %v", rn.label, err)
		}
		r := rand.New(rand.NewPCG(uint64(i), 44))
		got, n, err := sqlops.RunEpochsRestarting(rn.plan, rn.epochs, r, 0.1)
		if err != nil {
			t.Fatalf("%s: %v", rn.label, err)
		}
		restarts += n
		if !sameVersions(got.Versions, want.Versions) {
			t.Fatalf("%s: restarted, the versions differ", rn.label)
		}
		if !maps.EqualFunc(got.Files, want.Files, bytes.Equal) {
			t.Fatalf("%s: restarted, the final answers differ", rn.label)
		}
	}
	if restarts < 100 {
		t.Errorf("only %d restarts: the test checks little", restarts)
	}
	t.Logf("%d restarts", restarts)
}

// sameVersions reports whether two runs' versions are the same, epoch,
// CSV and change of every query.
func sameVersions(got, want []map[string]sqlops.Version) bool {
	return slices.EqualFunc(got, want, func(a, b map[string]sqlops.Version) bool {
		return maps.EqualFunc(a, b, func(x, y sqlops.Version) bool {
			return x.Epoch == y.Epoch && bytes.Equal(x.CSV, y.CSV) && bytes.Equal(x.Change, y.Change)
		})
	})
}

// TestEpochsRestoreDroppedGroups: the default queries over 20,000
// matches on two shards, whose q2 aggregates (some 10,000 groups each,
// most of them finished: a third player row, or two that fail its
// HAVING) drop the state of their finished groups between epochs
// (incr's finish.go, past its slack of 4,096), restarted from
// snapshots at random points: every version and final answer is the
// uninterrupted run's, and the batch job's at the end.
func TestEpochsRestoreDroppedGroups(t *testing.T) {
	_, _, tables := generated(t, 20000, 12)
	p := planOf(t, defaultTexts(), queries.Names, tables, 2)
	epochs := splitEpochs(rand.New(rand.NewPCG(12, 12)), tables, 5)
	want, err := sqlops.RunEpochs(p, epochs)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := sqlops.RunEpochsRestarting(p, epochs, rand.New(rand.NewPCG(12, 44)), 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if !sameVersions(got.Versions, want.Versions) {
		t.Fatal("restarted, the versions differ")
	}
	batch, err := sqlops.Run(p, tables)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range queries.Names {
		if !bytes.Equal(want.Files[name], batch.Files[name]) || !bytes.Equal(got.Files[name], batch.Files[name]) {
			t.Errorf("%s: the standing job's final answer is not the batch job's", name)
		}
	}
}

// placed are queries of the constructs whose standing form the physical
// plan places in a way of its own, over sqlgen's tables t(k, n, b, s, d)
// and u(k, m): on the shards or at the gateway, complete or partial and
// merged, and over rows that leave.
var placed = []string{
	// A subquery's ORDER BY ... LIMIT at the gateway, its keys shuffled
	// to the semi-join on the shards: a key leaves its first rows.
	"SELECT k, n FROM t WHERE k IN (SELECT k FROM u ORDER BY m DESC, k LIMIT 2)",
	"SELECT s, COUNT(*) FROM t WHERE k IN (SELECT k FROM u GROUP BY k ORDER BY COUNT(*) DESC, k LIMIT 1) GROUP BY s",
	// A complete aggregate on the shards over rows that leave, its
	// HAVING after it there.
	"SELECT k, COUNT(*), MIN(n) FROM t WHERE k IN (SELECT k FROM u GROUP BY k HAVING COUNT(*) = 1) GROUP BY k HAVING COUNT(*) > 1",
	// Partial aggregates over rows that leave, merged at the gateway:
	// MIN and MAX of groups that lose rows.
	"SELECT s, COUNT(*), MIN(n), MAX(d), AVG(n) FROM t WHERE k IN (SELECT k FROM u GROUP BY k HAVING MAX(m) < 2) GROUP BY s",
	"SELECT COUNT(*), MIN(n), MAX(s) FROM t WHERE k IN (SELECT k FROM u GROUP BY k HAVING COUNT(*) = 1)",
	// Partial aggregates over rows that only arrive, with a HAVING at the
	// gateway and a LIMIT over the groups.
	"SELECT b, COUNT(*), SUM(n), MIN(s), STDDEV_SAMP(n) FROM t GROUP BY b HAVING COUNT(*) > 2 ORDER BY 2 DESC, 1 LIMIT 2",
	// DISTINCT at the shards and again at the gateway; over groups.
	"SELECT DISTINCT s, b FROM t",
	"SELECT DISTINCT COUNT(*) FROM t GROUP BY k",
	"SELECT DISTINCT MIN(n), b FROM t GROUP BY k, b ORDER BY 1 DESC LIMIT 3",
	// ROW_NUMBER over groups; a join's groups; no rows at all.
	"SELECT ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, k) AS r, k, COUNT(*) AS c FROM t GROUP BY k ORDER BY c DESC, k",
	"SELECT u.m, COUNT(*), MAX(t.n) FROM t JOIN u ON t.k = u.k GROUP BY u.m HAVING MAX(t.n) > 1",
	"SELECT COUNT(*), SUM(n) FROM t WHERE n > 1000000",
	// A CROSS JOIN: u broadcast to every shard, t's rows where they
	// are; a comma join of groups.
	"SELECT t.k, t.n, u.m FROM t CROSS JOIN u WHERE u.m > t.n",
	// BOOL_AND and BOOL_OR, partial and merged, over rows that arrive
	// and rows that leave.
	"SELECT b, BOOL_AND(n > 0), BOOL_OR(s = 'x') FROM t GROUP BY b",
	"SELECT BOOL_AND(b), BOOL_OR(n > 1) FROM t WHERE k IN (SELECT k FROM u GROUP BY k HAVING MAX(m) < 2)",
	"SELECT x.k, y.k, x.c * y.c FROM (SELECT k, COUNT(*) AS c FROM t GROUP BY k) x, (SELECT k, COUNT(*) AS c FROM u GROUP BY k) y",
}

// TestEpochsPlacedConstructs runs each of placed, alone and all together,
// over 12 of sqlgen's datasets in random epochs on 1, 2 and 3 shards.
func TestEpochsPlacedConstructs(t *testing.T) {
	texts, names := placedQueries()
	for seed := range uint64(12) {
		_, tables := sqlgenJob(t, seed)
		r := rand.New(rand.NewPCG(seed, 45))
		for i, name := range names {
			j := newJob(t, map[string]string{name: texts[name]}, []string{name}, tables)
			checkEpochs(t, fmt.Sprintf("seed %d", seed), j, tables, splitEpochs(r, tables, 1+r.IntN(6)), 1+(int(seed)+i)%3)
		}
		checkEpochs(t, fmt.Sprintf("seed %d, all", seed), newJob(t, texts, names, tables), tables, splitEpochs(r, tables, 1+r.IntN(6)), 2)
	}
}

// placedQueries are the queries of placed, named c0, c1, ...
func placedQueries() (map[string]string, []string) {
	texts := map[string]string{}
	var names []string
	for i, q := range placed {
		name := fmt.Sprintf("c%d", i)
		texts[name], names = q, append(names, name)
	}
	return texts, names
}

// queries are n of the generator's random queries, named g0, g1, ...
func (g gen) queries(n int) (map[string]string, []string) { return g.queriesOf(n, gen.query) }

// queriesOf are n random queries of the generator's kind q, named g0,
// g1, ...
func (g gen) queriesOf(n int, q func(gen) (string, bool)) (map[string]string, []string) {
	texts := map[string]string{}
	var names []string
	for i := range n {
		name := fmt.Sprintf("g%d", i)
		texts[name], _ = q(g)
		names = append(names, name)
	}
	return texts, names
}

// epochRun is a standing plan and the epochs to run it over.
type epochRun struct {
	label  string
	plan   *physical.Plan
	epochs []map[string]*exec.Table
}

// TestEpochsSharedTableLooksUpOnce: the shards' operators of one shared
// table (q1's DISTINCT, q2's aggregate, the semi-joins of q3 and q4) fold
// the changes that arrive on a channel with each row's key looked up in
// the table once, not once per operator: at most a lookup per row of the
// tables they read, whose rows each reach one shard.
func TestEpochsSharedTableLooksUpOnce(t *testing.T) {
	_, _, tables := generated(t, 500, 5)
	p := planOf(t, defaultTexts(), queries.Names, tables, 2)
	res, lookups, err := sqlops.RunEpochsLookups(p, splitEpochs(rand.New(rand.NewPCG(5, 42)), tables, 6))
	if err != nil {
		t.Fatal(err)
	}
	batch, err := sqlops.Run(p, tables)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range queries.Names {
		if !bytes.Equal(res.Files[name], batch.Files[name]) {
			t.Errorf("%s: the standing job's final answer is not the batch job's", name)
		}
	}
	checkLookups(t, p, func(ch string) int {
		n := 0 // the channel's producer reads a table's scan, whose every row arrives
		for _, b := range tables[p.Ops[p.Ops[p.Channel(ch).Producer].Inputs[0].Op].Node.Table].Batches {
			n += b.N
		}
		return n
	}, func(id int) int { return lookups[id] })
}
