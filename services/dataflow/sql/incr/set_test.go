package incr

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// change is a test's batch of one text column and weights.
func textChange(vals []string, ws []int64) *exec.Batch {
	v := &exec.Vec{Type: plan.Text, N: len(vals)}
	for _, s := range vals {
		v.Data = append(v.Data, s...)
		v.Ends = append(v.Ends, uint32(len(v.Data)))
	}
	return &exec.Batch{N: len(vals), Cols: []*exec.Vec{v, weightVec(ws)}}
}

// contents is a set's rows as value -> copies.
func contents(s *rowSet) map[string]int64 {
	out := map[string]int64{}
	b := s.rows(-1)
	for i := range b.N {
		out[string(b.Cols[0].Text(i))]++
	}
	return out
}

// TestRowSetChurn: rows that stay stored beside rows that leave, epoch
// after epoch, so that the store's batches are mostly dead and it is
// compacted again and again; the set's rows stay what was added.
func TestRowSetChurn(t *testing.T) {
	s := newRowSet([]plan.Column{{Name: "x", Type: plan.Text}}, true)
	want := map[string]int64{}
	compacted := 0
	for e := range 300 {
		keep := fmt.Sprintf("keep%d", e)
		vals, ws := []string{keep, keep}, []int64{1, 1}
		want[keep] = 2
		for c := range 3 {
			churn := fmt.Sprintf("churn%d.%d", e, c)
			vals, ws = append(vals, churn), append(ws, 1)
			want[churn] = 1
			if e > 0 {
				gone := fmt.Sprintf("churn%d.%d", e-1, c)
				vals, ws = append(vals, gone), append(ws, -1)
				delete(want, gone)
			}
		}
		batches := s.st.batches
		s.apply(zset{textChange(vals, ws)})
		s.release()
		if len(s.st.batches) < len(batches) {
			compacted++
		}
		if got := contents(s); !maps.Equal(got, want) {
			t.Fatalf("epoch %d: %v, want %v", e, got, want)
		}
		if s.st.rows > 2*s.st.liveN+compactSlack {
			t.Fatalf("epoch %d: %d rows stored for %d live", e, s.st.rows, s.st.liveN)
		}
	}
	if compacted == 0 {
		t.Error("never compacted")
	}
	if len(s.index) != len(want) || s.total != int64(2*300+3) {
		t.Errorf("%d entries, %d copies; want %d, %d", len(s.index), s.total, len(want), 2*300+3)
	}
}

// TestRowSetExact: an exact set tells 2034 from 2034.0 (the answer shows
// both); a DISTINCT's does not.
func TestRowSetExact(t *testing.T) {
	for _, exact := range []bool{true, false} {
		s := newRowSet([]plan.Column{{Name: "n", Type: plan.Number}}, exact)
		a, _ := value.ReadNumber([]byte("2034"))
		b, _ := value.ReadNumber([]byte("2034.0"))
		v := &exec.Vec{Type: plan.Number, N: 2, Nums: []value.Dec{a, b}}
		s.apply(zset{{N: 2, Cols: []*exec.Vec{v, weightVec([]int64{1, 1})}}})
		want := 1
		if exact {
			want = 2
		}
		if len(s.index) != want {
			t.Errorf("exact %v: %d rows, want %d", exact, len(s.index), want)
		}
	}
}

// TestConsolidate: equal rows' weights add up, rows of weight 0 go.
func TestConsolidate(t *testing.T) {
	cols := []plan.Column{{Name: "x", Type: plan.Text}}
	for _, c := range []struct {
		vals []string
		ws   []int64
		want string
	}{
		{[]string{"a", "b", "a"}, []int64{1, 1, -1}, "b:1"},
		{[]string{"a", "a", "b", "b"}, []int64{2, 3, -1, -1}, "a:5 b:-2"},
		{[]string{"a", "a"}, []int64{1, -1}, ""},
		{nil, nil, ""},
	} {
		out := consolidate(zset{textChange(c.vals, c.ws)}, cols)
		var got []string
		for i, w := range weights(out) {
			got = append(got, fmt.Sprintf("%s:%d", out.Cols[0].Text(i), w))
		}
		slices.Sort(got)
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%v %v: %q, want %q", c.vals, c.ws, g, c.want)
		}
	}
}
