package operators

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// The stream names the operators read and write; the topology must use them.
const (
	Matches    = schema.MatchesStream // the rows of matches.csv, as the gateway sends them
	Players    = schema.PlayersStream // the rows of match_players.csv
	Q1Tokens   = "q1-tokens"
	Q3Matches  = "q3-matches"
	Q4Matches  = "q4-matches"
	Q2Players  = "q2-players"
	Q3Players  = "q3-players"
	Q4Players  = "q4-players"
	Q2Tokens   = "q2-tokens"
	Q3Partials = "q3-partials"
	Q4Partials = "q4-partials"
	Q3Civs     = "q3-civs"
	Q4Civs     = "q4-civs"
)

// Specs returns every operator by the name the topology uses.
func Specs() map[string]stage.Spec {
	return map[string]stage.Spec{
		"matches-filter": {Inputs: []string{Matches}, Outputs: []string{Q1Tokens, Q3Matches, Q4Matches}, New: func() stage.Operator { return &MatchesFilter{} }, Stateless: true},
		"players-filter": {Inputs: []string{Players}, Outputs: []string{Q2Players, Q3Players, Q4Players}, New: func() stage.Operator { return &PlayersFilter{} }, Stateless: true},
		"q2-grouper":     {Inputs: []string{Q2Players}, Outputs: []string{Q2Tokens}, New: func() stage.Operator { return NewQ2Grouper() }},
		"q3-joiner":      {Inputs: []string{Q3Matches, Q3Players}, Outputs: []string{Q3Partials}, New: func() stage.Operator { return NewJoiner(Q3Matches, Q3Players, Q3Partials) }},
		"q4-joiner":      {Inputs: []string{Q4Matches, Q4Players}, Outputs: []string{Q4Partials}, New: func() stage.Operator { return NewJoiner(Q4Matches, Q4Players, Q4Partials) }},
		"q3-aggregator":  {Inputs: []string{Q3Partials}, Outputs: []string{Q3Civs}, New: func() stage.Operator { return NewAggregator(Q3Civs, 0) }},
		"q4-aggregator":  {Inputs: []string{Q4Partials}, Outputs: []string{Q4Civs}, New: func() stage.Operator { return NewAggregator(Q4Civs, 5) }},
		"results":        {Inputs: []string{Q1Tokens, Q2Tokens, Q3Civs, Q4Civs}, New: func() stage.Operator { return NewResults() }},
	}
}

// matchTableRun returns where a chain runs q2-grouper, q3-joiner and
// q4-joiner one after the other, in any order (chain[at:at+3]), for a
// MatchTable to run in their place; false if it does not.
func matchTableRun(chain []deploy.Stage) (at int, ok bool) {
	want := slices.Sorted(slices.Values(fusedIntoMatchTable))
	for at = 0; at+len(want) <= len(chain); at++ {
		var ops []string
		for _, ls := range chain[at : at+len(want)] {
			ops = append(ops, ls.Operator)
		}
		if slices.Sort(ops); slices.Equal(ops, want) {
			return at, true
		}
	}
	return 0, false
}

// matchTableStage names the MatchTable's link after the stages it runs,
// for its errors: "q2-grouper+q3-joiner+q4-joiner".
func matchTableStage(run []deploy.Stage) string {
	names := make([]string, len(run))
	for i, ls := range run {
		names[i] = ls.Name
	}
	return strings.Join(names, "+")
}

func wrongKind(stream string, rows *wololov1.RowBatch, want string) error {
	return fmt.Errorf("stream %s: got %T rows, want %s", stream, rows.GetRows(), want)
}

// SpecFor returns the operator a stage of a planned topology runs: its own
// operator, or, for a task of chained stages (deploy.Plan), the chain of
// theirs.
func SpecFor(top deploy.Topology, st deploy.Stage) (stage.Spec, error) {
	return specFor(top, st, true)
}

// specFor is SpecFor, with a MatchTable or without (to compare them).
func specFor(top deploy.Topology, st deploy.Stage, fuseTable bool) (stage.Spec, error) {
	specs := Specs()
	if len(st.Chain) == 0 {
		spec, ok := specs[st.Operator]
		if !ok {
			return stage.Spec{}, fmt.Errorf("stage %s: unknown operator %q", st.Name, st.Operator)
		}
		return spec, nil
	}
	at, fuse := matchTableRun(st.Chain)
	fuse = fuse && fuseTable
	var links []stage.Link
	members := map[string]bool{}
	for i, ls := range st.Chain {
		spec, ok := specs[ls.Operator]
		if !ok {
			return stage.Spec{}, fmt.Errorf("stage %s of task %s: unknown operator %q", ls.Name, st.Name, ls.Operator)
		}
		members[ls.Name] = true
		switch {
		case !fuse || i < at || i >= at+len(fusedIntoMatchTable):
			links = append(links, stage.Link{Stage: ls.Name, Spec: spec})
		case i == at:
			links = append(links, stage.Link{Stage: matchTableStage(st.Chain[at : at+len(fusedIntoMatchTable)]), Spec: matchTableSpec()})
		}
	}
	var internal []string
	for _, s := range top.Chained {
		if members[s.From] && members[s.To] {
			internal = append(internal, s.Name)
		}
	}
	spec, err := stage.Chain(links, internal)
	if err != nil {
		return stage.Spec{}, fmt.Errorf("task %s: %w", st.Name, err)
	}
	return spec, nil
}
