// Package batch builds and reads the columnar row batches (wololo.v1.RowBatch)
// that travel between stages.
//
// Builders append typed rows into packed columns; readers walk a received
// batch row by row without allocating per row, and refuse a batch whose
// columns disagree in length instead of panicking. The row kinds (the
// oneof of RowBatch) are described once, in the table of kinds.go, with
// Builders, one builder of each, which every holder of rows in the data
// path keeps (the stage emitter, a chain's internal streams) and which
// counts, builds and drops rows of every kind. A new row kind is its proto
// message, its builder and reader here, and one entry in that table. This
// package knows the row shapes only: no routing, no I/O, no query logic.
package batch

import (
	"bytes"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/schema"
)

// ErrBadBatch is returned for a batch whose columns are inconsistent.
var ErrBadBatch = errors.New("malformed row batch")

// Tri is a boolean that may be missing; it is also its wire form.
type Tri uint8

// The values of a Tri.
const (
	Missing Tri = 0
	False   Tri = 1
	True    Tri = 2
)

// TriOf converts a parse result.
func TriOf(v, ok bool) Tri {
	switch {
	case !ok:
		return Missing
	case v:
		return True
	default:
		return False
	}
}

// Match is one projected row of matches.csv. Byte slices alias the input.
type Match struct {
	Token, Ladder, Map, Server []byte
	Mirror                     Tri
	AverageRating              schema.Number
	HasAverageRating           bool
	DurationSeconds            int64 // -1 when missing
}

// Player is one projected row of match_players.csv.
type Player struct {
	Match, Civ []byte
	Rating     schema.Number
	HasRating  bool
	Winner     Tri
}

// ---- columns ----

// The builders start each batch's columns with room for the largest batch
// they built so far: batches are cut at the same row count, so a column
// then fills without growing, where growing it from nothing copied it about
// twice over (a tenth of the gateway's CPU at full scale).
type textBuilder struct {
	col        wololov1.TextColumn
	data, ends int // the largest built so far
}

func (t *textBuilder) add(b []byte) {
	t.col.Data = append(t.col.Data, b...)
	t.col.Ends = append(t.col.Ends, uint32(len(t.col.Data)))
}

func (t *textBuilder) build() *wololov1.TextColumn {
	c := &wololov1.TextColumn{Data: t.col.Data, Ends: t.col.Ends}
	t.data, t.ends = max(t.data, len(c.Data)), max(t.ends, len(c.Ends))
	t.col = wololov1.TextColumn{Data: make([]byte, 0, t.data), Ends: make([]uint32, 0, t.ends)}
	return c
}

type dictBuilder struct {
	index map[string]uint32
	// recent maps a cheap hash of a value to its code + 1 (0: none), a
	// direct-mapped cache in front of index: a dictionary column has a
	// few dozen values, and a hit costs a compare instead of a map lookup.
	recent [dictRecent]uint32
	col    wololov1.DictColumn
	codes  int // the most built so far
}

// dictRecent is the size of dictBuilder's cache.
const dictRecent = 256

// recentSlot is where b sits in the cache: from its length and three of
// its bytes.
func recentSlot(b []byte) int {
	n := len(b)
	if n == 0 {
		return 0
	}
	return (n*37 ^ int(b[0])*5 ^ int(b[n/2])*11 ^ int(b[n-1])*29) & (dictRecent - 1)
}

func (d *dictBuilder) add(b []byte) {
	slot := recentSlot(b)
	if c := d.recent[slot]; c != 0 && bytes.Equal(d.col.Dict[c-1], b) {
		d.col.Codes = append(d.col.Codes, c-1)
		return
	}
	code, ok := d.index[string(b)]
	if !ok {
		if d.index == nil {
			d.index = map[string]uint32{}
		}
		code = uint32(len(d.col.Dict))
		d.index[string(b)] = code
		d.col.Dict = append(d.col.Dict, append([]byte(nil), b...))
	}
	d.recent[slot] = code + 1
	d.col.Codes = append(d.col.Codes, code)
}

func (d *dictBuilder) build() *wololov1.DictColumn {
	c := &wololov1.DictColumn{Dict: d.col.Dict, Codes: d.col.Codes}
	d.codes = max(d.codes, len(c.Codes))
	d.col = wololov1.DictColumn{Codes: make([]uint32, 0, d.codes)}
	clear(d.index)
	clear(d.recent[:])
	return c
}

type numberBuilder struct {
	col  wololov1.NumberColumn
	rows int // the most built so far
}

func (n *numberBuilder) add(v schema.Number, ok bool) {
	switch u, fast := v.Units(); {
	case !ok:
		n.col.Kinds = append(n.col.Kinds, 0)
		n.col.Units = append(n.col.Units, 0)
	case fast:
		n.col.Kinds = append(n.col.Kinds, 1)
		n.col.Units = append(n.col.Units, u)
	default:
		n.col.Kinds = append(n.col.Kinds, 2)
		n.col.Units = append(n.col.Units, 0)
		n.col.Wide = append(n.col.Wide, v.String())
	}
}

func (n *numberBuilder) build() *wololov1.NumberColumn {
	c := &wololov1.NumberColumn{Kinds: n.col.Kinds, Units: n.col.Units, Wide: n.col.Wide}
	n.rows = max(n.rows, len(c.Kinds))
	n.col = wololov1.NumberColumn{Kinds: make([]byte, 0, n.rows), Units: make([]int64, 0, n.rows)}
	return c
}

// ---- builders ----

// MatchBuilder accumulates Match rows.
type MatchBuilder struct {
	rows                 int
	token                textBuilder
	ladder, mapName, srv dictBuilder
	mirror               []byte
	rating               numberBuilder
	duration             []int64
	most                 int // rows of the largest batch built so far
}

// Add appends one row.
func (b *MatchBuilder) Add(m *Match) {
	b.rows++
	b.token.add(m.Token)
	b.ladder.add(m.Ladder)
	b.mapName.add(m.Map)
	b.srv.add(m.Server)
	b.mirror = append(b.mirror, byte(m.Mirror))
	b.rating.add(m.AverageRating, m.HasAverageRating)
	b.duration = append(b.duration, m.DurationSeconds)
}

// Len is the number of rows added since the last Build.
func (b *MatchBuilder) Len() int { return b.rows }

// Build returns the batch and resets the builder.
func (b *MatchBuilder) Build() *wololov1.RowBatch {
	rows := &wololov1.MatchRows{
		Token: b.token.build(), Ladder: b.ladder.build(), Map: b.mapName.build(), Server: b.srv.build(),
		Mirror: b.mirror, AverageRating: b.rating.build(), DurationSeconds: b.duration,
	}
	b.most = max(b.most, b.rows)
	b.rows, b.mirror, b.duration = 0, make([]byte, 0, b.most), make([]int64, 0, b.most)
	return &wololov1.RowBatch{Rows: &wololov1.RowBatch_Matches{Matches: rows}}
}

// PlayerBuilder accumulates Player rows.
type PlayerBuilder struct {
	rows   int
	match  textBuilder
	civ    dictBuilder
	rating numberBuilder
	winner []byte
	most   int // rows of the largest batch built so far
}

// Add appends one row.
func (b *PlayerBuilder) Add(p *Player) {
	b.rows++
	b.match.add(p.Match)
	b.civ.add(p.Civ)
	b.rating.add(p.Rating, p.HasRating)
	b.winner = append(b.winner, byte(p.Winner))
}

// Len is the number of rows added since the last Build.
func (b *PlayerBuilder) Len() int { return b.rows }

// Build returns the batch and resets the builder.
func (b *PlayerBuilder) Build() *wololov1.RowBatch {
	rows := &wololov1.PlayerRows{Match: b.match.build(), Civ: b.civ.build(), Rating: b.rating.build(), Winner: b.winner}
	b.most = max(b.most, b.rows)
	b.rows, b.winner = 0, make([]byte, 0, b.most)
	return &wololov1.RowBatch{Rows: &wololov1.RowBatch_Players{Players: rows}}
}

// TokenBuilder accumulates match tokens.
type TokenBuilder struct {
	rows  int
	token textBuilder
}

// Add appends one token.
func (b *TokenBuilder) Add(token []byte) {
	b.rows++
	b.token.add(token)
}

// Len is the number of rows added since the last Build.
func (b *TokenBuilder) Len() int { return b.rows }

// Build returns the batch and resets the builder.
func (b *TokenBuilder) Build() *wololov1.RowBatch {
	rows := &wololov1.TokenRows{Token: b.token.build()}
	b.rows = 0
	return &wololov1.RowBatch{Rows: &wololov1.RowBatch_Tokens{Tokens: rows}}
}

// CivBuilder accumulates per-civilization counters.
type CivBuilder struct{ rows wololov1.CivRows }

// Add appends one civilization's counters.
func (b *CivBuilder) Add(civ string, wins, count int64) {
	b.rows.Civ = append(b.rows.Civ, []byte(civ))
	b.rows.Wins = append(b.rows.Wins, wins)
	b.rows.Count = append(b.rows.Count, count)
}

// Len is the number of rows added since the last Build.
func (b *CivBuilder) Len() int { return len(b.rows.Civ) }

// Build returns the batch and resets the builder.
func (b *CivBuilder) Build() *wololov1.RowBatch {
	rows := &wololov1.CivRows{Civ: b.rows.Civ, Wins: b.rows.Wins, Count: b.rows.Count}
	b.rows = wololov1.CivRows{}
	return &wololov1.RowBatch{Rows: &wololov1.RowBatch_Civs{Civs: rows}}
}

// ---- readers ----

func checkText(c *wololov1.TextColumn, n int, name string) error {
	if len(c.GetEnds()) != n {
		return fmt.Errorf("%w: column %s has %d rows, want %d", ErrBadBatch, name, len(c.GetEnds()), n)
	}
	prev := uint32(0)
	for _, e := range c.GetEnds() {
		if e < prev || int(e) > len(c.GetData()) {
			return fmt.Errorf("%w: column %s has a bad offset", ErrBadBatch, name)
		}
		prev = e
	}
	return nil
}

func textAt(c *wololov1.TextColumn, i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = c.Ends[i-1]
	}
	return c.Data[start:c.Ends[i]]
}

// dictView is a batch's dictionary: codes index it.
type dictView [][]byte

func checkDict(c *wololov1.DictColumn, n int, name string) (dictView, error) {
	if len(c.GetCodes()) != n {
		return nil, fmt.Errorf("%w: column %s has %d rows, want %d", ErrBadBatch, name, len(c.GetCodes()), n)
	}
	for _, code := range c.GetCodes() {
		if int(code) >= len(c.GetDict()) {
			return nil, fmt.Errorf("%w: column %s has code %d beyond its dictionary", ErrBadBatch, name, code)
		}
	}
	return c.GetDict(), nil
}

type numberView struct {
	col  *wololov1.NumberColumn
	wide []schema.Number
}

func checkNumbers(c *wololov1.NumberColumn, n int, name string) (numberView, error) {
	if len(c.GetKinds()) != n || len(c.GetUnits()) != n {
		return numberView{}, fmt.Errorf("%w: column %s has %d/%d rows, want %d", ErrBadBatch, name, len(c.GetKinds()), len(c.GetUnits()), n)
	}
	v := numberView{col: c}
	wides := 0
	for _, k := range c.GetKinds() {
		if k > 2 {
			return numberView{}, fmt.Errorf("%w: column %s has kind %d", ErrBadBatch, name, k)
		}
		if k == 2 {
			wides++
		}
	}
	if wides != len(c.GetWide()) {
		return numberView{}, fmt.Errorf("%w: column %s has %d wide values, want %d", ErrBadBatch, name, len(c.GetWide()), wides)
	}
	for _, s := range c.GetWide() {
		num, ok := schema.ParseNumber([]byte(s))
		if !ok {
			return numberView{}, fmt.Errorf("%w: column %s has wide value %q", ErrBadBatch, name, s)
		}
		v.wide = append(v.wide, num)
	}
	return v, nil
}

// at returns row i's number; wideNext tracks the position in the wide list.
func (v numberView) at(i int, wideNext *int) (schema.Number, bool) {
	switch v.col.Kinds[i] {
	case 1:
		return schema.NumberFromUnits(v.col.Units[i]), true
	case 2:
		n := v.wide[*wideNext]
		*wideNext++
		return n, true
	default:
		return schema.Number{}, false
	}
}

func checkTris(b []byte, n int, name string) error {
	if len(b) != n {
		return fmt.Errorf("%w: column %s has %d rows, want %d", ErrBadBatch, name, len(b), n)
	}
	for _, t := range b {
		if t > 2 {
			return fmt.Errorf("%w: column %s has value %d", ErrBadBatch, name, t)
		}
	}
	return nil
}

// Encode returns rb's proto encoding, sized once and allocated to fit, and
// its rows. It is the one time a batch is encoded: the store, the sender
// and the receiver's journal keep these bytes, never encoding them again.
func Encode(rb *wololov1.RowBatch) ([]byte, int, error) {
	b, err := proto.Marshal(rb)
	if err != nil {
		return nil, 0, fmt.Errorf("encode a batch of %d rows: %w", Rows(rb), err)
	}
	return b, Rows(rb), nil
}

// EachMatch calls fn for every row of a matches batch. The Match passed to fn
// is reused between calls.
func EachMatch(rows *wololov1.MatchRows, fn func(*Match)) error {
	n := len(rows.GetToken().GetEnds())
	if err := checkText(rows.GetToken(), n, "token"); err != nil {
		return err
	}
	ladders, err := checkDict(rows.GetLadder(), n, "ladder")
	if err != nil {
		return err
	}
	maps, err := checkDict(rows.GetMap(), n, "map")
	if err != nil {
		return err
	}
	servers, err := checkDict(rows.GetServer(), n, "server")
	if err != nil {
		return err
	}
	if err := checkTris(rows.GetMirror(), n, "mirror"); err != nil {
		return err
	}
	ratings, err := checkNumbers(rows.GetAverageRating(), n, "average_rating")
	if err != nil {
		return err
	}
	if len(rows.GetDurationSeconds()) != n {
		return fmt.Errorf("%w: column duration has %d rows, want %d", ErrBadBatch, len(rows.GetDurationSeconds()), n)
	}
	var m Match
	wide := 0
	for i := 0; i < n; i++ {
		m.Token = textAt(rows.Token, i)
		m.Ladder = ladders[rows.Ladder.Codes[i]]
		m.Map = maps[rows.Map.Codes[i]]
		m.Server = servers[rows.Server.Codes[i]]
		m.Mirror = Tri(rows.Mirror[i])
		m.AverageRating, m.HasAverageRating = ratings.at(i, &wide)
		m.DurationSeconds = rows.DurationSeconds[i]
		fn(&m)
	}
	return nil
}

// EachPlayer calls fn for every row of a players batch. The Player passed to
// fn is reused between calls.
func EachPlayer(rows *wololov1.PlayerRows, fn func(*Player)) error {
	n := len(rows.GetMatch().GetEnds())
	if err := checkText(rows.GetMatch(), n, "match"); err != nil {
		return err
	}
	civs, err := checkDict(rows.GetCiv(), n, "civ")
	if err != nil {
		return err
	}
	ratings, err := checkNumbers(rows.GetRating(), n, "rating")
	if err != nil {
		return err
	}
	if err := checkTris(rows.GetWinner(), n, "winner"); err != nil {
		return err
	}
	var p Player
	wide := 0
	for i := 0; i < n; i++ {
		p.Match = textAt(rows.Match, i)
		p.Civ = civs[rows.Civ.Codes[i]]
		p.Rating, p.HasRating = ratings.at(i, &wide)
		p.Winner = Tri(rows.Winner[i])
		fn(&p)
	}
	return nil
}

// EachToken calls fn for every token of a tokens batch.
func EachToken(rows *wololov1.TokenRows, fn func(token []byte)) error {
	n := len(rows.GetToken().GetEnds())
	if err := checkText(rows.GetToken(), n, "token"); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		fn(textAt(rows.Token, i))
	}
	return nil
}

// EachCiv calls fn for every row of a civs batch.
func EachCiv(rows *wololov1.CivRows, fn func(civ string, wins, count int64)) error {
	n := len(rows.GetCiv())
	if len(rows.GetWins()) != n || len(rows.GetCount()) != n {
		return fmt.Errorf("%w: civ columns have %d/%d/%d rows", ErrBadBatch, n, len(rows.GetWins()), len(rows.GetCount()))
	}
	for i := 0; i < n; i++ {
		fn(string(rows.Civ[i]), rows.Wins[i], rows.Count[i])
	}
	return nil
}
