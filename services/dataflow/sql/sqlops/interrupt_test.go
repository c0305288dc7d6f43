package sqlops

import (
	"errors"
	"strconv"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// texts is a text column of the values.
func texts(vs ...string) *exec.Vec {
	v := &exec.Vec{Type: plan.Text, N: len(vs)}
	for _, s := range vs {
		v.Data = append(v.Data, s...)
		v.Ends = append(v.Ends, uint32(len(v.Data)))
	}
	return v
}

// TestADroppedJobStopsAJoinBetweenChunks: a join that makes many chunks
// of rows from one batch (every left row matching every right row) stops
// after the chunk during which its job was dropped (stage.Interrupter),
// with ErrInterrupted, instead of making them all.
func TestADroppedJobStopsAJoinBetweenChunks(t *testing.T) {
	cols := []plan.Column{{Name: "k", Type: plan.Text}, {Name: "v", Type: plan.Text}}
	key := &plan.Expr{Kind: plan.ColRef, Col: 0, Type: plan.Text}
	j := newJoin(cols, exec.NewJoin(exec.NewKeyTable(), key, key, cols), cols, key, key)
	dropped := false
	j.meter = &meter{b: DefaultBudget, interrupted: func() bool { return dropped }}
	side := func(n int) *exec.Batch {
		ks, vs := make([]string, n), make([]string, n)
		for i := range n {
			ks[i], vs[i] = "same", strconv.Itoa(i)
		}
		return &exec.Batch{N: n, Cols: []*exec.Vec{texts(ks...), texts(vs...)}}
	}
	if err := j.Apply(1, side(100), nil); err != nil {
		t.Fatal(err)
	}
	if err := j.EndInput(1, nil); err != nil {
		t.Fatal(err)
	}
	chunks := 0
	err := j.Apply(0, side(1000), func(b *exec.Batch) {
		chunks++
		dropped = chunks == 2 // the job is dropped while the second chunk is handed on
	})
	if !errors.Is(err, ErrInterrupted) || chunks != 2 {
		t.Fatalf("the join made %d chunks of 100,000 rows' %d and returned %v; want it stopped after the second with ErrInterrupted", chunks, (100_000+chunkRows-1)/chunkRows, err)
	}
}
