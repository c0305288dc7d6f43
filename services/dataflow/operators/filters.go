package operators

import (
	"bytes"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/stage"
)

var (
	ladder1v1  = []byte("RM_1v1")
	ladderTeam = []byte("RM_TEAM")
	mapArena   = []byte("arena")
	mapIslands = []byte("islands")
)

// Q1Servers are the servers of Q1.
var Q1Servers = [][]byte{[]byte("koreacentral"), []byte("southeastasia"), []byte("eastus")}

// Q1MinSeconds: Q1 wants matches strictly longer than this.
const Q1MinSeconds = 2 * 60 * 60

// IsQ1 reports whether a match qualifies for Q1.
func IsQ1(m *batch.Match) bool {
	if !m.HasAverageRating || m.AverageRating.CmpInt(2000) <= 0 || m.DurationSeconds <= Q1MinSeconds {
		return false
	}
	for _, s := range Q1Servers {
		if bytes.Equal(m.Server, s) {
			return true
		}
	}
	return false
}

// IsQ3Match reports whether a match row makes its token qualify for Q3.
func IsQ3Match(m *batch.Match) bool {
	return bytes.Equal(m.Ladder, ladder1v1) && bytes.Equal(m.Map, mapArena) && m.Mirror == batch.False
}

// IsQ4Match reports whether a match row makes its token qualify for Q4.
func IsQ4Match(m *batch.Match) bool {
	return bytes.Equal(m.Ladder, ladderTeam) && bytes.Equal(m.Map, mapIslands)
}

// MatchesFilter sends each match token to the queries it qualifies for.
type MatchesFilter struct{}

// Apply filters one batch of matches.
func (f *MatchesFilter) Apply(stream string, rows *wololov1.RowBatch, out stage.Emitter) error {
	m := rows.GetMatches()
	if m == nil {
		return wrongKind(stream, rows, "matches")
	}
	return batch.EachMatch(m, func(m *batch.Match) {
		if IsQ1(m) {
			out.Token(Q1Tokens, m.Token)
		}
		if IsQ3Match(m) {
			out.Token(Q3Matches, m.Token)
		}
		if IsQ4Match(m) {
			out.Token(Q4Matches, m.Token)
		}
	})
}

// Finish has nothing to flush.
func (f *MatchesFilter) Finish(stage.Emitter) error { return nil }

// PlayersFilter sends each player row, cut to the columns each query needs,
// to the queries it can count for.
type PlayersFilter struct{ cut batch.Player }

// Apply filters one batch of players.
func (f *PlayersFilter) Apply(stream string, rows *wololov1.RowBatch, out stage.Emitter) error {
	p := rows.GetPlayers()
	if p == nil {
		return wrongKind(stream, rows, "players")
	}
	return batch.EachPlayer(p, func(p *batch.Player) {
		// Q2 counts every row of a match, missing values included.
		f.cut = batch.Player{Match: p.Match, Rating: p.Rating, HasRating: p.HasRating, Winner: p.Winner}
		out.Player(Q2Players, &f.cut)
		if len(p.Civ) > 0 && p.Winner != batch.Missing {
			f.cut = batch.Player{Match: p.Match, Civ: p.Civ, Winner: p.Winner}
			out.Player(Q3Players, &f.cut)
		}
		if len(p.Civ) > 0 && p.HasRating && p.Rating.CmpInt(2000) > 0 {
			f.cut = batch.Player{Match: p.Match, Civ: p.Civ}
			out.Player(Q4Players, &f.cut)
		}
	})
}

// Finish has nothing to flush.
func (f *PlayersFilter) Finish(stage.Emitter) error { return nil }
