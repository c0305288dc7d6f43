package exec

import (
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// rowChunks holds rows appended batch after batch (a join's right rows)
// in chunks of at most chunkRows rows, row r in chunk r>>chunkShift at
// r&chunkMask. A join's right rows are the largest state a job holds
// (every player row of a shard, for a self-join of match_players), and
// appended to one Vec per column they were copied whole each time it
// grew: the copies, and the fresh memory each grown slice cleared and
// faulted in, cost more than the join's hashing and probing on the full
// dataset (issue 41: civ_matchups_1v1 spent 9.4 of its 31 CPU-seconds
// in them). In chunks, a row once added does not move: a full chunk is
// left as it is and the next made at its size, so only the first chunk
// (which a small join never leaves) grows by doubling.
type rowChunks struct {
	types  []plan.Type
	chunks [][]*builder // per chunk, per column
	n      int
	// skip, when set, marks the columns not kept: nothing of them is
	// held (a chunk's builder of one is nil), and they read as NULL.
	skip []bool
}

const (
	chunkShift = 16
	chunkRows  = 1 << chunkShift
	chunkMask  = chunkRows - 1
)

func newRowChunks(cols []plan.Column) *rowChunks {
	c := &rowChunks{}
	for _, col := range cols {
		c.types = append(c.types, col.Type)
	}
	return c
}

// add appends b's rows, of the chunks' columns.
func (c *rowChunks) add(b *Batch) {
	for from := 0; from < b.N; {
		if c.n&chunkMask == 0 && c.n/chunkRows == len(c.chunks) {
			c.chunks = append(c.chunks, c.fresh())
		}
		last := c.chunks[len(c.chunks)-1]
		to := min(b.N, from+(chunkRows-c.n&chunkMask))
		for k, bl := range last {
			if bl != nil {
				bl.rows(b.Cols[k], from, to)
			}
		}
		c.n += to - from
		from = to
	}
}

// fresh is a new chunk's builders: empty for the first (it grows as the
// rows come), else at a full chunk's rows and, for a text column, the
// bytes of the chunk before it and an eighth more.
func (c *rowChunks) fresh() []*builder {
	out := make([]*builder, len(c.types))
	var prev []*builder
	capacity := 0
	if len(c.chunks) > 0 {
		prev, capacity = c.chunks[len(c.chunks)-1], chunkRows
	}
	for k, t := range c.types {
		if c.skipped(k) {
			continue
		}
		out[k] = newBuilder(t, capacity)
		if t == plan.Text && prev != nil {
			n := len(prev[k].v.Data)
			out[k].v.Data = make([]byte, 0, n+n/8)
		}
	}
	return out
}

// gather returns the rows at rows, -1 a row of NULLs (gather's); of
// the columns read does not mark (nil: every one read), unread Vecs.
func (c *rowChunks) gather(rows []int32, read []bool) *Batch {
	out := &Batch{N: len(rows), Cols: make([]*Vec, len(c.types))}
	vs := make([]*Vec, len(c.chunks))
	for k, t := range c.types {
		if read != nil && !read[k] || c.skipped(k) {
			out.Cols[k] = unread(t, len(rows))
			continue
		}
		for i, ch := range c.chunks {
			vs[i] = ch[k].v
		}
		out.Cols[k] = gatherFrom(t, vs, chunkShift, rows)
	}
	return out
}

// batch is every row, in order, as one Batch (a snapshot's, a spill's):
// the one chunk's Vecs as they are, else a copy; a column not kept, NULLs
// (unread's).
func (c *rowChunks) batch() *Batch {
	b := &Batch{N: c.n, Cols: make([]*Vec, len(c.types))}
	for k, t := range c.types {
		switch {
		case c.skipped(k):
			b.Cols[k] = unread(t, c.n)
		case len(c.chunks) == 0:
			b.Cols[k] = &Vec{Type: t}
		case len(c.chunks) == 1:
			b.Cols[k] = c.chunks[0][k].v
		default:
			bl := newBuilder(t, c.n)
			for _, ch := range c.chunks {
				bl.all(ch[k].v)
			}
			b.Cols[k] = bl.v
		}
	}
	return b
}

// chunkBatch is chunk i's rows as a Batch, its Vecs as they are; a
// column not kept, NULLs.
func (c *rowChunks) chunkBatch(i int) *Batch {
	n := min(chunkRows, c.n-i*chunkRows)
	b := &Batch{N: n, Cols: make([]*Vec, len(c.types))}
	for k, t := range c.types {
		if c.skipped(k) {
			b.Cols[k] = unread(t, n)
			continue
		}
		b.Cols[k] = c.chunks[i][k].v
	}
	return b
}

// bytes is about the memory the rows take.
func (c *rowChunks) bytes() int64 {
	var n int64
	for _, ch := range c.chunks {
		for _, bl := range ch {
			if bl != nil {
				n += bl.v.Bytes()
			}
		}
	}
	return n
}

// skipped says whether column k is not kept.
func (c *rowChunks) skipped(k int) bool { return c.skip != nil && c.skip[k] }

// anyNull says whether any of vs has NULLs.
func anyNull(vs []*Vec) bool {
	return slices.ContainsFunc(vs, func(v *Vec) bool { return v.Null != nil })
}
