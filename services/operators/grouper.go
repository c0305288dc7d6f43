package operators

import (
	"sort"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/batch"
	"github.com/wololo/wololo/services/schema"
	"github.com/wololo/wololo/services/stage"
)

// q2Side is one player row of a match, as far as Q2 cares.
type q2Side struct {
	winner    batch.Tri
	hasRating bool
	rating    schema.Number
}

// q2Match is what Q2 keeps per match: the row count (saturating at 3, since
// only "exactly two" matters) and the first two rows.
type q2Match struct {
	rows uint8
	side [2]q2Side
}

// Q2Grouper groups player rows by match and, at the end, emits the matches
// in which a much weaker player won a 1v1.
type Q2Grouper struct{ matches map[string]*q2Match }

// NewQ2Grouper returns an empty grouper.
func NewQ2Grouper() *Q2Grouper { return &Q2Grouper{matches: map[string]*q2Match{}} }

// Apply groups one batch.
func (g *Q2Grouper) Apply(stream string, rows *wololov1.RowBatch, _ stage.Emitter) error {
	p := rows.GetPlayers()
	if p == nil {
		return wrongKind(stream, rows, "players")
	}
	return batch.EachPlayer(p, func(p *batch.Player) {
		m, ok := g.matches[string(p.Match)]
		if !ok {
			m = &q2Match{}
			g.matches[string(p.Match)] = m
		}
		if m.rows < 2 {
			m.side[m.rows] = q2Side{winner: p.Winner, hasRating: p.HasRating, rating: p.Rating}
		}
		if m.rows < 3 {
			m.rows++
		}
	})
}

// Q2Qualifies applies Q2's test to a match's group.
func Q2Qualifies(rows int, a, b q2Side) bool {
	if rows != 2 || !a.hasRating || !b.hasRating {
		return false
	}
	var w, l q2Side
	switch {
	case a.winner == batch.True && b.winner == batch.False:
		w, l = a, b
	case a.winner == batch.False && b.winner == batch.True:
		w, l = b, a
	default:
		return false
	}
	return w.rating.CmpInt(1000) > 0 && schema.MulCmp(10, w.rating, 7, l.rating) <= 0
}

// Finish emits the qualifying matches in token order.
func (g *Q2Grouper) Finish(out stage.Emitter) error {
	var tokens []string
	for token, m := range g.matches {
		if Q2Qualifies(int(m.rows), m.side[0], m.side[1]) {
			tokens = append(tokens, token)
		}
	}
	sort.Strings(tokens)
	for _, t := range tokens {
		out.Token(Q2Tokens, []byte(t))
	}
	g.matches = nil
	return nil
}
