package operators

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/dataflow/batch"
)

// TestShardTaskFusesTheMatchTable: a MatchTable runs where a chain has
// the grouper and the two joiners one after the other, in any order; the
// default plan's shard task is such a chain.
func TestShardTaskFusesTheMatchTable(t *testing.T) {
	top := deploy.Default()
	st, _ := top.Stage("shard")
	var shard []string
	for _, ls := range st.Chain {
		shard = append(shard, ls.Operator)
	}
	for _, c := range []struct {
		chain []string
		at    int
		ok    bool
	}{
		{shard, slices.Index(shard, "q2-grouper"), true},
		{[]string{"q4-joiner", "q2-grouper", "q3-joiner"}, 0, true},
		{[]string{"players-filter", "q3-joiner", "q2-grouper", "q4-joiner", "q3-aggregator"}, 1, true},
		{[]string{"q2-grouper", "players-filter", "q3-joiner", "q4-joiner"}, 0, false},
		{[]string{"q2-grouper", "q3-joiner"}, 0, false},
	} {
		var stages []deploy.Stage
		for _, op := range c.chain {
			stages = append(stages, deploy.Stage{Name: op, Operator: op})
		}
		if at, ok := matchTableRun(stages); at != c.at || ok != c.ok {
			t.Errorf("%v: run at %d, %v; want %d, %v", c.chain, at, ok, c.at, c.ok)
		}
	}
	at, _ := matchTableRun(st.Chain)
	if got := matchTableStage(st.Chain[at : at+3]); got != "q2-grouper+q3-joiner+q4-joiner" {
		t.Errorf("the table's link is named %q", got)
	}
}

// TestMatchTableComputesWhatTheThreeDo: on random jobs, the shard task
// with a MatchTable emits exactly what it emits with the grouper and the
// two joiners run apart, also when players come before the matches have
// all come, when rows of a match come together or apart, and when it is
// snapshotted and restored after any call.
func TestMatchTableComputesWhatTheThreeDo(t *testing.T) {
	top := deploy.Default()
	st, _ := top.Stage("shard")
	fused, err := specFor(top, st, true)
	if err != nil {
		t.Fatal(err)
	}
	apart, err := specFor(top, st, false)
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(40) {
		calls := randomShardJob(t, rand.New(rand.NewPCG(seed, 99)))
		want := byStream(run(t, apart.New(), calls))
		got := byStream(run(t, fused.New(), calls))
		sameCalls(t, fmt.Sprintf("seed %d", seed), got, want)
		if seed < 8 {
			for cut := 0; cut <= len(calls); cut++ {
				sameCalls(t, fmt.Sprintf("seed %d restored after call %d", seed, cut), byStream(snapshotAt(t, fused, calls, cut)), want)
			}
		}
	}
}

// byStream orders emitted calls by their stream, keeping their order
// within each: streams are separate channels, and only the order within
// one is part of what an operator computes.
func byStream(calls []string) []string {
	stream := func(c string) string { return strings.Fields(c)[1] }
	slices.SortStableFunc(calls, func(a, b string) int { return strings.Compare(stream(a), stream(b)) })
	return calls
}

// randomShardJob is a shard's calls for a small random job: matches of a
// few ladders and maps, two to eight players each, the players split into
// batches that come in any order relative to the matches (a few before
// the matches end), some rows of a match together and some apart.
func randomShardJob(t *testing.T, r *rand.Rand) []call {
	ladders, maps := []string{"RM_1v1", "RM_TEAM", "DM_1v1"}, []string{"arena", "islands", "nomad"}
	civs := []string{"Franks", "Huns", "Celts", "Goths", ""}
	tris := []batch.Tri{batch.True, batch.False, batch.Missing}
	ratings := []string{"900", "1001", "1400.5", "2000", "2001", "2600", "", "123456789012345678901.5"}
	var matches []mr
	var players []pr
	for i := range 30 + r.IntN(40) {
		token := fmt.Sprintf("m%03d", i)
		if r.IntN(10) > 0 { // some player rows have no match row
			matches = append(matches, mr{token, ladders[r.IntN(3)], maps[r.IntN(3)], "eastus", tris[r.IntN(3)], "2100", 9000})
		}
		n := 2 + r.IntN(7)
		if r.IntN(2) == 0 {
			n = 2
		}
		for range n {
			players = append(players, pr{token, civs[r.IntN(len(civs))], ratings[r.IntN(len(ratings))], tris[r.IntN(3)]})
		}
	}
	if r.IntN(2) == 0 { // rows of a match apart
		r.Shuffle(len(players), func(i, j int) { players[i], players[j] = players[j], players[i] })
	}
	in := func(stream string, rows input) call { rows.stream = stream; return call{apply: &rows} }
	var calls []call
	early := r.IntN(len(players) / 2)
	for len(matches) > 0 {
		n := min(len(matches), 1+r.IntN(20))
		calls = append(calls, in(Matches, input{rows: matchBatch(t, matches[:n]...)}))
		matches = matches[n:]
		if early > 0 {
			n := min(early, 1+r.IntN(10))
			calls = append(calls, in(Players, input{rows: playerBatch(t, players[:n]...)}))
			players, early = players[n:], early-n
		}
	}
	calls = append(calls, call{end: Matches})
	for len(players) > 0 {
		n := min(len(players), 1+r.IntN(30))
		calls = append(calls, in(Players, input{rows: playerBatch(t, players[:n]...)}))
		players = players[n:]
	}
	return slices.Concat(calls, []call{{end: Players}})
}
