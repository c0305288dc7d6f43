package sqlops_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql/incr"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// TestCheckStandingRefuses: a plan whose answer has no Sort under its
// sink is refused with an error wrapping incr.ErrUnsupported that names
// the construct; the plans the SQL engine makes pass (the random tests
// check every plan they run with CheckStanding).
func TestCheckStandingRefuses(t *testing.T) {
	_, _, tables := generated(t, 200, 1)
	if err := sqlops.CheckStanding(planOf(t, defaultTexts(), queries.Names, tables, 2)); err != nil {
		t.Fatalf("the default queries: %v", err)
	}
	for _, c := range []struct {
		name   string
		mutate func(p *physical.Plan)
		says   string
	}{
		{"a sink with no Sort under it", func(p *physical.Plan) {
			sink := p.Ops[p.Queries[0].Sink]
			p.Ops[sink.Inputs[0].Op].Kind = plan.Distinct
		}, "no ORDER"},
	} {
		p := planOf(t, defaultTexts(), queries.Names, tables, 2)
		c.mutate(p)
		err := sqlops.CheckStanding(p)
		if !errors.Is(err, incr.ErrUnsupported) {
			t.Errorf("%s: %v, want an error wrapping incr.ErrUnsupported", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v does not say %q", c.name, err, c.says)
		}
	}
}

// TestEpochWire: the epoch of a batch and a marker read back; bytes that
// are not one are refused.
func TestEpochWire(t *testing.T) {
	rows := []byte{0x2a, 0x02, 0x08, 0x01}
	e, rest, marker, err := sqlops.DecodeEpoch(sqlops.EncodeEpochRows(nil, 300, rows))
	if err != nil || e != 300 || marker || string(rest) != string(rows) {
		t.Errorf("rows: %d %x %v %v", e, rest, marker, err)
	}
	e, rest, marker, err = sqlops.DecodeEpoch(sqlops.EncodeEpochMarker(nil, 7))
	if err != nil || e != 7 || !marker || len(rest) != 0 {
		t.Errorf("marker: %d %x %v %v", e, rest, marker, err)
	}
	for _, bad := range [][]byte{nil, rows, {0x30}, {0x30, 0x00}, append(sqlops.EncodeEpochMarker(nil, 1), 0)} {
		if _, _, _, err := sqlops.DecodeEpoch(bad); err == nil {
			t.Errorf("%x was read as an epoch's", bad)
		}
	}
}

// TestEpochWireIsARowBatch: what a standing channel's batch and marker
// travel as is a RowBatch as proto.Unmarshal reads it: its epoch or
// epoch_end set, and the rows' own field.
func TestEpochWireIsARowBatch(t *testing.T) {
	rows, err := proto.Marshal(&wololov1.RowBatch{Rows: &wololov1.RowBatch_Columns{Columns: &wololov1.ColumnBatch{Rows: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	var m wololov1.RowBatch
	if err := proto.Unmarshal(sqlops.EncodeEpochRows(nil, 300, rows), &m); err != nil || m.GetEpoch() != 300 || m.GetEpochEnd() != 0 || m.GetColumns().GetRows() != 1 {
		t.Errorf("rows of epoch 300 read as %v, %v", &m, err)
	}
	m.Reset()
	if err := proto.Unmarshal(sqlops.EncodeEpochMarker(nil, 7), &m); err != nil || m.GetEpochEnd() != 7 || m.GetEpoch() != 0 || m.GetColumns() != nil {
		t.Errorf("the marker of epoch 7 read as %v, %v", &m, err)
	}
}

// TestEpochsOverBudget: a standing job that keeps more state than its
// budget fails with OverBudget, as a batch job does.
func TestEpochsOverBudget(t *testing.T) {
	_, _, tables := generated(t, 2000, 3)
	p := planOf(t, defaultTexts(), queries.Names, tables, 2)
	parts := splitEpochs(rand.New(rand.NewPCG(1, 1)), tables, 3)
	if _, err := sqlops.RunEpochsBudget(p, parts, sqlops.Budget{StateBytes: 100 << 10}); !errors.As(err, new(*sqlops.OverBudget)) {
		t.Fatalf("with 100 KiB of state: %v, want OverBudget", err)
	}
	if _, err := sqlops.RunEpochsBudget(p, parts, sqlops.Budget{}); err != nil {
		t.Fatalf("with the default budget: %v", err)
	}
}

// TestEpochsScanned: rows given as their scans' columns (a Source's
// way, EpochTask.Scanned) make the versions rows given as text do.
func TestEpochsScanned(t *testing.T) {
	_, _, tables := generated(t, 1500, 4)
	p := planOf(t, defaultTexts(), queries.Names, tables, 2)
	parts := splitEpochs(rand.New(rand.NewPCG(4, 4)), tables, 5)
	want, err := sqlops.RunEpochs(p, parts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sqlops.RunEpochsScanned(p, parts)
	if err != nil {
		t.Fatal(err)
	}
	for k := range want.Versions {
		for _, q := range queries.Names {
			if !bytes.Equal(got.Versions[k][q].CSV, want.Versions[k][q].CSV) || !bytes.Equal(got.Versions[k][q].Change, want.Versions[k][q].Change) {
				t.Fatalf("epoch %d: %s differs given scanned rows", k+1, q)
			}
		}
	}
}

// TestVersionRecords: a version is published as version/<k>/NAME.csv
// and change/<k>/NAME.csv, the final answer as the query's result.
func TestVersionRecords(t *testing.T) {
	got := sqlops.Version{Query: "q2", Epoch: 12, CSV: []byte("a\n"), Change: []byte("a,diff\n")}.Records()
	if len(got) != 2 || string(got["version/12/q2.csv"]) != "a\n" || string(got["change/12/q2.csv"]) != "a,diff\n" {
		t.Errorf("records %q", got)
	}
	final := sqlops.Version{Query: "q2", Epoch: 12, CSV: []byte("b\n"), Final: true}.Records()
	if len(final) != 1 || string(final["result/q2.csv"]) != "b\n" {
		t.Errorf("final records %q", final)
	}
}

// TestEpochsEndWithoutMarker: rows after the last marker (the input
// ended without ending their epoch) are in the final answers, which are
// the batch answers over every row, and in no version; a job whose
// input ends before any epoch has its answers over no rows or over all.
func TestEpochsEndWithoutMarker(t *testing.T) {
	for seed := range uint64(30) {
		j, tables := sqlgenJob(t, seed+500)
		r := rand.New(rand.NewPCG(seed, 48))
		parts := splitEpochs(r, tables, 1+r.IntN(4))
		p := planOf(t, j.texts, j.names, tables, int(seed%4))
		res, err := sqlops.RunEpochsUnmarked(p, parts)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(res.Versions) != len(parts)-1 {
			t.Fatalf("seed %d: %d versions of %d epochs, the last unmarked", seed, len(res.Versions), len(parts))
		}
		for _, name := range j.names {
			want, err := oracle.Execute(j.roots[name], tables)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.Files[name], want.CSV()) {
				t.Fatalf("seed %d: %s (%s): the final answer\n%q\nwant\n%q", seed, name, j.texts[name], res.Files[name], want.CSV())
			}
		}
	}
}

// TestEpochRestoreRefuses: an epoch task's snapshot cut short (at random
// points), or with a byte changed, is refused or restored, never a
// panic; a snapshot whole is restored.
func TestEpochRestoreRefuses(t *testing.T) {
	_, _, tables := generated(t, 300, 5)
	p := planOf(t, defaultTexts(), queries.Names, tables, 2)
	snaps, cfgs, err := sqlops.EpochSnapshots(p, splitEpochs(rand.New(rand.NewPCG(5, 5)), tables, 3), 7)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i, snap := range snaps {
		if err := sqlops.RestoreEpochTask(cfgs[i], bytes.Clone(snap)); err != nil {
			t.Fatalf("snapshot %d, whole: %v", i, err)
		}
		cuts := []int{0, len(snap) - 1}
		for range 60 {
			cuts = append(cuts, r.IntN(len(snap)))
		}
		for _, n := range cuts {
			if err := sqlops.RestoreEpochTask(cfgs[i], bytes.Clone(snap[:n])); err == nil {
				t.Fatalf("snapshot %d cut at %d of %d bytes was restored", i, n, len(snap))
			}
		}
		for range 20 {
			b := bytes.Clone(snap)
			b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
			_ = sqlops.RestoreEpochTask(cfgs[i], b) // refused or not, no panic
		}
	}
	if len(snaps) < 5 {
		t.Errorf("%d snapshots: the test checks little", len(snaps))
	}
}
