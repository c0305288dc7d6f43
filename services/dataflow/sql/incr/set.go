package incr

import (
	"slices"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// rowSet is a multiset of rows: per distinct row (its key, exact or as
// exec compares them, see keyOf) its count and one copy of it. It is the
// state of a DISTINCT whose input retracts rows and of the answer's
// rows; plain data (a map of keys, slices, stored batches) that a
// snapshot can write.
type rowSet struct {
	cols   []plan.Column
	exact  bool
	index  map[string]int32 // key -> entry
	keys   []string         // per entry: its key
	counts []int64          // per entry: its row's copies
	refs   []ref            // per entry: its row, stored
	free   []int32          // entries let go, to be used again
	total  int64            // the copies of every row
	keyLen int64            // the bytes of the keys in the index
	st     store
	last   []change // apply's, for release
}

func newRowSet(cols []plan.Column, exact bool) *rowSet {
	return &rowSet{cols: cols, exact: exact, index: map[string]int32{}}
}

// change is an entry that apply changed, and its count before.
type change struct {
	entry  int32
	before int64
}

// apply adds the changes' weights to their rows' counts, storing the
// rows new to it, and returns the entries it changed, each once, in the
// order first changed.
func (s *rowSet) apply(z zset) []change {
	var out []change
	seen := map[int32]bool{}
	var key []byte
	n := len(s.cols)
	for _, b := range z {
		w := weights(b)
		var fresh []int32  // the rows of b new to the set
		var freshE []int32 // their entries
		for i := range b.N {
			key = keyOf(key[:0], b, n, i, s.exact)
			e, ok := s.index[string(key)]
			if !ok {
				e = s.newEntry(string(key))
				fresh, freshE = append(fresh, int32(i)), append(freshE, e)
			}
			if !seen[e] {
				seen[e] = true
				out = append(out, change{entry: e, before: s.counts[e]})
			}
			s.counts[e] += w[i]
			s.total += w[i]
		}
		if len(fresh) > 0 {
			at := s.st.add(b.Rows(fresh))
			for k, e := range freshE {
				s.refs[e] = ref{b: at.b, r: int32(k)}
			}
		}
	}
	s.last = out
	return out
}

// newEntry makes an entry for key, count 0.
func (s *rowSet) newEntry(key string) int32 {
	var e int32
	if k := len(s.free); k > 0 {
		e, s.free = s.free[k-1], s.free[:k-1]
		s.keys[e], s.counts[e] = key, 0
	} else {
		e = int32(len(s.keys))
		s.keys, s.counts, s.refs = append(s.keys, key), append(s.counts, 0), append(s.refs, ref{})
	}
	s.index[key] = e
	s.keyLen += int64(len(key))
	return e
}

func (s *rowSet) count(e int32) int64 { return s.counts[e] }
func (s *rowSet) ref(e int32) ref     { return s.refs[e] }

// release lets go the entries the last apply brought to 0, and stores
// the live rows again, together, when most stored rows are dead (its
// cost, the live rows, is then paid for by the dead ones).
func (s *rowSet) release() {
	for _, c := range s.last {
		if e := c.entry; s.counts[e] == 0 {
			delete(s.index, s.keys[e])
			s.keyLen -= int64(len(s.keys[e]))
			s.st.drop(s.refs[e])
			s.keys[e] = ""
			s.free = append(s.free, e)
		}
	}
	s.last = nil
	if s.st.rows > 2*s.st.liveN+compactSlack {
		s.compact()
	}
}

// compactSlack is how many dead rows a store may hold beyond as many as
// its live ones before it is compacted.
const compactSlack = 64

// compact stores the live rows as one batch.
func (s *rowSet) compact() {
	live := s.liveEntries()
	slices.SortFunc(live, func(x, y int32) int {
		a, b := s.refs[x], s.refs[y]
		if a.b != b.b {
			return int(a.b - b.b)
		}
		return int(a.r - b.r)
	})
	refs := make([]ref, len(live))
	for k, e := range live {
		refs[k] = s.refs[e]
	}
	b := s.st.gather(s.cols, refs, nil) // in refs' order: they are sorted
	s.st = store{}
	at := s.st.add(b)
	for k, e := range live {
		s.refs[e] = ref{b: at.b, r: int32(k)}
	}
}

// liveEntries are the entries in the index.
func (s *rowSet) liveEntries() []int32 {
	out := make([]int32, 0, len(s.index))
	for _, e := range s.index {
		out = append(out, e)
	}
	return out
}

// rows is every row of the set, each as many times as its count (at
// most most times; -1: no bound), without weights; in an order of its
// own.
func (s *rowSet) rows(most int64) *exec.Batch {
	var refs []ref
	var ws []int64
	for _, e := range s.liveEntries() {
		if c := s.counts[e]; c > 0 {
			if most >= 0 {
				c = min(c, most)
			}
			refs, ws = append(refs, s.refs[e]), append(ws, c)
		}
	}
	b := s.st.gather(s.cols, refs, ws)
	var rows []int32
	for i, w := range weights(b) {
		for range w {
			rows = append(rows, int32(i))
		}
	}
	return unweighted(b.Rows(rows))
}
