package exec_test

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen"
)

// TestExecuteMatchesNaive compares Execute with sqlgen's naive evaluator
// (row at a time over math/big.Rat values, formatted and ordered by the
// rules of docs/sql.md) on random queries over random tables, byte for
// byte.
func TestExecuteMatchesNaive(t *testing.T) {
	runs := 1500
	if testing.Short() {
		runs = 300
	}
	for seed := range uint64(runs) {
		c := sqlgen.Generate(seed)
		if got := run(t, c); got != c.Want {
			t.Fatalf("seed %d: %s\nt:\n%s\nu:\n%s\n got %q\nwant %q", seed, c.Query, c.Tables[0].CSV, c.Tables[1].CSV, got, c.Want)
		}
	}
}

// run runs a case's query with Compile and Execute and returns its rows
// without the header (the header is checked elsewhere).
func run(t *testing.T, c sqlgen.Case) string {
	t.Helper()
	tables := map[string]*exec.Table{}
	catalog := sql.Catalog{}
	for _, tab := range c.Tables {
		tt, err := exec.ReadCSV(strings.NewReader(tab.CSV), 0)
		if err != nil {
			t.Fatal(err)
		}
		tables[tab.Name], catalog[tab.Name] = tt, tt.Columns
	}
	root, err := sql.Compile(c.Query, catalog)
	if err != nil {
		t.Fatalf("%s: %v", c.Query, err)
	}
	res, err := exec.Execute(root, tables)
	if err != nil {
		t.Fatalf("%s: %v\n%s", c.Query, err, root)
	}
	_, rows, _ := strings.Cut(string(res.CSV()), "\n")
	return rows
}
