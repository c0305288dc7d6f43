package physical_test

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
)

// catalog is the default tables' columns: the generator's headers.
func catalog() sql.Catalog {
	m, p := datagen.Headers()
	return sql.Catalog{"matches": m, "match_players": p}
}

// TestGoldenPlans plans the job scripts of testdata/plans.txt and compares
// every physical plan with testdata/plans.golden. The commands:
//
//	shards N          the default topology with N shard replicas
//	uniform N         every task of it but the gateway at N replicas
//	alone             the gateway's task alone (deploy.Topology.Alone)
//	query NAME SQL    defines a query (one line); q1..q4 are queries/
//	plan NAME...      the physical plan of a job of those queries
//
// Rewrite the golden file with -update after a change meant to alter
// the plans, and review it.
func TestGoldenPlans(t *testing.T) {
	top := deploy.Default()
	defined := map[string]string{}
	testkit.GoldenScript(t, "plans.txt", "plans.golden", func(w io.Writer, c testkit.Command) error {
		switch c.Args[0] {
		case "alone":
			top = deploy.Default().Alone()
			return nil
		case "shards", "uniform":
			n, err := strconv.Atoi(c.Args[1])
			if err != nil {
				return err
			}
			if c.Args[0] == "uniform" {
				top = deploy.Default().Uniform(n)
				return nil
			}
			top, err = deploy.Default().WithReplicas(map[string]int{"shard": n})
			return err
		case "query":
			if len(c.Args) < 3 {
				return fmt.Errorf("want: query NAME SQL")
			}
			defined[c.Args[1]] = strings.TrimSpace(strings.TrimPrefix(c.Text, "query "+c.Args[1]))
			return nil
		case "plan":
			shape, err := physical.ShapeOf(top)
			if err != nil {
				return err
			}
			// As the gateway plans a job of the two files
			// (sqljob.Check): matches.csv is uploaded first.
			shape.Arrival = []string{"matches", "match_players"}
			var job []physical.Logical
			for _, name := range c.Args[1:] {
				text, ok := defined[name]
				if !ok {
					if text, ok = queries.Text(name); !ok {
						return fmt.Errorf("no query %s", name)
					}
				}
				root, err := sql.Compile(text, catalog())
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				job = append(job, physical.Logical{Name: name, Plan: root})
			}
			p, err := physical.Build(job, shape)
			if err != nil {
				return err
			}
			if err := physical.Check(p); err != nil {
				return fmt.Errorf("the plan breaks an invariant: %w\n%s", err, p)
			}
			_, err = io.WriteString(w, p.String())
			return err
		}
		return fmt.Errorf("unknown command %q", c.Args[0])
	})
}
