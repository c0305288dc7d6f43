package operators

import (
	"sort"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// civCount is a civilization's counters: wins (Q3 only) and rows.
type civCount struct{ wins, count int64 }

// pendingPlayer is a player row that arrived before all qualifying matches.
type pendingPlayer struct {
	match, civ string
	win        bool
}

// Joiner joins qualifying match tokens with player rows on the match token
// and counts the joined rows per civilization. Until the match stream ends
// it buffers player rows (their match may still qualify); after that it
// counts each player row as it arrives and keeps no rows at all. Clients
// upload matches.csv first, so the buffer stays small in practice.
type Joiner struct {
	matchStream, playerStream, out string
	qualifying                     matchSet
	matchesDone                    bool
	pending                        []pendingPlayer
	civs                           map[string]*civCount
	names                          map[string]string
}

// matchSet is the set of qualifying match tokens a joiner keeps: a
// tokenSet of its own, or its flag in a MatchTable's groups.
type matchSet interface {
	add(token []byte)
	has(token []byte) bool
}

// NewJoiner returns a joiner of the two streams, emitting on out.
func NewJoiner(matchStream, playerStream, out string) *Joiner {
	return newJoiner(matchStream, playerStream, out, newTokenSet(0))
}

func newJoiner(matchStream, playerStream, out string, qualifying matchSet) *Joiner {
	return &Joiner{
		matchStream: matchStream, playerStream: playerStream, out: out,
		qualifying: qualifying, civs: map[string]*civCount{}, names: map[string]string{},
	}
}

func (j *Joiner) count(civ string, win bool) {
	c, ok := j.civs[civ]
	if !ok {
		c = &civCount{}
		j.civs[civ] = c
	}
	c.count++
	if win {
		c.wins++
	}
}

// internCiv returns one shared string per civilization name, so buffered
// rows do not each hold a copy.
func (j *Joiner) internCiv(civ []byte) string {
	if s, ok := j.names[string(civ)]; ok {
		return s
	}
	s := string(civ)
	j.names[s] = s
	return s
}

// Apply takes one batch of either stream.
func (j *Joiner) Apply(stream string, rows *wololov1.RowBatch, _ stage.Emitter) error {
	switch stream {
	case j.matchStream:
		t := rows.GetTokens()
		if t == nil {
			return wrongKind(stream, rows, "tokens")
		}
		return batch.EachToken(t, j.addMatch)
	default:
		p := rows.GetPlayers()
		if p == nil {
			return wrongKind(stream, rows, "players")
		}
		return batch.EachPlayer(p, j.addPlayer)
	}
}

// Rows takes rows one at a time from an operator chained before the joiner
// (stage.RowSink): qualifying match tokens and player rows.
func (j *Joiner) Rows(stage.Emitter) stage.RowFuncs {
	return stage.RowFuncs{
		Token:  func(_ string, token []byte) { j.addMatch(token) },
		Player: func(_ string, p *batch.Player) { j.addPlayer(p) },
	}
}

func (j *Joiner) addMatch(token []byte) { j.qualifying.add(token) }

func (j *Joiner) addPlayer(p *batch.Player) {
	win := p.Winner == batch.True
	if !j.matchesDone {
		j.pending = append(j.pending, pendingPlayer{match: string(p.Match), civ: j.internCiv(p.Civ), win: win})
		return
	}
	if j.qualifying.has(p.Match) {
		j.count(j.internCiv(p.Civ), win)
	}
}

// EndStream: once every qualifying match is known, the buffered players are
// counted and dropped.
func (j *Joiner) EndStream(stream string, _ stage.Emitter) error {
	if stream != j.matchStream {
		return nil
	}
	j.matchesDone = true
	for _, p := range j.pending {
		if j.qualifying.has([]byte(p.match)) {
			j.count(p.civ, p.win)
		}
	}
	j.pending = nil
	return nil
}

// Finish emits the partial counters, by civilization name.
func (j *Joiner) Finish(out stage.Emitter) error {
	if !j.matchesDone {
		_ = j.EndStream(j.matchStream, out)
	}
	emitCivs(out, j.out, j.civs)
	j.qualifying, j.civs = nil, nil
	return nil
}

func emitCivs(out stage.Emitter, stream string, civs map[string]*civCount) {
	names := make([]string, 0, len(civs))
	for civ, c := range civs {
		if c.count > 0 {
			names = append(names, civ)
		}
	}
	sort.Strings(names)
	for _, civ := range names {
		out.Civ(stream, civ, civs[civ].wins, civs[civ].count)
	}
}

// Aggregator sums partial counters per civilization; with top > 0 it emits
// only the top civilizations by count (ties by name).
type Aggregator struct {
	out  string
	top  int
	civs map[string]*civCount
}

// NewAggregator returns an empty aggregator.
func NewAggregator(out string, top int) *Aggregator {
	return &Aggregator{out: out, top: top, civs: map[string]*civCount{}}
}

// Apply adds one batch of partials.
func (a *Aggregator) Apply(stream string, rows *wololov1.RowBatch, _ stage.Emitter) error {
	return addCivs(a.civs, stream, rows)
}

// AppendSnapshot writes the totals as one civ row batch (sorted by name, so
// the same state always gives the same bytes).
func (a *Aggregator) AppendSnapshot(dst []byte) ([]byte, error) {
	names := make([]string, 0, len(a.civs))
	for civ := range a.civs {
		names = append(names, civ)
	}
	sort.Strings(names)
	var b batch.CivBuilder
	for _, civ := range names {
		b.Add(civ, a.civs[civ].wins, a.civs[civ].count)
	}
	return proto.MarshalOptions{}.MarshalAppend(dst, b.Build())
}

// Restore reads a snapshot into an empty aggregator.
func (a *Aggregator) Restore(state []byte) error {
	var rows wololov1.RowBatch
	if err := proto.Unmarshal(state, &rows); err != nil {
		return err
	}
	return addCivs(a.civs, "snapshot", &rows)
}

// addCivs adds a batch of per-civilization counters into totals.
func addCivs(totals map[string]*civCount, stream string, rows *wololov1.RowBatch) error {
	c := rows.GetCivs()
	if c == nil {
		return wrongKind(stream, rows, "civs")
	}
	return batch.EachCiv(c, func(civ string, wins, count int64) {
		t, ok := totals[civ]
		if !ok {
			t = &civCount{}
			totals[civ] = t
		}
		t.wins += wins
		t.count += count
	})
}

// Finish emits the totals.
func (a *Aggregator) Finish(out stage.Emitter) error {
	if a.top <= 0 {
		emitCivs(out, a.out, a.civs)
		return nil
	}
	for _, r := range TopCivs(a.civs, a.top) {
		out.Civ(a.out, r.Civ, r.Wins, r.Count)
	}
	return nil
}

// CivRow is one civilization's totals.
type CivRow struct {
	Civ         string
	Wins, Count int64
}

// TopCivs orders civilizations by count descending, then name ascending,
// and keeps the first n.
func TopCivs(civs map[string]*civCount, n int) []CivRow {
	rows := make([]CivRow, 0, len(civs))
	for civ, c := range civs {
		rows = append(rows, CivRow{Civ: civ, Wins: c.wins, Count: c.count})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Count != rows[j].Count {
			return rows[i].Count > rows[j].Count
		}
		return rows[i].Civ < rows[j].Civ
	})
	if len(rows) > n {
		rows = rows[:n]
	}
	return rows
}
