package sqlops_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// plan compiles the named queries and places them on a gateway and a
// shard task of the given replicas (shards 0: one task for all), through
// Encode and Decode, as a stored plan travels.
func planOf(t testing.TB, texts map[string]string, names []string, tables map[string]*exec.Table, shards int) *physical.Plan {
	t.Helper()
	cat := sql.Catalog{}
	for n, tab := range tables {
		cat[n] = tab.Columns
	}
	var ls []physical.Logical
	for _, name := range names {
		root, err := sql.Compile(texts[name], cat)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ls = append(ls, physical.Logical{Name: name, Plan: root})
	}
	shape := physical.Shape{Gateway: physical.Task{Name: "gateway", Replicas: 1}, Shard: physical.Task{Name: "shard", Replicas: shards}}
	if shards == 0 {
		shape.Shard = shape.Gateway
	}
	p, err := physical.Build(ls, shape)
	if err != nil {
		t.Fatal(err)
	}
	js, err := physical.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = physical.Decode(js); err != nil {
		t.Fatal(err)
	}
	return p
}

func readTables(t testing.TB, matches, players []byte) map[string]*exec.Table {
	t.Helper()
	mt, err := exec.ReadCSV(bytes.NewReader(matches), reference.MaxRecordBytes)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := exec.ReadCSV(bytes.NewReader(players), reference.MaxRecordBytes)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*exec.Table{"matches": mt, "match_players": pt}
}

func defaultTexts() map[string]string {
	texts := map[string]string{}
	for _, n := range queries.Names {
		texts[n], _ = queries.Text(n)
	}
	return texts
}

// TestFourQueriesMatchTheReference runs q1.sql .. q4.sql through the
// physical plan on one task, and on a gateway with 1, 2 and 3 shards, and
// compares each output with the reference evaluator's, byte for byte.
func TestFourQueriesMatchTheReference(t *testing.T) {
	configs := []datagen.Config{
		{Matches: 3000, Seed: 1},
		{Matches: 3000, Seed: 2, ShuffleColumns: true, CRLF: true, QuoteAll: true},
		{Matches: 20000, Seed: 4},
	}
	if testing.Short() {
		configs = configs[:2]
	}
	for _, cfg := range configs {
		var m, pl bytes.Buffer
		if _, err := datagen.Generate(cfg, &m, &pl); err != nil {
			t.Fatal(err)
		}
		ref, err := reference.Evaluate(bytes.NewReader(m.Bytes()), bytes.NewReader(pl.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		tables := readTables(t, m.Bytes(), pl.Bytes())
		for _, shards := range []int{0, 1, 2, 3} {
			t.Run(fmt.Sprintf("seed%d/shards%d", cfg.Seed, shards), func(t *testing.T) {
				p := planOf(t, defaultTexts(), queries.Names, tables, shards)
				res, err := sqlops.Run(p, tables)
				if err != nil {
					t.Fatal(err)
				}
				testkit.SameBytes(t, res.Files, ref.Answers)
				for name, want := range ref.Answers {
					if bytes.Count(want, []byte("\n")) < 2 {
						t.Errorf("%s: the reference's answer is empty: the test checks nothing", name)
					}
				}
			})
		}
	}
}

// TestKeyedOperatorsShareTables: the four default queries' keyed
// operators of one key in the shard (q1's distinct, q2's aggregate, the
// semi-joins of q3 and q4) keep their keys in one table per instance, as
// today's MatchTable: fewer keys in all than a table each, the same
// answers.
func TestKeyedOperatorsShareTables(t *testing.T) {
	_, _, tables := generated(t, 3000, 5)
	p := planOf(t, defaultTexts(), queries.Names, tables, 2)
	shared, sharedKeys, err := sqlops.RunKeys(p, tables, false)
	if err != nil {
		t.Fatal(err)
	}
	own, ownKeys, err := sqlops.RunKeys(p, tables, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range queries.Names {
		if !bytes.Equal(shared.Files[name], own.Files[name]) {
			t.Errorf("%s differs with a table per operator", name)
		}
	}
	// The tokens of q1's distinct and of q3's and q4's sets are among
	// q2's groups' matches (most of them: a match's players are there),
	// so shared they are counted once.
	if sharedKeys >= ownKeys {
		t.Errorf("shared tables hold %d keys, a table each %d: nothing much is shared", sharedKeys, ownKeys)
	}
	t.Logf("keys: %d in shared tables, %d in a table per operator", sharedKeys, ownKeys)
}

// generated is a dataset of n matches generated from seed: its two
// files' bytes and their tables (readTables).
func generated(t testing.TB, n, seed int64) (matches, players []byte, tables map[string]*exec.Table) {
	t.Helper()
	var m, pl bytes.Buffer
	if _, err := datagen.Generate(datagen.Config{Matches: n, Seed: seed}, &m, &pl); err != nil {
		t.Fatal(err)
	}
	return m.Bytes(), pl.Bytes(), readTables(t, m.Bytes(), pl.Bytes())
}
