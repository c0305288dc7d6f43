package operators

import (
	"fmt"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/snapcodec"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// MatchTable is q2-grouper, q3-joiner and q4-joiner in one operator, over
// one table: the three are keyed by the match token, and where the plan
// chains them into one task (the shard), SpecFor runs this in their place.
//
// Run separately, a player row costs a probe of the grouper's table
// (millions of matches, far beyond the CPU's caches) and one of each
// joiner's set of qualifying matches. Here a match's group also holds the
// joins it qualifies for (q2Match.joins), the joiners' sets are views of
// those flags (joinFlag), and the grouper remembers the last group it
// found (Q2Grouper.entry): the players filter emits a row to Q2, Q3 and Q4
// one after the other, so the row costs one probe instead of three.
//
// What it computes is exactly what the three compute: the joiners are the
// same Joiner (their pending rows, counters and output), only their sets
// differ, and the grouper is the same Q2Grouper, whose qualifying test
// ignores groups that hold no player row (a match only a join knows).
type MatchTable struct {
	q2     *Q2Grouper
	q3, q4 *Joiner
}

// joinFlag is a joiner's set of qualifying matches kept as a flag in the
// grouper's groups.
type joinFlag struct {
	g   *Q2Grouper
	bit uint8
}

// The flags of q2Match.joins.
const (
	joinQ3 uint8 = 1 << iota
	joinQ4
)

func (f joinFlag) add(token []byte) { f.g.entry(token).joins |= f.bit }

func (f joinFlag) has(token []byte) bool {
	m := f.g.lookup(token)
	return m != nil && m.joins&f.bit != 0
}

// NewMatchTable returns an empty table.
func NewMatchTable() *MatchTable {
	g := NewQ2Grouper()
	return &MatchTable{
		q2: g,
		q3: newJoiner(Q3Matches, Q3Players, Q3Partials, joinFlag{g, joinQ3}),
		q4: newJoiner(Q4Matches, Q4Players, Q4Partials, joinFlag{g, joinQ4}),
	}
}

// matchTableSpec is the MatchTable's spec: the inputs and outputs of the
// three operators it replaces.
func matchTableSpec() stage.Spec {
	return stage.Spec{
		Inputs:  []string{Q2Players, Q3Matches, Q3Players, Q4Matches, Q4Players},
		Outputs: []string{Q2Tokens, Q3Partials, Q4Partials},
		New:     func() stage.Operator { return NewMatchTable() },
	}
}

// fusedIntoMatchTable are the operators a MatchTable replaces.
var fusedIntoMatchTable = []string{"q2-grouper", "q3-joiner", "q4-joiner"}

// joiner returns the joiner that reads stream, or nil.
func (t *MatchTable) joiner(stream string) *Joiner {
	switch stream {
	case Q3Matches, Q3Players:
		return t.q3
	case Q4Matches, Q4Players:
		return t.q4
	}
	return nil
}

// Apply takes a batch of any of the three operators' inputs.
func (t *MatchTable) Apply(stream string, rows *wololov1.RowBatch, out stage.Emitter) error {
	if stream == Q2Players {
		return t.q2.Apply(stream, rows, out)
	}
	if j := t.joiner(stream); j != nil {
		return j.Apply(stream, rows, out)
	}
	return fmt.Errorf("match table: no input %s", stream)
}

// Rows takes rows one at a time from the filters chained before it.
func (t *MatchTable) Rows(stage.Emitter) stage.RowFuncs {
	return stage.RowFuncs{
		Token: func(stream string, token []byte) {
			if j := t.joiner(stream); j != nil {
				j.addMatch(token)
			}
		},
		Player: func(stream string, p *batch.Player) {
			if stream == Q2Players {
				t.q2.add(p)
			} else if j := t.joiner(stream); j != nil {
				j.addPlayer(p)
			}
		},
	}
}

// EndStream tells the joiner whose matches have all come.
func (t *MatchTable) EndStream(stream string, out stage.Emitter) error {
	if j := t.joiner(stream); j != nil {
		return j.EndStream(stream, out)
	}
	return nil
}

// Finish emits the three answers: the joiners' first, since they read the
// grouper's table, which the grouper's Finish lets go.
func (t *MatchTable) Finish(out stage.Emitter) error {
	if err := t.q3.Finish(out); err != nil {
		return err
	}
	if err := t.q4.Finish(out); err != nil {
		return err
	}
	return t.q2.Finish(out)
}

// AppendSnapshot writes the joiners' snapshots (their counters and
// pending rows), each as a byte string, and then the grouper's, in place,
// which holds the joins' flags: their qualifying matches.
func (t *MatchTable) AppendSnapshot(dst []byte) ([]byte, error) {
	w := &snapWriter{snapcodec.Writer{B: dst}}
	w.Byte(snapshotVersion)
	for _, j := range []*Joiner{t.q3, t.q4} {
		s, err := j.AppendSnapshot(nil)
		if err != nil {
			return nil, err
		}
		w.Bytes(s)
	}
	return t.q2.AppendSnapshot(w.B)
}

// Restore reads a snapshot into an empty table: the grouper first, then
// the joiners, whose qualifying matches are flags in its groups.
func (t *MatchTable) Restore(state []byte) error {
	r := newSnapReader(state)
	r.version("match table")
	q3, q4 := r.Bytes(), r.Bytes()
	if r.Err != nil {
		return r.Err
	}
	if err := t.q2.Restore(r.B); err != nil {
		return err
	}
	if err := t.q3.Restore(q3); err != nil {
		return err
	}
	return t.q4.Restore(q4)
}
