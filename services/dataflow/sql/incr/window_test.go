package incr_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/rewrite"
)

// TestWindowsRefused: a standing query of a window function, anywhere
// in it (over a GROUP BY, in a subquery), is refused by Check and New
// naming the function, never answered with a version whose ranks a
// later row should have changed; q4's ROW_NUMBER after its LIMIT is
// maintained as before.
func TestWindowsRefused(t *testing.T) {
	cat := sql.Catalog{"t": {"k", "x"}}
	for _, c := range []struct{ q, says string }{
		{"SELECT k, RANK() OVER (PARTITION BY k ORDER BY x) AS r FROM t", "RANK"},
		{"SELECT k, COUNT(*) AS n, SUM(COUNT(*)) OVER () AS total FROM t GROUP BY k", "SUM"},
		{"SELECT k FROM (SELECT k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x) AS rn FROM t) s WHERE rn = 1", "ROW_NUMBER"},
		{"SELECT ROW_NUMBER() OVER (ORDER BY k) AS rn, k FROM t ORDER BY k LIMIT 3", ""},
	} {
		root, err := sql.Compile(c.q, cat)
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		root = rewrite.Optimize(root)
		err = incr.Check(root)
		_, nerr := incr.New(root)
		switch {
		case c.says == "" && (err != nil || nerr != nil):
			t.Errorf("%s: Check = %v, New = %v", c.q, err, nerr)
		case c.says != "" && (!errors.Is(err, incr.ErrUnsupported) || !strings.Contains(err.Error(), "window function "+c.says) || !errors.Is(nerr, incr.ErrUnsupported)):
			t.Errorf("%s: Check = %v, New = %v; want both refused naming %s", c.q, err, nerr, c.says)
		}
	}
}
