package incr

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// A change set (a Z-set, as differential dataflow calls it) is batches
// of rows whose last column is each row's weight: how many copies of the
// row the change adds (+n) or takes away (-n). The operators pass the
// weight column through exec's operators as one more column, which no
// expression of the plan reads (expressions refer to their input's
// columns by position, and the weight comes after them all).
type zset []*exec.Batch

// weightCol is the column a change's weight is carried in.
var weightCol = plan.Column{Name: "diff", Type: plan.Number}

// withWeight is cols and the weight column.
func withWeight(cols []plan.Column) []plan.Column {
	return append(slices.Clone(cols), weightCol)
}

// weightVec is a weight column of the weights.
func weightVec(w []int64) *exec.Vec {
	v := &exec.Vec{Type: plan.Number, N: len(w), Nums: make([]value.Dec, len(w))}
	for i, x := range w {
		v.Nums[i] = value.Int(x)
	}
	return v
}

// constWeights is n weights w.
func constWeights(n int, w int64) *exec.Vec {
	ws := make([]int64, n)
	for i := range ws {
		ws[i] = w
	}
	return weightVec(ws)
}

// weights reads b's weight column (its last).
func weights(b *exec.Batch) []int64 {
	v := b.Cols[len(b.Cols)-1]
	out := make([]int64, b.N)
	for i := range out {
		x, s, ok := v.Nums[i].Unscaled()
		if !ok || s != 0 {
			panic(fmt.Sprintf("incr: weight %s is not a whole int64", v.Nums[i]))
		}
		out[i] = x
	}
	return out
}

// weighted is b (rows without a weight) with every row's weight w.
func weighted(b *exec.Batch, w int64) *exec.Batch {
	return &exec.Batch{N: b.N, Cols: append(slices.Clone(b.Cols), constWeights(b.N, w))}
}

// unweighted is b without its weight column.
func unweighted(b *exec.Batch) *exec.Batch {
	return &exec.Batch{N: b.N, Cols: b.Cols[:len(b.Cols)-1]}
}

// keyOf appends the key of row i over b's first cols columns: exec's
// hash key (a number without its trailing zeros), and, when exact, each
// number's scale after it, so that rows that are written differently
// (2034 and 2034.0) have different keys.
func keyOf(dst []byte, b *exec.Batch, cols, i int, exact bool) []byte {
	for _, v := range b.Cols[:cols] {
		dst = exec.AppendKey(dst, v, i)
		if exact && v.Type == plan.Number && !v.IsNull(i) {
			dst = binary.AppendVarint(dst, int64(v.Nums[i].Scale()))
		}
	}
	return dst
}

// consolidate adds up the weights of equal rows (equal written, over the
// cols columns before the weight) and drops those whose weight is 0: the
// change a version shows, each row once.
func consolidate(z zset, cols []plan.Column) *exec.Batch {
	all := exec.Concat(withWeight(cols), z)
	w := weights(all)
	index := map[string]int{}
	var first []int32 // per distinct row: its first row in all
	var sum []int64
	var key []byte
	for i := range all.N {
		key = keyOf(key[:0], all, len(cols), i, true)
		k, ok := index[string(key)]
		if !ok {
			k = len(first)
			index[string(key)] = k
			first = append(first, int32(i))
			sum = append(sum, 0)
		}
		sum[k] += w[i]
	}
	var rows []int32
	var ws []int64
	for k, r := range first {
		if sum[k] != 0 {
			rows, ws = append(rows, r), append(ws, sum[k])
		}
	}
	out := all.Rows(rows)
	out.Cols[len(out.Cols)-1] = weightVec(ws)
	return out
}

// ref is a stored row: its batch in a store and its row there.
type ref struct{ b, r int32 }

// store keeps rows (with their weights) an operator must emit later: the
// pending rows of a semi-join, the rows of a maintained set. Rows are
// stored as the batches they were gathered into (copies, never an
// input's batch), without their weight column: a batch's weights are
// int64s beside it, none when they are all 1 (a row that waits mostly
// is one copy), where a weight column's exact decimals cost 24 bytes a
// row. A batch is let go once none of its rows is live.
type store struct {
	batches []*exec.Batch // the rows, without their weights
	weights [][]int64     // per batch: its rows' weights; nil: all 1
	live    []int32       // per batch: its rows still referred to
	rows    int           // the rows of the batches held
	liveN   int           // the live rows
	size    int64         // about the bytes of the batches held (storedBytes)
}

// add stores the rows of b (with their weight column, the rows owned by
// the store from now on) and returns the ref of its row 0; row i's is
// that with r = i.
func (s *store) add(b *exec.Batch) ref {
	s.batches, s.weights, s.live = append(s.batches, nil), append(s.weights, nil), append(s.live, 0)
	i := len(s.batches) - 1
	s.put(i, b, b.N)
	return ref{b: int32(i)}
}

// put stores the rows of b (with their weight column) as batch i, of
// which live rows are live.
func (s *store) put(i int, b *exec.Batch, live int) {
	ws := weights(b)
	if !slices.ContainsFunc(ws, func(w int64) bool { return w != 1 }) {
		ws = nil
	}
	b = &exec.Batch{N: b.N, Cols: slices.Clone(b.Cols[:len(b.Cols)-1])} // not holding the weights' Vec
	s.batches[i], s.weights[i], s.live[i] = b, ws, int32(live)
	s.rows += b.N
	s.size += storedBytes(b, ws)
	s.liveN += live
}

// drop lets a stored row go.
func (s *store) drop(r ref) {
	s.liveN--
	if s.live[r.b]--; s.live[r.b] == 0 {
		s.rows -= s.batches[r.b].N
		s.size -= storedBytes(s.batches[r.b], s.weights[r.b])
		s.batches[r.b], s.weights[r.b] = nil, nil
	}
}

// byRef is the indexes of refs in the order of their refs (by batch,
// then row): gather's order.
func byRef(refs []ref) []int {
	order := make([]int, len(refs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		a, b := refs[x], refs[y]
		if a.b != b.b {
			return int(a.b - b.b)
		}
		return int(a.r - b.r)
	})
	return order
}

// appendN appends n copies of x to dst.
func appendN(dst []int32, x int32, n int) []int32 {
	for range n {
		dst = append(dst, x)
	}
	return dst
}

// weight is stored row r's weight.
func (s *store) weight(r ref) int64 {
	if ws := s.weights[r.b]; ws != nil {
		return ws[r.r]
	}
	return 1
}

// weighted is stored batch i with its weight column, as it was added.
func (s *store) weighted(i int) *exec.Batch {
	b := s.batches[i]
	if ws := s.weights[i]; ws != nil {
		return &exec.Batch{N: b.N, Cols: append(slices.Clone(b.Cols), weightVec(ws))}
	}
	return weighted(b, 1)
}

// gather is the stored rows of refs, each with the weight of ws (nil:
// its stored weight), in the order of refs sorted (by batch, then row).
func (s *store) gather(cols []plan.Column, refs []ref, ws []int64) *exec.Batch {
	order := byRef(refs)
	var parts []*exec.Batch
	var rows []int32
	for k, i := range order {
		rows = append(rows, refs[i].r)
		if k+1 == len(order) || refs[order[k+1]].b != refs[i].b {
			parts = append(parts, s.batches[refs[i].b].Rows(rows))
			rows = rows[:0]
		}
	}
	out := exec.Concat(cols, parts)
	sorted := make([]int64, len(order))
	for k, i := range order {
		if ws != nil {
			sorted[k] = ws[i]
		} else {
			sorted[k] = s.weight(refs[i])
		}
	}
	out.Cols = append(out.Cols, weightVec(sorted))
	return out
}
