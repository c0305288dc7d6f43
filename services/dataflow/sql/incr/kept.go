package incr

import (
	"math/bits"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// keptRows are the rows a semi-join keeps by key slot (a left row
// waiting for its key, or every left row when its subquery retracts):
// millions of small rows, so held as columns that grow, each row its
// index in them (its id), with no structure of its own. A slot's rows
// are a list linked through next, the last added first (their ids
// descending: one int32 per slot, no tail); a row let go (clear) is marked dead, its values held
// until the dead rows outnumber the live ones, when the live rows are
// moved down in their order (compact). Weights are int64s beside the
// rows, none until one is not 1.
type keptRows struct {
	cols    []column
	weights []int64  // per row: its weight; nil: all 1
	next    []int32  // per row: the next of its slot's list, +1 (0: the last)
	dead    []uint64 // a bit per row: let go
	head    []int32  // per slot: its last row added, +1 (0: none)
	live    int      // the rows in the lists
}

// column is the values of one column of the kept rows. A text column
// is first a dictionary's codes, two bytes a row (a civilization, a
// map: a few distinct values in millions of rows), and its texts one
// after the other once it has more than maxWords distinct values.
type column struct {
	// v is the values but a coded text column's, as exec holds them (its
	// N the rows); its Null is the NULL flags of every column (nil: none
	// is NULL).
	v     exec.Vec
	words *words   // Text: the dictionary of codes; nil: v's texts
	codes []uint16 // Text, with words: row i's is words' codes[i]
}

// maxWords is the most distinct values of a text column held as codes.
const maxWords = 1 << 12

// words is a text column's distinct values, each its code (its place).
type words struct {
	code  map[string]uint16
	texts [][]byte
}

// codeOf is t's code, added when new; false when the dictionary is full.
func (w *words) codeOf(t []byte) (uint16, bool) {
	if c, ok := w.code[string(t)]; ok {
		return c, true
	}
	if len(w.texts) == maxWords {
		return 0, false
	}
	c := uint16(len(w.texts))
	w.code[string(t)] = c
	w.texts = append(w.texts, slices.Clone(t))
	return c, true
}

// plain makes a coded text column its texts one after the other.
func (c *column) plain() {
	for _, x := range c.codes {
		c.appendText(c.words.texts[x])
	}
	c.words, c.codes = nil, nil
}

// appendText appends a text to v.
func (c *column) appendText(t []byte) {
	c.v.Data = append(c.v.Data, t...)
	c.v.Ends = append(c.v.Ends, uint32(len(c.v.Data)))
	c.v.N++
}

func newKeptRows(cols []plan.Column) *keptRows {
	k := &keptRows{cols: make([]column, len(cols))}
	for i, c := range cols {
		k.cols[i].v.Type = c.Type
	}
	return k
}

// rows is the rows held, live and dead.
func (k *keptRows) rows() int { return len(k.next) }

// grow makes the lists of slots up to n, empty.
func (k *keptRows) grow(n int) {
	if d := n - len(k.head); d > 0 {
		k.head = append(k.head, make([]int32, d)...)
	}
}

// add appends rows of b (of the kept columns, then the weight) to the
// lists of their slots sl (per row of rows).
func (k *keptRows) add(b *exec.Batch, rows []int32, sl []int32) {
	from := k.rows()
	for c := range k.cols {
		k.cols[c].add(b.Cols[c], rows, from)
	}
	ws := b.Cols[len(b.Cols)-1]
	for j, i := range rows {
		x, s, ok := ws.Nums[i].Unscaled()
		if !ok || s != 0 {
			panic("incr: a weight that is not a whole int64")
		}
		if x != 1 && k.weights == nil {
			k.weights = make([]int64, from+j, from+len(rows))
			for w := range k.weights {
				k.weights[w] = 1
			}
		}
		if k.weights != nil {
			k.weights = append(k.weights, x)
		}
	}
	for j, s := range sl {
		k.link(s, int32(from+j))
	}
	if n := (k.rows() + 63) / 64; n > len(k.dead) {
		k.dead = append(k.dead, make([]uint64, n-len(k.dead))...)
	}
}

// link puts the row id, just added, first in slot s's list.
func (k *keptRows) link(s, id int32) {
	k.next = append(k.next, k.head[s])
	k.head[s] = id + 1
	k.live++
}

// add appends the values of rows of v, the column's rows from on.
func (c *column) add(v *exec.Vec, rows []int32, from int) {
	if v.Null != nil && c.v.Null == nil && slices.ContainsFunc(rows, func(i int32) bool { return v.Null[i] }) {
		c.v.Null = make([]bool, from, from+len(rows))
	}
	if c.v.Null != nil {
		for _, i := range rows {
			c.v.Null = append(c.v.Null, v.IsNull(int(i)))
		}
	}
	switch c.v.Type {
	case plan.Text:
		if from == 0 && c.words == nil && c.v.Ends == nil {
			c.words = &words{code: map[string]uint16{}}
		}
		for _, i := range rows {
			if c.words != nil {
				if x, ok := c.words.codeOf(v.Text(int(i))); ok {
					c.codes = append(c.codes, x)
					continue
				}
				c.plain() // too many distinct values: the texts themselves
			}
			c.appendText(v.Text(int(i)))
		}
	case plan.Number:
		for _, i := range rows {
			c.v.Nums = append(c.v.Nums, v.Nums[i])
		}
		c.v.N += len(rows)
	case plan.Bool:
		for _, i := range rows {
			c.v.Bools = append(c.v.Bools, v.Bools[i])
		}
		c.v.N += len(rows)
	}
}

// appendTo appends slot s's rows to dst, the last added first.
func (k *keptRows) appendTo(dst []int32, s int32) []int32 {
	for x := k.head[s]; x != 0; x = k.next[x-1] {
		dst = append(dst, x-1)
	}
	return dst
}

// clear empties slot s's list, its rows let go.
func (k *keptRows) clear(s int32) {
	for x := k.head[s]; x != 0; x = k.next[x-1] {
		k.dead[(x-1)/64] |= 1 << ((x - 1) % 64)
		k.live--
	}
	k.head[s] = 0
	if dead := k.rows() - k.live; dead > k.live+compactSlack {
		k.compact()
	}
}

// compact moves the live rows down, in their order, over the dead ones.
func (k *keptRows) compact() {
	ids := k.liveIDs()
	moved := make([]int32, k.rows()) // per old row: its new id, +1
	for n, id := range ids {
		moved[id] = int32(n) + 1
	}
	for c := range k.cols {
		k.cols[c] = k.cols[c].gathered(ids)
	}
	if k.weights != nil {
		ws := make([]int64, len(ids))
		for n, id := range ids {
			ws[n] = k.weights[id]
		}
		k.weights = ws
	}
	next := make([]int32, len(ids))
	for n, id := range ids {
		if x := k.next[id]; x != 0 {
			next[n] = moved[x-1]
		}
	}
	k.next = next
	for s := range k.head {
		if k.head[s] != 0 {
			k.head[s] = moved[k.head[s]-1]
		}
	}
	k.dead = make([]uint64, (len(ids)+63)/64)
}

// gathered is the column of the rows ids only, in their order: a coded
// text column's codes, else exec's gather of its values as a Vec (a NULL
// flag per row when any of those is NULL).
func (c *column) gathered(ids []int32) column {
	if c.words == nil {
		g := (&exec.Batch{N: c.v.N, Cols: []*exec.Vec{&c.v}}).Rows(ids).Cols[0]
		if g.Null != nil && !slices.Contains(g.Null, true) {
			g.Null = nil
		}
		return column{v: *g}
	}
	out := column{v: exec.Vec{Type: c.v.Type}, words: c.words, codes: make([]uint16, len(ids))}
	for n, id := range ids {
		out.codes[n] = c.codes[id]
	}
	if c.v.Null != nil && slices.ContainsFunc(ids, func(i int32) bool { return c.v.Null[i] }) {
		out.v.Null = make([]bool, len(ids))
		for n, id := range ids {
			out.v.Null[n] = c.v.Null[id]
		}
	}
	return out
}

// gather is the rows ids (ascending) as a batch of the kept columns and
// their weights.
func (k *keptRows) gather(ids []int32) *exec.Batch {
	b := &exec.Batch{N: len(ids)}
	for c := range k.cols {
		g := k.cols[c].gathered(ids)
		if g.words != nil {
			g.plain()
		}
		b.Cols = append(b.Cols, &g.v)
	}
	ws := make([]int64, len(ids))
	for n, id := range ids {
		ws[n] = 1
		if k.weights != nil {
			ws[n] = k.weights[id]
		}
	}
	b.Cols = append(b.Cols, weightVec(ws))
	return b
}

// bytes is about the memory of the rows and lists.
func (k *keptRows) bytes() int64 {
	n := 8*int64(cap(k.weights)+cap(k.dead)) + 4*int64(cap(k.next)+cap(k.head))
	for _, c := range k.cols {
		n += c.v.Bytes() + 2*int64(cap(c.codes))
		if c.words != nil {
			for _, t := range c.words.texts {
				n += int64(len(t)) + 2*16 + 8 // the text, its two headers, the map's entry
			}
		}
	}
	return n
}

// isDead reports whether row id was let go.
func (k *keptRows) isDead(id int32) bool { return k.dead[id/64]&(1<<(id%64)) != 0 }

// liveRanks is, per word of a dead bitset, the live rows before it: a
// live row's rank among them (of) is its word's and those below it in
// the word.
type liveRanks []int32

// ranks is the live rows' ranks.
func (k *keptRows) ranks() liveRanks {
	r := make(liveRanks, len(k.dead))
	n := int32(0)
	for w, d := range k.dead {
		r[w] = n
		n += int32(bits.OnesCount64(^d))
	}
	return r
}

// of is live row id's rank, dead its bitset.
func (r liveRanks) of(id int32, dead []uint64) int32 {
	below := ^dead[id/64] & (1<<(id%64) - 1)
	return r[id/64] + int32(bits.OnesCount64(below))
}

// liveIDs is the live rows, ascending.
func (k *keptRows) liveIDs() []int32 {
	ids := make([]int32, 0, k.live)
	for w, d := range k.dead {
		for live := ^d; live != 0; live &= live - 1 {
			if id := w*64 + bits.TrailingZeros64(live); id < k.rows() {
				ids = append(ids, int32(id))
			}
		}
	}
	return ids
}
