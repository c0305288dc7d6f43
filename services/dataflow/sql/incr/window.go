package incr

import (
	"fmt"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// checkWindow refuses a window function (plan.Window) in a standing
// query: its values change for every row of a partition that a new row
// joins (a rank, a running sum), which this package does not recompute
// yet; a job refuses it when it is created rather than publish a wrong
// version.
func checkWindow(n *plan.Node) error {
	if n.Op != plan.Window {
		return nil
	}
	names := make([]string, len(n.WinFuncs))
	for i, f := range n.WinFuncs {
		names[i] = strings.ToUpper(f.Func)
	}
	return fmt.Errorf("%w: window function %s OVER (...) (a new row changes the values of every row of its partition, which a standing query does not recompute yet): run it as a batch job",
		ErrUnsupported, strings.Join(names, ", "))
}
