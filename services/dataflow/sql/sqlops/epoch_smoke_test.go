package sqlops_test

import (
	"testing"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

func TestEpochSmoke(t *testing.T) {
	_, _, tables := generated(t, 2000, 3)
	for _, shards := range []int{0, 1, 2} {
		p := planOf(t, defaultTexts(), queries.Names, tables, shards)
		batch, err := sqlops.Run(p, tables)
		if err != nil {
			t.Fatal(err)
		}
		res, err := sqlops.RunEpochs(p, []map[string]*exec.Table{tables})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range queries.Names {
			if string(res.Files[q]) != string(batch.Files[q]) {
				t.Errorf("shards %d %s final:\n%s\nwant\n%s", shards, q, res.Files[q], batch.Files[q])
			}
			if string(res.Versions[0][q].CSV) != string(batch.Files[q]) {
				t.Errorf("shards %d %s v1 differs", shards, q)
			}
		}
	}
}
