package sqlops_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// TestDeployedStandingPlan runs standing jobs as the deployment runs
// them (StageSpec's epoch operators and each table's Source, through the
// stage runtime's Driver and Outputs, batches encoded as they travel, in
// random orders, instances restarted from their journals and snapshots
// at random): the gateway ends each epoch on every table's Source
// (EndEpoch), a Source made again after a restart going on from the
// epochs ended (ResumeEpochs), and its commits record every query's
// version and change of each epoch. Every version is byte for byte the
// batch job's answer over the epochs so far, and the results at the end
// the batch job's over every row.
func TestDeployedStandingPlan(t *testing.T) {
	_, _, tables := generated(t, 1500, 3)
	texts := defaultTexts()
	texts["maps"] = "SELECT m.map, COUNT(*) AS players, MAX(p.rating) AS top FROM matches m JOIN match_players p ON p.match = m.token GROUP BY m.map ORDER BY players DESC, m.map"
	texts["few"] = "SELECT token, map FROM matches WHERE server = 'ukwest' ORDER BY token LIMIT 7"
	names := append(slices.Clone(queries.Names), "maps", "few")
	for _, shards := range []int{1, 2, 3} {
		for _, restart := range []float64{0, 0.2} {
			t.Run(fmt.Sprintf("shards%d/restart%v", shards, restart), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(shards), 11))
				parts := splitEpochs(r, tables, 4)
				p := planOf(t, texts, names, tables, shards)
				p.Standing = true
				d := newDeployed(t, p, r, restart)
				gw := deploy.Instance{Stage: p.Gateway.Name}
				sources := map[string]*sqlops.Source{}
				outs := map[string]*stage.Outputs{}
				source := func(name string, epochs int64) {
					src, err := sqlops.NewSource(p, name, tables[name].Columns)
					if err != nil {
						t.Fatal(err)
					}
					src.ResumeEpochs(epochs)
					sources[name], outs[name] = src, stage.NewOutputs(gw, "j", src.Outputs())
				}
				commit := func(name string, eof bool) {
					emitted, _ := outs[name].Drain(eof)
					d.send(gw.Name(), emitted)
				}
				order := []string{"matches", "match_players"}
				for _, name := range order {
					source(name, 0)
				}
				for k, part := range parts {
					for _, name := range order {
						if r.IntN(3) == 0 {
							source(name, int64(k)) // the gateway restarted
						}
						feedRows(t, sources[name], part[name], outs[name], func() bool { return r.IntN(50) == 0 }, func() { commit(name, false) })
						if err := sources[name].EndEpoch(outs[name]); err != nil {
							t.Fatal(err)
						}
						commit(name, false)
					}
				}
				for _, name := range order {
					if err := sources[name].End(outs[name]); err != nil {
						t.Fatal(err)
					}
					commit(name, true)
				}
				d.run()
				if restart > 0 && d.restarts < 10 {
					t.Errorf("%d restarts: too few to test them", d.restarts)
				}
				batch := planOf(t, texts, names, tables, shards)
				gwRecords := d.inst[gw.Name()].records
				for k := range parts {
					want, err := sqlops.Run(batch, epochPrefix(parts, k+1))
					if err != nil {
						t.Fatal(err)
					}
					for _, name := range names {
						got := gwRecords[fmt.Sprintf("version/%d/%s.csv", k+1, name)]
						if !bytes.Equal(got, want.Files[name]) {
							t.Fatalf("%s, epoch %d: version\n%q\nwant\n%q", name, k+1, got, want.Files[name])
						}
						if gwRecords[fmt.Sprintf("change/%d/%s.csv", k+1, name)] == nil {
							t.Fatalf("%s, epoch %d: no change recorded", name, k+1)
						}
					}
				}
				want, err := sqlops.Run(batch, tables)
				if err != nil {
					t.Fatal(err)
				}
				for _, name := range names {
					// The results are the final commit's, as the gateway reads them.
					if got := d.results[name]; !bytes.Equal(got, want.Files[name]) {
						t.Fatalf("%s: the final commit's result\n%q\nwant\n%q", name, got, want.Files[name])
					}
				}
			})
		}
	}
}

// feedRows gives src the rows of tab as ingest does, flushing into out
// when it is Full or when flushToo says so, commit called after each
// flush.
func feedRows(t testing.TB, src *sqlops.Source, tab *exec.Table, out stage.Emitter, flushToo func() bool, commit func()) {
	t.Helper()
	if tab == nil {
		return
	}
	fields := make([][]byte, len(tab.Columns))
	for _, b := range tab.Batches {
		for r := range b.N {
			for c := range fields {
				fields[c] = b.Cols[c].Text(r)
			}
			src.Row(fields)
			if src.Full() || flushToo() {
				if err := src.Flush(out); err != nil {
					t.Fatal(err)
				}
				commit()
			}
		}
	}
}
