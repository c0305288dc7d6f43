package operators

import (
	"bytes"
	"slices"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// q2Match is what Q2 keeps per match: the row count (saturating at 3, since
// only "exactly two" matters) and the winner flag and rating of the first
// two rows, field by field so that it packs into 24 bytes. Ratings are kept
// as units (value × 10^6) so that the state holds no pointers; a rating too
// wide for units is flagged wide and lives in Q2Grouper.wide.
type q2Match struct {
	units     [2]int64
	rows      uint8
	winner    [2]batch.Tri
	hasRating [2]bool
	wide      [2]bool
	// joins flags the joins the match qualifies for, when a MatchTable
	// keeps them here (its byte fits in what was the struct's padding).
	joins uint8
}

// Q2Grouper groups player rows by match and, at the end, emits the matches
// in which a much weaker player won a 1v1.
type Q2Grouper struct {
	matches *flatTable[q2Match]
	wide    map[string][2]schema.Number // match → ratings that did not fit in units
	// last is the token of the group entry last returned, and lastGroup
	// that group (nil: none). A MatchTable looks a player row's match up
	// three times in a row (Q2, then Q3 and Q4), and the rows of a match
	// may come together: a compare then saves a probe of a table that is
	// far larger than the CPU's caches. Every insertion goes through
	// entry, which moves the cache to the new group, so the pointer is
	// never one an insertion moved.
	last      []byte
	lastGroup *q2Match
}

// NewQ2Grouper returns an empty grouper.
func NewQ2Grouper() *Q2Grouper {
	return &Q2Grouper{matches: newFlatTable[q2Match](0), wide: map[string][2]schema.Number{}}
}

// Apply groups one batch.
func (g *Q2Grouper) Apply(stream string, rows *wololov1.RowBatch, _ stage.Emitter) error {
	p := rows.GetPlayers()
	if p == nil {
		return wrongKind(stream, rows, "players")
	}
	return batch.EachPlayer(p, g.add)
}

// Rows takes player rows one at a time from an operator chained before the
// grouper (stage.RowSink).
func (g *Q2Grouper) Rows(stage.Emitter) stage.RowFuncs {
	return stage.RowFuncs{Player: func(_ string, p *batch.Player) { g.add(p) }}
}

// entry returns token's group, inserting an empty one if it has none.
func (g *Q2Grouper) entry(token []byte) *q2Match {
	if g.lastGroup != nil && bytes.Equal(token, g.last) {
		return g.lastGroup
	}
	m, _ := g.matches.slot(token)
	g.last, g.lastGroup = append(g.last[:0], token...), m
	return m
}

// lookup returns token's group, or nil if it has none.
func (g *Q2Grouper) lookup(token []byte) *q2Match {
	if g.lastGroup != nil && bytes.Equal(token, g.last) {
		return g.lastGroup
	}
	m, ok := g.matches.find(token)
	if !ok {
		return nil
	}
	g.last, g.lastGroup = append(g.last[:0], token...), m
	return m
}

// add groups one player row.
func (g *Q2Grouper) add(p *batch.Player) {
	m := g.entry(p.Match)
	if m.rows < 2 {
		g.keep(m, p)
	}
	if m.rows < 3 {
		m.rows++
	}
}

// keep records p as row m.rows of its match.
func (g *Q2Grouper) keep(m *q2Match, p *batch.Player) {
	i := m.rows
	m.winner[i], m.hasRating[i] = p.Winner, p.HasRating
	if !p.HasRating {
		return
	}
	if u, ok := p.Rating.Units(); ok {
		m.units[i] = u
		return
	}
	m.wide[i] = true
	w := g.wide[string(p.Match)]
	w[i] = p.Rating
	g.wide[string(p.Match)] = w
}

// rating returns side i's rating of a match.
func (g *Q2Grouper) rating(token []byte, m *q2Match, i int) schema.Number {
	if m.wide[i] {
		return g.wide[string(token)][i]
	}
	return schema.NumberFromUnits(m.units[i])
}

// qualifies applies Q2's test to a match's group.
func (g *Q2Grouper) qualifies(token []byte, m *q2Match) bool {
	if m.rows != 2 || !m.hasRating[0] || !m.hasRating[1] {
		return false
	}
	var w, l int
	switch {
	case m.winner[0] == batch.True && m.winner[1] == batch.False:
		w, l = 0, 1
	case m.winner[0] == batch.False && m.winner[1] == batch.True:
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

// Finish emits the qualifying matches in token order (ascending by bytes;
// the table's own order is arbitrary).
func (g *Q2Grouper) Finish(out stage.Emitter) error {
	var tokens [][]byte // in the table's arena, which no insertion moves now
	g.matches.each(func(token []byte, m *q2Match) {
		if g.qualifies(token, m) {
			tokens = append(tokens, token)
		}
	})
	slices.SortFunc(tokens, bytes.Compare)
	for _, t := range tokens {
		out.Token(Q2Tokens, t)
	}
	g.matches, g.wide, g.lastGroup = nil, nil, nil
	return nil
}
