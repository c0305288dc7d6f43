package operators

import (
	"sort"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/batch"
	"github.com/wololo/wololo/services/schema"
	"github.com/wololo/wololo/services/stage"
)

// q2Side is one player row of a match, as far as Q2 cares. The rating is
// kept as units (value × 10^6) so that the per-match state holds no
// pointers; the rare rating too wide for units lives in Q2Grouper.wide.
type q2Side struct {
	winner    batch.Tri
	hasRating bool
	wide      bool
	units     int64
}

// q2Match is what Q2 keeps per match: the row count (saturating at 3, since
// only "exactly two" matters) and the first two rows.
type q2Match struct {
	rows uint8
	side [2]q2Side
}

// Q2Grouper groups player rows by match and, at the end, emits the matches
// in which a much weaker player won a 1v1.
type Q2Grouper struct {
	matches *tokenMap[q2Match]
	wide    map[string][2]schema.Number // match → ratings that did not fit in units
}

// NewQ2Grouper returns an empty grouper.
func NewQ2Grouper() *Q2Grouper {
	return &Q2Grouper{matches: newTokenMap[q2Match](), wide: map[string][2]schema.Number{}}
}

// Apply groups one batch.
func (g *Q2Grouper) Apply(stream string, rows *wololov1.RowBatch, _ stage.Emitter) error {
	p := rows.GetPlayers()
	if p == nil {
		return wrongKind(stream, rows, "players")
	}
	return batch.EachPlayer(p, func(p *batch.Player) {
		m, _ := g.matches.get(p.Match)
		if m.rows < 2 {
			side := q2Side{winner: p.Winner, hasRating: p.HasRating}
			if p.HasRating {
				if u, ok := p.Rating.Units(); ok {
					side.units = u
				} else {
					side.wide = true
					w := g.wide[string(p.Match)]
					w[m.rows] = p.Rating
					g.wide[string(p.Match)] = w
				}
			}
			m.side[m.rows] = side
		}
		if m.rows < 3 {
			m.rows++
		}
		g.matches.put(p.Match, m)
	})
}

// rating returns side i's rating of a match.
func (g *Q2Grouper) rating(token []byte, m q2Match, i int) schema.Number {
	if m.side[i].wide {
		return g.wide[string(token)][i]
	}
	return schema.NumberFromUnits(m.side[i].units)
}

// qualifies applies Q2's test to a match's group.
func (g *Q2Grouper) qualifies(token []byte, m q2Match) bool {
	a, b := m.side[0], m.side[1]
	if m.rows != 2 || !a.hasRating || !b.hasRating {
		return false
	}
	var w, l int
	switch {
	case a.winner == batch.True && b.winner == batch.False:
		w, l = 0, 1
	case a.winner == batch.False && b.winner == batch.True:
		w, l = 1, 0
	default:
		return false
	}
	return Q2Weaker(g.rating(token, m, w), g.rating(token, m, l))
}

// Q2Weaker is Q2's rating test: the winner is above 1000 and at least 30%
// below the loser (10 × winner ≤ 7 × loser, exactly).
func Q2Weaker(winner, loser schema.Number) bool {
	return winner.CmpInt(1000) > 0 && schema.MulCmp(10, winner, 7, loser) <= 0
}

// Finish emits the qualifying matches in token order.
func (g *Q2Grouper) Finish(out stage.Emitter) error {
	var tokens []string
	g.matches.each(func(token []byte, m q2Match) {
		if g.qualifies(token, m) {
			tokens = append(tokens, string(token))
		}
	})
	sort.Strings(tokens)
	for _, t := range tokens {
		out.Token(Q2Tokens, []byte(t))
	}
	g.matches, g.wide = nil, nil
	return nil
}
