package incr

import (
	"slices"
	"sort"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// sortedLines keeps an answer's rows in the answer's order, each with its
// line of CSV, so that a version's CSV is written without sorting the
// answer again nor formatting the rows that did not change: an epoch
// sorts its new rows alone, finds each one's place by binary search, and
// the version is the lines copied, each as many times as its row's
// count. It serves an answer whose nodes above the Sort are projections
// alone (no LIMIT, ROW_NUMBER or filter: those render the whole answer
// again, topOp.render).
//
// It is derived data, not state: a snapshot does not hold it, and it is
// made again from the set's rows the first time a version is asked of a
// topOp (after a Restore too), then kept up by each step.
type sortedLines struct {
	order []int32  // the set's entries of a positive count, in the answer's order
	lines []string // per entry: its row's CSV line ("" for an entry not in order)
}

// linear reports whether t's answer can be kept as sortedLines: only
// projections above its Sort.
func (t *topOp) linear() bool {
	for _, n := range t.upper {
		if n.Op != plan.Project {
			return false
		}
	}
	return true
}

// answerCSV is the current answer's CSV, as exec.Result's CSV writes it;
// ok is false when t's answer is not kept as sortedLines (see linear).
func (t *topOp) answerCSV() (csv []byte, ok bool, err error) {
	if !t.linear() {
		return nil, false, nil
	}
	if t.lines == nil {
		s := &sortedLines{}
		if err := s.add(t, t.set.liveEntries()); err != nil {
			return nil, false, err
		}
		t.lines = s
	}
	size := 0
	for _, e := range t.lines.order {
		size += len(t.lines.lines[e]) * int(t.set.counts[e])
	}
	out := exec.AppendCSVHeader(make([]byte, 0, size+64), t.root.Output)
	for _, e := range t.lines.order {
		for range t.set.counts[e] {
			out = append(out, t.lines.lines[e]...)
		}
	}
	return out, true, nil
}

// update takes the set's changes of an apply, before its release: the
// entries whose count became positive enter the order, those whose
// count fell to 0 or below leave it.
func (s *sortedLines) update(t *topOp, changes []change) error {
	var added []int32
	removed := false
	for _, c := range changes {
		now := t.set.counts[c.entry]
		switch {
		case c.before <= 0 && now > 0:
			added = append(added, c.entry)
		case c.before > 0 && now <= 0:
			removed = true
		}
	}
	if len(added) == 0 && !removed {
		return nil
	}
	if removed {
		s.order = slices.DeleteFunc(s.order, func(e int32) bool {
			if t.set.counts[e] <= 0 {
				s.lines[e] = ""
				return true
			}
			return false
		})
	}
	return s.add(t, added)
}

// add puts entries (positive counts, not in the order) in the order
// and makes their lines.
func (s *sortedLines) add(t *topOp, entries []int32) error {
	entries = slices.DeleteFunc(slices.Clone(entries), func(e int32) bool { return t.set.counts[e] <= 0 })
	if len(entries) == 0 {
		return nil
	}
	if err := s.format(t, entries); err != nil {
		return err
	}
	cmp := func(x, y int32) int {
		a, b := t.set.refs[x], t.set.refs[y]
		return exec.CompareSorted(t.sort, t.set.st.batches[a.b], int(a.r), t.set.st.batches[b.b], int(b.r))
	}
	slices.SortFunc(entries, cmp)
	// Each new entry's place in the order, found by binary search, then
	// the order copied once with the entries in their places.
	at := make([]int, len(entries))
	lo := 0
	for i, e := range entries {
		lo += sort.Search(len(s.order)-lo, func(k int) bool { return cmp(s.order[lo+k], e) > 0 })
		at[i] = lo
	}
	out := make([]int32, 0, len(s.order)+len(entries))
	prev := 0
	for i, e := range entries {
		out = append(out, s.order[prev:at[i]]...)
		out = append(out, e)
		prev = at[i]
	}
	s.order = append(out, s.order[prev:]...)
	return nil
}

// format makes the lines of entries: their stored rows, gathered per
// stored batch, through the projections above the Sort, as CSV.
func (s *sortedLines) format(t *topOp, entries []int32) error {
	if n := len(t.set.keys); len(s.lines) < n {
		s.lines = append(s.lines, make([]string, n-len(s.lines))...)
	}
	byRef := slices.Clone(entries)
	slices.SortFunc(byRef, func(x, y int32) int {
		a, b := t.set.refs[x], t.set.refs[y]
		if a.b != b.b {
			return int(a.b - b.b)
		}
		return int(a.r - b.r)
	})
	var line []byte
	for from := 0; from < len(byRef); {
		b := t.set.refs[byRef[from]].b
		to := from
		var rows []int32
		for ; to < len(byRef) && t.set.refs[byRef[to]].b == b; to++ {
			rows = append(rows, t.set.refs[byRef[to]].r)
		}
		bs := []*exec.Batch{t.set.st.batches[b].Rows(rows)}
		var err error
		for _, n := range t.upper {
			if bs, err = exec.Project(n.Exprs, bs); err != nil {
				return err
			}
		}
		rendered := exec.Concat(t.root.Output, bs)
		for i, e := range byRef[from:to] {
			line = exec.AppendCSVRow(line[:0], rendered, i)
			s.lines[e] = string(line)
		}
		from = to
	}
	return nil
}
