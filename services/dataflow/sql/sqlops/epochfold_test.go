package sqlops_test

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// TestEpochsFoldAsArriving runs standing plans whose operators fold
// their changes as they arrive (the default queries; the placed
// constructs: partial aggregates, DISTINCT on the shards and at the
// gateway, a join's groups; random queries of the physical operators,
// a shuffle from shard to shard among them), the instances taking their messages in
// random orders, so that a shard sends the next epoch's changes before
// another's marker of this one, and restarted from their snapshots,
// often between two batches an aggregate folded: no folding operator
// ever holds changes of its next epoch, the changes of a later one are
// held apart, and every version, change and final answer is the
// uninterrupted, in-order run's, byte for byte (which
// TestEpochsDefaultQueries and TestEpochsPlacedConstructs hold to the
// batch engine).
func TestEpochsFoldAsArriving(t *testing.T) {
	var runs []epochRun
	for seed := range uint64(3) {
		_, _, tables := generated(t, 400, int64(seed))
		r := rand.New(rand.NewPCG(seed, 46))
		runs = append(runs, epochRun{fmt.Sprintf("default queries, seed %d", seed), planOf(t, defaultTexts(), queries.Names, tables, 2+int(seed%2)), splitEpochs(r, tables, 3+r.IntN(6))})
	}
	texts, names := placedQueries()
	for seed := range uint64(8) {
		_, tables := sqlgenJob(t, seed)
		r := rand.New(rand.NewPCG(seed, 47))
		runs = append(runs, epochRun{fmt.Sprintf("placed constructs, seed %d", seed), planOf(t, texts, names, tables, 2+int(seed%2)), splitEpochs(r, tables, 2+r.IntN(5))})
	}
	for seed := range uint64(40) {
		g := gen{rand.New(rand.NewPCG(seed, 48))}
		tables := g.tables(t)
		texts, names := g.queries(1 + g.r.IntN(4))
		runs = append(runs, epochRun{fmt.Sprintf("gen seed %d", seed), planOf(t, texts, names, tables, 2+int(seed%2)), splitEpochs(g.r, tables, 2+g.r.IntN(5))})
	}
	var seen sqlops.FoldSeen
	for i, rn := range runs {
		want, err := sqlops.RunEpochs(rn.plan, rn.epochs)
		if err != nil {
			t.Fatalf("%s: %v", rn.label, err)
		}
		for try := range 3 {
			got, s, err := sqlops.RunEpochsFolding(rn.plan, rn.epochs, rand.New(rand.NewPCG(uint64(i), uint64(try))), 0.05)
			if err != nil {
				t.Fatalf("%s, try %d: %v", rn.label, try, err)
			}
			seen.HeldNext += s.HeldNext
			seen.HeldLater += s.HeldLater
			seen.RestartsFolding += s.RestartsFolding
			if !slices.EqualFunc(got.Versions, want.Versions, func(a, b map[string]sqlops.Version) bool {
				return maps.EqualFunc(a, b, func(x, y sqlops.Version) bool {
					return x.Epoch == y.Epoch && bytes.Equal(x.CSV, y.CSV) && bytes.Equal(x.Change, y.Change)
				})
			}) {
				t.Fatalf("%s, try %d: in a random order, restarted mid-fold, the versions differ", rn.label, try)
			}
			if !maps.EqualFunc(got.Files, want.Files, bytes.Equal) {
				t.Fatalf("%s, try %d: the final answers differ", rn.label, try)
			}
		}
	}
	if seen.HeldNext != 0 {
		t.Errorf("folding operators held changes of their next epoch %d times: they were to fold them", seen.HeldNext)
	}
	if seen.HeldLater < 10 || seen.RestartsFolding < 50 {
		t.Errorf("later epochs' changes held %d times, restarts mid-fold %d: the test checks little", seen.HeldLater, seen.RestartsFolding)
	}
	t.Logf("%+v", seen)
}
