package exec_test

import (
	"testing"
)

// TestWindowFunctions: each window function over partitions, with and
// without ORDER BY (the default frame: peers share an aggregate's value;
// without ORDER BY, the whole partition), several OVER clauses in one
// SELECT, a window inside an expression and over a GROUP BY's output;
// the answers as PostgreSQL gives them (checked by hand) but for NULL,
// last in both directions as in DuckDB and the engine's sort, and the
// numbers' scales (docs/sql.md); ROW_NUMBER's peers ordered by every column.
func TestWindowFunctions(t *testing.T) {
	csv := "g,x,y\na,1,p\na,2,q\na,2,r\na,,s\nb,5,t\nb,3,u\nc,,v\n"
	cases := []struct{ name, q, want string }{
		{"rank functions", "SELECT g, x, y, ROW_NUMBER() OVER (PARTITION BY g ORDER BY x) AS rn, RANK() OVER (PARTITION BY g ORDER BY x) AS r, " +
			"DENSE_RANK() OVER (PARTITION BY g ORDER BY x) AS d FROM t WHERE x IS NULL OR x >= 0 ORDER BY y",
			"g,x,y,rn,r,d\na,1,p,1,1,1\na,2,q,2,2,2\na,2,r,3,2,2\na,,s,4,4,3\nb,5,t,2,2,2\nb,3,u,1,1,1\nc,,v,1,1,1\n"},
		{"running aggregates, peers share", "SELECT y, SUM(x) OVER (PARTITION BY g ORDER BY x) AS s, COUNT(*) OVER (PARTITION BY g ORDER BY x) AS n, " +
			"COUNT(x) OVER (PARTITION BY g ORDER BY x) AS c, AVG(x) OVER (PARTITION BY g ORDER BY x) AS a, MIN(y) OVER (PARTITION BY g ORDER BY x DESC) AS lo, " +
			"MAX(x) OVER (PARTITION BY g ORDER BY x) AS hi FROM t ORDER BY y",
			"y,s,n,c,a,lo,hi\np,1,1,1,1.0,p,1\nq,5,3,3,1.6666666666666667,q,2\nr,5,3,3,1.6666666666666667,q,2\ns,5,4,3,1.6666666666666667,p,2\nt,8,2,2,4.0,t,5\nu,3,1,1,3.0,t,3\nv,,1,0,,v,\n"},
		{"whole partition without ORDER BY", "SELECT y, SUM(x) OVER (PARTITION BY g) AS s, COUNT(*) OVER () AS n FROM t ORDER BY y",
			"y,s,n\np,5,7\nq,5,7\nr,5,7\ns,5,7\nt,8,7\nu,8,7\nv,,7\n"},
		{"inside an expression", "SELECT y, 100 * x / SUM(x) OVER (PARTITION BY g) AS pct FROM t WHERE g = 'b' ORDER BY y",
			"y,pct\nt,62.5000\nu,37.5000\n"},
		{"over GROUP BY", "SELECT g, COUNT(*) AS n, RANK() OVER (ORDER BY COUNT(*) DESC) AS r, SUM(COUNT(*)) OVER () AS total FROM t GROUP BY g ORDER BY g",
			"g,n,r,total\na,4,1,7\nb,2,2,7\nc,1,3,7\n"},
		{"row number whose order is not the query's", "SELECT y, ROW_NUMBER() OVER (ORDER BY y DESC) AS rn FROM t ORDER BY y LIMIT 2",
			"y,rn\np,7\nq,6\n"},
		{"over a join", "SELECT a.y, COUNT(*) OVER (PARTITION BY a.y) AS n, RANK() OVER (ORDER BY a.y DESC) AS r FROM t a JOIN t b ON a.g = b.g WHERE a.g = 'b' ORDER BY a.y",
			"y,n,r\nt,2,3\nt,2,3\nu,2,1\nu,2,1\n"},
		{"in ORDER BY only", "SELECT y FROM t ORDER BY ROW_NUMBER() OVER (ORDER BY y DESC) LIMIT 3",
			"y\nv\nu\nt\n"},
		{"ties numbered by every column", "SELECT g, y, ROW_NUMBER() OVER (PARTITION BY g ORDER BY g) AS rn FROM t ORDER BY y",
			"g,y,rn\na,p,1\na,q,2\na,r,3\na,s,4\nb,t,1\nb,u,2\nc,v,1\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(runBounded(t, csv, c.q).CSV()); got != c.want {
				t.Errorf("%s:\ngot\n%s\nwant\n%s", c.q, got, c.want)
			}
		})
	}
}
