package sqlops_test

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqlgen/oracle"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// uploadEpochs feeds the epochs' rows to each table's Source as the
// gateway's appends would: a row at a time, flushed when full and at
// random commits, each epoch ended on every table (EndEpoch) in the
// commit of its last rows; then every table's end. Between epochs, at
// random, the Sources are made afresh, as a restarted gateway's, and
// told of the epochs ended (ResumeEpochs).
func (d *deployed) uploadEpochs(parts []map[string]*exec.Table) {
	gw := deploy.Instance{Stage: d.p.Gateway.Name}
	names := slices.Sorted(maps.Keys(parts[0]))
	srcs := map[string]*sqlops.Source{}
	outs := map[string]*stage.Outputs{}
	for _, name := range names {
		src, err := sqlops.NewSource(d.p, name, parts[0][name].Columns)
		if err != nil {
			d.t.Fatal(err)
		}
		srcs[name], outs[name] = src, stage.NewOutputs(gw, "j", src.Outputs())
	}
	commit := func(name string, eof bool) {
		emitted, _ := outs[name].Drain(eof)
		d.send(gw.Name(), emitted)
	}
	fields := map[string][][]byte{}
	for k, part := range parts {
		if k > 0 && d.r.IntN(3) == 0 {
			// A restarted gateway: fresh Sources, told of the epochs
			// its commits ended.
			for _, name := range names {
				src, err := sqlops.NewSource(d.p, name, parts[0][name].Columns)
				if err != nil {
					d.t.Fatal(err)
				}
				if err := src.ResumeEpochs(int64(k)); err != nil {
					d.t.Fatal(err)
				}
				srcs[name] = src
			}
			d.resumes++
		}
		for _, name := range names {
			tab, src := part[name], srcs[name]
			f := make([][]byte, len(tab.Columns))
			fields[name] = f
			for _, b := range tab.Batches {
				for r := range b.N {
					for c := range f {
						f[c] = b.Cols[c].Text(r)
					}
					src.Row(f)
					if src.Full() || d.r.IntN(50) == 0 {
						if err := src.Flush(outs[name]); err != nil {
							d.t.Fatal(err)
						}
						commit(name, false)
					}
				}
			}
		}
		for _, name := range names {
			if err := srcs[name].EndEpoch(outs[name]); err != nil {
				d.t.Fatal(err)
			}
			commit(name, false)
		}
	}
	for _, name := range names {
		if got, want := srcs[name].Epochs(), int64(len(parts)); got != want {
			d.t.Fatalf("table %s: the Source ended %d epochs, want %d", name, got, want)
		}
		if err := srcs[name].End(outs[name]); err != nil {
			d.t.Fatal(err)
		}
		commit(name, true)
	}
}

// TestDeployedStandingPlan runs standing jobs as the deployment would
// (StageSpec's EpochTask and the Sources' EndEpoch, through the stage
// runtime's Driver and Outputs, the epochs' changes and markers as the
// bytes they travel as), instances restarted from their journals and
// snapshots at random: every version the gateway records
// (version/<k>/NAME.csv) is the batch answer over the epochs so far,
// every change (change/<k>/NAME.csv) the standing runner's, and the
// results the last versions.
func TestDeployedStandingPlan(t *testing.T) {
	type run struct {
		label  string
		j      job
		tables map[string]*exec.Table
		shards int
	}
	var jobs []run
	_, _, tables := generated(t, 1500, 11)
	jobs = append(jobs, run{"default queries", newJob(t, defaultTexts(), queries.Names, tables), tables, 2})
	for seed := range uint64(20) {
		j, tables := sqlgenJob(t, seed+31)
		jobs = append(jobs, run{fmt.Sprintf("sqlgen seed %d", seed+31), j, tables, 1 + int(seed%3)})
	}
	restarts, resumes := 0, 0
	for i, jb := range jobs {
		r := rand.New(rand.NewPCG(uint64(i), 47))
		parts := splitEpochs(r, jb.tables, 1+r.IntN(5))
		p := planOf(t, jb.j.texts, jb.j.names, jb.tables, jb.shards)
		p.Standing = true
		inProcess, err := sqlops.RunEpochs(p, parts)
		if err != nil {
			t.Fatal(err)
		}
		d := newDeployed(t, p, r, 0.1)
		d.uploadEpochs(parts)
		d.run()
		restarts, resumes = restarts+d.restarts, resumes+d.resumes
		records := d.inst[deploy.Instance{Stage: p.Gateway.Name}.Name()].records
		for _, name := range jb.j.names {
			for k := range parts {
				want, err := oracle.Execute(jb.j.roots[name], epochPrefix(parts, k+1))
				if err != nil {
					t.Fatal(err)
				}
				got := records[fmt.Sprintf("version/%d/%s.csv", k+1, name)]
				if !bytes.Equal(got, want.CSV()) {
					t.Fatalf("%s: %s: version %d:\n got %q\nwant %q", jb.label, name, k+1, got, want.CSV())
				}
				change := records[fmt.Sprintf("change/%d/%s.csv", k+1, name)]
				if !bytes.Equal(change, inProcess.Versions[k][name].Change) {
					t.Fatalf("%s: %s: change %d:\n got %q\nwant %q", jb.label, name, k+1, change, inProcess.Versions[k][name].Change)
				}
			}
			if last := records[fmt.Sprintf("version/%d/%s.csv", len(parts), name)]; !bytes.Equal(d.results[name], last) {
				t.Fatalf("%s: %s: the result is not the last version", jb.label, name)
			}
		}
	}
	if restarts < 20 || resumes < 3 {
		t.Errorf("only %d restarts and %d resumed Sources: the test checks little", restarts, resumes)
	}
	t.Logf("%d restarts, %d resumed Sources", restarts, resumes)
}
