package incr_test

import (
	"math/rand/v2"
	"testing"

	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
)

// TestSnapshotSizeEstimate: what a snapshot makes room for at once (the
// operators' SnapshotSize) is within a factor of two of what it writes,
// for q3 (a semi-join keeping the player rows whose match has not come,
// an aggregate by civilization) and q2 (an aggregate by match dropping
// its finished groups), where the memory their state takes was more than
// twice it.
func TestSnapshotSizeEstimate(t *testing.T) {
	qs := defaultQueries(t)
	tables, cat := dataset(t, datagen.Config{Matches: 20000, Seed: 5})
	parts := epochs(rand.New(rand.NewPCG(5, 5)), tables, 4)
	for _, name := range []string{"q2", "q3"} {
		e := engineOf(t, qs[name], cat)
		for _, p := range parts {
			commitEpoch(t, e, p)
			snap, err := e.Snapshot(nil)
			if err != nil {
				t.Fatal(err)
			}
			est := incr.SnapshotSize(e)
			if est < int64(len(snap))/2 || est > 2*int64(len(snap)) {
				t.Errorf("%s, epoch %d: estimated %d bytes, the snapshot has %d", name, e.Epoch(), est, len(snap))
			}
		}
	}
}
