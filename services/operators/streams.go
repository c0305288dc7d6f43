package operators

import (
	"fmt"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/stage"
)

// The stream names the operators read and write; the topology must use them.
const (
	Matches    = "matches"
	Players    = "players"
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

// fusesMatchTable returns the operators of a chain that a MatchTable
// runs: q2-grouper, q3-joiner and q4-joiner when the chain has each of them
// once and one after the other (in any order), else none.
func fusesMatchTable(chain []deploy.Stage) map[string]bool {
	fuse := map[string]bool{}
	for _, op := range fusedIntoMatchTable {
		fuse[op] = true
	}
	seen, first := map[string]int{}, -1
	for i, ls := range chain {
		if fuse[ls.Operator] {
			seen[ls.Operator]++
			if first < 0 {
				first = i
			}
			if i-first >= len(fusedIntoMatchTable) {
				return nil // not one after the other
			}
		}
	}
	for _, op := range fusedIntoMatchTable {
		if seen[op] != 1 {
			return nil
		}
	}
	return fuse
}

// matchTableStage names the MatchTable's link after the stages it runs,
// for its errors: "q2-grouper+q3-joiner+q4-joiner".
func matchTableStage(chain []deploy.Stage, fuse map[string]bool) string {
	name := ""
	for _, ls := range chain {
		if fuse[ls.Operator] {
			if name != "" {
				name += "+"
			}
			name += ls.Name
		}
	}
	return name
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
	var fuse map[string]bool
	if fuseTable {
		fuse = fusesMatchTable(st.Chain)
	}
	lastFused := -1
	for i, ls := range st.Chain {
		if fuse[ls.Operator] {
			lastFused = i
		}
	}
	var links []stage.Link
	members := map[string]bool{}
	for i, ls := range st.Chain {
		spec, ok := specs[ls.Operator]
		if !ok {
			return stage.Spec{}, fmt.Errorf("stage %s of task %s: unknown operator %q", ls.Name, st.Name, ls.Operator)
		}
		members[ls.Name] = true
		switch {
		case !fuse[ls.Operator]:
			links = append(links, stage.Link{Stage: ls.Name, Spec: spec})
		case i == lastFused: // the table stands where the last of them stood, after all they read
			links = append(links, stage.Link{Stage: matchTableStage(st.Chain, fuse), Spec: matchTableSpec()})
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
