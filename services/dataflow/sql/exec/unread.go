package exec

import (
	"sync"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// A join's output columns that no operator after it reads are not
// gathered from its rows (Join.SetRead): each is an unread Vec instead,
// its rows NULLs whose memory is one shared, read-only backing, made
// without a copy and gathered again (by a filter, by a route) without
// one. They are mostly the keys it joined on: a self-join of the players
// on their match emits the match's token twice, 16 bytes a row each, to
// an aggregate of the civilizations (a join's gathers of its rows were
// 8% of the CPU of the 26 analyst queries' job on the full dataset, 14.7
// of 181 CPU-s profiled). Which columns are read is the runner's to say (sqlops, from
// the physical plan): a column said unread that an operator then read
// would read as NULL, so it says so only of columns that no expression
// after the join names.

// unreadRows is how many rows the shared backing holds: an unread Vec of
// more (a join's output made whole, ProbeChunks' chunk 0) is a Vec of
// NULLs of its own.
const unreadRows = chunkRows

// unreadBacking is the shared backing: NULL marks, text ends, numbers and
// booleans, unreadRows of each, made at the first use.
var unreadBacking = sync.OnceValue(func() *Vec {
	b := &Vec{Null: make([]bool, unreadRows), Ends: make([]uint32, unreadRows), Nums: make([]value.Dec, unreadRows), Bools: make([]bool, unreadRows)}
	for i := range b.Null {
		b.Null[i] = true
	}
	return b
})

// unread returns an unread Vec of type t of n rows: every row NULL.
func unread(t plan.Type, n int) *Vec {
	if n > unreadRows {
		bl := newBuilder(t, n)
		for range n {
			bl.null()
		}
		return bl.v
	}
	b := unreadBacking()
	v := &Vec{Type: t, N: n, Null: b.Null[:n:n]}
	switch t {
	case plan.Text:
		v.Ends = b.Ends[:n:n]
	case plan.Number:
		v.Nums = b.Nums[:n:n]
	case plan.Bool:
		v.Bools = b.Bools[:n:n]
	}
	return v
}

// isUnread says whether v is an unread Vec on the shared backing: one
// that holds no memory of its own, and whose rows' gather is another.
func isUnread(v *Vec) bool {
	return len(v.Null) > 0 && &v.Null[0] == &unreadBacking().Null[0]
}
