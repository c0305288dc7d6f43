package sqlops_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// TestTaskSnapshotRefusesWhatIsCut: a shard's snapshot in the middle of
// a job restores into a fresh operator of the plan and writes the same
// bytes again; cut short anywhere, or with a byte changed in its
// framing, it is refused with an error, never a panic.
func TestTaskSnapshotRefusesWhatIsCut(t *testing.T) {
	_, _, tables := generated(t, 300, 6)
	p := planOf(t, defaultTexts(), queries.Names, tables, 2)
	d := newDeployed(t, p, rand.New(rand.NewPCG(3, 4)), 0)
	d.upload("matches", tables["matches"])
	d.upload("match_players", tables["match_players"])
	shard := d.inst["shard-0"]
	// Half of what was sent, so that the operators are mid-job.
	for range len(shard.queue) / 2 {
		msg := shard.queue[0]
		shard.queue = shard.queue[1:]
		if _, err := shard.apply(msg, stage.Discard); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := shard.op.(stage.Snapshotter).AppendSnapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	fresh := shard.spec.New().(stage.Snapshotter)
	if err := fresh.Restore(bytes.Clone(snap)); err != nil {
		t.Fatal(err)
	}
	again, err := fresh.AppendSnapshot(nil)
	if err != nil || !bytes.Equal(again, snap) {
		t.Fatalf("restored, the task snapshots %d other bytes (%v)", len(again), err)
	}
	for cut := 0; cut < len(snap); cut += 1 + cut/8 {
		if err := shard.spec.New().(stage.Snapshotter).Restore(bytes.Clone(snap[:cut])); err == nil {
			t.Errorf("a snapshot cut at %d of %d bytes was restored", cut, len(snap))
		}
	}
	bad := bytes.Clone(snap)
	bad[0]++ // the version
	if err := shard.spec.New().(stage.Snapshotter).Restore(bad); err == nil {
		t.Error("a snapshot of another version was restored")
	}
}
