package sql

import (
	"strconv"

	"github.com/wololo/wololo/services/dataflow/sql/parse"
)

// offsetClause binds OFFSET m (0: none): a whole number of rows the
// Limit node skips before its LIMIT's (PostgreSQL's OFFSET, with or
// without LIMIT; a ROW_NUMBER numbers the rows before they are skipped,
// so the first row after an OFFSET m is m + 1).
func (lv *level) offsetClause(sel *parse.Select) (int64, error) {
	if sel.Offset == nil {
		return 0, nil
	}
	if lit, ok := sel.Offset.(*parse.Literal); ok && lit.Kind == parse.NumberLit && isWhole(lit.Text) {
		if n, err := strconv.ParseInt(lit.Text, 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, lv.err(sel.OffsetPos, "OFFSET", "OFFSET takes a whole number")
}
