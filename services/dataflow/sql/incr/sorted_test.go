package incr_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
)

// TestAnswerCSVKeptInOrder steps the answers of sqlgen's random queries
// (incr.NewAnswer) over random changes of their Sort's input, rows
// arriving and leaving, the answer restored from its state at a random
// epoch: every epoch, the CSV written from the rows kept in order
// (AnswerCSV) is the answer sorted and rendered whole (Answer's).
func TestAnswerCSVKeptInOrder(t *testing.T) {
	for seed := range uint64(150) {
		root, tables, q := seedPlan(t, seed, "")
		sort := nodeOf(root, plan.Sort)
		if sort == nil {
			continue
		}
		in, err := oracle.Execute(sort.Input[0], tables)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(seed, 47))
		op, err := incr.NewAnswer(root, false)
		if err != nil {
			t.Fatal(err)
		}
		var kept []int32 // the rows added and not taken back
		restoreAt := r.IntN(8)
		for epoch := range 8 {
			var add, drop []int32
			for range r.IntN(in.Rows.N/4 + 2) {
				if in.Rows.N > 0 {
					add = append(add, int32(r.IntN(in.Rows.N)))
				}
			}
			for len(kept) > 0 && r.IntN(3) == 0 {
				k := r.IntN(len(kept))
				drop = append(drop, kept[k])
				kept = append(kept[:k], kept[k+1:]...)
			}
			kept = append(kept, add...)
			if _, err := op.Step([][]*exec.Batch{{withWeights(in.Rows.Rows(add), 1), withWeights(in.Rows.Rows(drop), -1)}}); err != nil {
				t.Fatal(err)
			}
			if epoch == restoreAt {
				state, err := op.AppendState(nil)
				if err != nil {
					t.Fatal(err)
				}
				if op, err = incr.NewAnswer(root, false); err != nil {
					t.Fatal(err)
				}
				if err := op.RestoreState(state); err != nil {
					t.Fatal(err)
				}
			}
			got, err := op.AnswerCSV()
			if err != nil {
				t.Fatal(err)
			}
			want, err := op.Answer()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.CSV()) {
				t.Fatalf("seed %d, epoch %d: %s\nAnswerCSV:\n%s\nthe answer rendered whole:\n%s", seed, epoch, q, got, want.CSV())
			}
		}
	}
}
