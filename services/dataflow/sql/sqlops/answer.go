package sqlops

import (
	"fmt"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
)

// Answer is what the SQL engine answers to a job's queries over tables
// (by name) in this process: the queries planned on shape's tasks as the
// gateway plans a job's (sqljob.Plan, each table's columns its catalog),
// and the physical plan run by Run. It returns each query's NAME.csv, by
// name. The end-to-end tests and the chaos harness hold a cluster's
// results to it.
func Answer(queries []sqljob.Query, tables map[string]*exec.Table, shape physical.Shape) (map[string][]byte, error) {
	cat := make(sql.Catalog, len(tables))
	for name, t := range tables {
		cat[name] = t.Columns
	}
	job, err := sqljob.Plan(queries, cat, shape)
	if err != nil {
		return nil, fmt.Errorf("plan the queries: %w", err)
	}
	res, err := Run(job.Plan, tables)
	if err != nil {
		return nil, fmt.Errorf("run the plan: %w", err)
	}
	return res.Files, nil
}
