package sqlops

import (
	"math/rand/v2"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
)

// RunShuffled is Run with the ready instances taken in a random order,
// and each instance of an operator with state restarted from its snapshot
// before an arrival when restart says so.
func RunShuffled(p *physical.Plan, tables map[string]*exec.Table, r *rand.Rand, restart func(op, instance int) bool) (*Result, error) {
	res, _, err := run(p, tableFeeds(p, tables, nil), options{pick: r.IntN, restart: restart})
	return res, err
}

// RunBudget is Run with every instance held to budget b.
func RunBudget(p *physical.Plan, tables map[string]*exec.Table, b Budget, order ...string) (*Result, error) {
	res, _, err := run(p, tableFeeds(p, tables, order), options{budget: b})
	return res, err
}

// RunKeys runs p and returns the number of keys in its keyed operators'
// tables at the end; own: a table per operator, not per Plan.Tables entry.
func RunKeys(p *physical.Plan, tables map[string]*exec.Table, own bool) (*Result, int, error) {
	return run(p, tableFeeds(p, tables, nil), options{own: own})
}

// ChunkRanges is chunkRanges, for its test.
var ChunkRanges = chunkRanges

// ToSelectedRows is toRows of the rows of b at rows, or (rows nil) of its
// run start..end-1, with routes.
func ToSelectedRows(b *exec.Batch, rows []int32, start, end int, routes []uint64) *wololov1.RowBatch {
	return toRows(b, selectionOf(rows, start, end), routes)
}

// WireWriter is a wireWriter kept between batches.
type WireWriter struct{ w wireWriter }

// Append is what the wire codec writes of the rows of b at rows, or
// (rows nil) of its run start..end-1, with routes.
func (w *WireWriter) Append(dst []byte, b *exec.Batch, rows []int32, start, end int, routes []uint64) []byte {
	return w.w.appendRows(dst, b, selectionOf(rows, start, end), routes)
}

func selectionOf(rows []int32, start, end int) selection {
	if rows != nil {
		return selection{rows: rows, n: len(rows)}
	}
	return selection{start: start, n: end - start}
}

// ReadWireRows is readRows.
var ReadWireRows = readRows
