package datagen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/wololo/wololo/services/base/atomicfile"
)

// DefaultMatches is the number of matches generated when Config.Matches is
// zero: the scale of the real dataset (about 10 million player rows).
const DefaultMatches = 3_100_000

// Config selects what Generate writes. The output is a pure function of it.
type Config struct {
	// Matches is the number of distinct match tokens in matches.csv;
	// 0 means DefaultMatches. Orphan player groups (players of matches
	// absent from matches.csv) come on top of it.
	Matches int64
	Seed    int64

	// Layout variants. They change how the files are written, never the
	// data: the query answers are the same with or without them.

	// ShuffleColumns writes both files' columns in a seed-determined
	// order, plus one extra column each that no query uses.
	ShuffleColumns bool
	// CRLF ends lines with \r\n instead of \n.
	CRLF bool
	// QuoteAll wraps every field, headers included, in double quotes.
	// Without it only fields that need it (a comma, as in
	// "1 day, 2:03:04", or a double quote) are quoted.
	QuoteAll bool
}

// Stats describes what Generate wrote.
type Stats struct {
	Matches   int64 // distinct match tokens in matches.csv
	MatchRows int64 // data rows of matches.csv (duplicates included)
	Players   int64 // data rows of match_players.csv
	Bytes     int64 // bytes written to both files, headers included
	Elapsed   time.Duration
}

// Generate writes matches.csv to matches and match_players.csv to players.
// Both writers are buffered internally; they are not closed.
func Generate(cfg Config, matches, players io.Writer) (Stats, error) {
	st, _, err := generate(context.Background(), cfg, matches, players)
	return st, err
}

// WriteDir generates into dir/matches.csv and dir/match_players.csv,
// creating dir if needed. Each file is written under a temporary name and
// put in place durably at the end, match_players.csv last, so a failed run
// never leaves a complete-looking pair.
func WriteDir(cfg Config, dir string) (Stats, error) {
	return WriteDirContext(context.Background(), cfg, dir)
}

// WriteDirContext is WriteDir, stopping with ctx's error when ctx is done.
func WriteDirContext(ctx context.Context, cfg Config, dir string) (Stats, error) {
	if err := validate(cfg); err != nil {
		return Stats{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Stats{}, fmt.Errorf("datagen: create output folder: %w", err)
	}
	matches, err := atomicfile.Create(filepath.Join(dir, "matches.csv"), 0o644)
	if err != nil {
		return Stats{}, fmt.Errorf("datagen: %w", err)
	}
	defer matches.Abort()
	players, err := atomicfile.Create(filepath.Join(dir, "match_players.csv"), 0o644)
	if err != nil {
		return Stats{}, fmt.Errorf("datagen: %w", err)
	}
	defer players.Abort()
	st, _, err := generate(ctx, cfg, matches, players)
	if err != nil {
		return st, err
	}
	for _, f := range []*atomicfile.File{matches, players} {
		if err := f.Commit(); err != nil {
			return st, fmt.Errorf("datagen: %w", err)
		}
	}
	return st, nil
}

func validate(cfg Config) error {
	if cfg.Matches < 0 {
		return fmt.Errorf("datagen: Matches must be positive (0 for the default %d), got %d", DefaultMatches, cfg.Matches)
	}
	return nil
}

// counters records the deliberate irregularities, for the tests.
type counters struct {
	malformedMatchRows  int64
	malformedPlayerRows int64
	duplicateMatchRows  int64
	orphanMatches       int64
	orphanPlayerRows    int64
	threeRowSolos       int64
	twoWinnerSolos      int64
}

// Canonical column indices.
const (
	mToken = iota
	mWinningTeam
	mMirror
	mLadder
	mPatch
	mAverageRating
	mMap
	mMapSize
	mNumPlayers
	mServer
	mDuration
	mExtra
	numMatchFields
)

const (
	pToken = iota
	pMatch
	pRating
	pColor
	pCiv
	pTeam
	pWinner
	pExtra
	numPlayerFields
)

var matchHeader = [numMatchFields]string{
	"token", "winning_team", "mirror", "ladder", "patch", "average_rating",
	"map", "map_size", "num_players", "server", "duration", extraMatchColumn,
}

var playerHeader = [numPlayerFields]string{
	"token", "match", "rating", "color", "civ", "team", "winner", extraPlayerColumn,
}

// Headers returns the columns of the two files the generator writes by
// default (without ShuffleColumns, which also adds an extra column), in
// their order: what a catalog of the default tables names when no file
// is at hand (wololo explain).
func Headers() (matches, players []string) {
	return append([]string(nil), matchHeader[:numMatchFields-1]...), append([]string(nil), playerHeader[:numPlayerFields-1]...)
}

// Match kinds: the common case and the planted ones.
type kind uint8

const (
	kNormal    kind = iota
	kMarathon       // long high-rated match on a Q1 server
	kAvgEdge        // average_rating at or around exactly 2000
	kDur7200        // duration exactly 2:00:00
	kDur7201        // duration exactly 2:00:01
	kQ2Edge         // 1v1 pair on the 10 × winner = 7 × loser line, or winner at 1000
	kUpset          // 1v1 won by a player rated ≥ 30% lower, above 1000
	kNearUpset      // 1v1 won by a weaker player, but by less than 30%
	kLowUpset       // 1v1 upset with the winner at or below 1000
)

// q2Edges are (winner, loser) rating pairs on or next to Q2's boundary.
var q2Edges = [][2]float64{
	{1400, 2000}, {700, 1000}, {1050, 1500}, {1001, 1430}, {1750, 2500},
	{1960, 2800}, {1400.7, 2001}, // exactly 10w = 7l
	{1401, 2000}, {1400, 1999}, {1751, 2500}, {1400.75, 2001}, // just off
	{1000, 1500}, {1000, 2000}, // winner exactly 1000
	{1000.5, 1500}, // winner just above 1000
}

// teamSizes: 75% 2v2, 15% 3v3, 10% 4v4, which with the ladder mix gives
// about 3.24 player rows per match, as in the real dataset.
var teamSizes = [20]int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 6, 6, 6, 8, 8}

var avgEdgeTargets = []float64{2000, 2000, 2000, 1999.5, 2000.5, 2001}

// Number styles: how a rating is written.
const (
	numDot0    = iota // integral values as 1523.0
	numBare           // integral values as 1523
	numMissing        // empty
	numInvalid        // a form the contract rejects, e.g. 1500. or 1.5e+03
)

// Boolean styles.
const (
	boolCanon   = iota // True / False
	boolAlt            // TRUE, false, 1, 0 ...
	boolInvalid        // yes, Y, None ...
	boolMissing        // empty
)

// Duration styles.
const (
	durClock   = iota // H:MM:SS
	durPadded         // HH:MM:SS
	durDays           // N days, H:MM:SS
	durMissing        // empty
	durInvalid        // H:MM, N/A ...
)

// Malformed row kinds.
const (
	badNone = iota
	badDrop
	badMerge
	badExtra
)

type player struct {
	rating float64
	rstyle uint8
	rinv   uint8
	civ    int // -1: empty
	team   int
	color  int
	winner bool
	wstyle uint8
	walt   uint8
}

type pendingRow struct {
	due  int64
	line []byte
}

type gen struct {
	cfg  Config
	src  *rand.PCG
	rnd  *rand.Rand
	xsrc *rand.PCG // values of the extra columns, kept apart from the data stream

	mw, pw *bufio.Writer
	err    error
	eol    string

	mOrder, pOrder []int
	mf             [numMatchFields][]byte
	pf             [numPlayerFields][]byte
	line           []byte

	pool    [][]byte
	poolCap int
	pending []pendingRow
	spare   [][]byte

	ladderP, soloLadderP, soloMapP, teamMapP, serverP, patchP, landCivP, waterCivP *picker

	token   [16]byte
	players [9]player

	st Stats
	c  counters
}

const (
	bufSize  = 1 << 20
	poolRows = 1 << 14 // shuffle window for player rows (~5,000 matches)
)

func generate(ctx context.Context, cfg Config, mw, pw io.Writer) (Stats, counters, error) {
	start := time.Now()
	if err := validate(cfg); err != nil {
		return Stats{}, counters{}, err
	}
	n := cfg.Matches
	if n == 0 {
		n = DefaultMatches
	}
	g := newGen(cfg, mw, pw)
	g.writeHeaders()
	for i := int64(0); i < n; i++ {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return g.st, g.c, err
			}
			if g.err != nil {
				break
			}
		}
		if g.chance(0.003) {
			g.genMatch(i, true)
		}
		g.genMatch(i, false)
		if len(g.pending) > 0 {
			g.emitPending(i, false)
		}
	}
	g.finish()
	g.st.Matches = n
	g.st.Elapsed = time.Since(start)
	if g.err != nil {
		return g.st, g.c, fmt.Errorf("datagen: write: %w", g.err)
	}
	return g.st, g.c, nil
}

func newGen(cfg Config, mw, pw io.Writer) *gen {
	seed := uint64(cfg.Seed)
	g := &gen{
		cfg:     cfg,
		src:     rand.NewPCG(seed, 0x5eed_da7a_9e37_79b9),
		xsrc:    rand.NewPCG(seed, 0xe77a_c01d_0b5e_c0de),
		mw:      bufio.NewWriterSize(mw, bufSize),
		pw:      bufio.NewWriterSize(pw, bufSize),
		eol:     "\n",
		poolCap: poolRows,
	}
	g.rnd = rand.New(g.src)
	if cfg.CRLF {
		g.eol = "\r\n"
	}
	nm, np := numMatchFields-1, numPlayerFields-1
	if cfg.ShuffleColumns {
		nm, np = numMatchFields, numPlayerFields
	}
	g.mOrder, g.pOrder = identity(nm), identity(np)
	if cfg.ShuffleColumns {
		perm := rand.New(rand.NewPCG(seed, 0xc0ffee_5eed))
		shuffleOrder(perm, g.mOrder)
		shuffleOrder(perm, g.pOrder)
	}
	g.ladderP = newPicker(ladderWeights)
	g.soloLadderP = newPicker(soloLadderWeights)
	g.soloMapP = newPicker(soloMapWeights)
	g.teamMapP = newPicker(teamMapWeights)
	g.serverP = newPicker(serverWeights)
	g.patchP = newPicker(patchWeights)
	g.landCivP = newPicker(civLandWeights)
	g.waterCivP = newPicker(civWaterWeights)
	g.pool = make([][]byte, 0, g.poolCap)
	return g
}

func identity(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// shuffleOrder permutes s, never leaving it in its original order.
func shuffleOrder(r *rand.Rand, s []int) {
	r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	for i, v := range s {
		if v != i {
			return
		}
	}
	s[0], s[1] = s[1], s[0]
}

// ---- random helpers ----

func (g *gen) u64() uint64 { return g.src.Uint64() }

// intn returns a value in [0, n) (multiply-shift; the bias is negligible).
func (g *gen) intn(n int) int {
	hi, _ := bits.Mul64(g.src.Uint64(), uint64(n))
	return int(hi)
}

func (g *gen) float() float64 { return float64(g.src.Uint64()>>11) * (1.0 / (1 << 53)) }

func (g *gen) chance(p float64) bool { return g.float() < p }

func (g *gen) norm() float64 { return g.rnd.NormFloat64() }

const tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func (g *gen) newToken(t *[16]byte) {
	a, b := g.src.Uint64(), g.src.Uint64()
	for i := 0; i < 10; i++ {
		t[i] = tokenAlphabet[a&63]
		a >>= 6
	}
	for i := 10; i < 16; i++ {
		t[i] = tokenAlphabet[b&63]
		b >>= 6
	}
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// lin returns a + b*x, rounding the product first: the explicit conversion
// forbids a fused multiply-add, so the output is the same on every
// architecture.
func lin(a, b, x float64) float64 { return a + float64(b*x) }

// ---- one match ----

func (g *gen) pickKind() kind {
	u := g.float()
	switch {
	case u < 0.010:
		return kMarathon
	case u < 0.012:
		return kAvgEdge
	case u < 0.014:
		return kDur7200
	case u < 0.016:
		return kDur7201
	case u < 0.028:
		return kQ2Edge
	case u < 0.053:
		return kUpset
	case u < 0.063:
		return kNearUpset
	case u < 0.068:
		return kLowUpset
	}
	return kNormal
}

func (g *gen) genMatch(i int64, orphan bool) {
	k := g.pickKind()
	var ladder int
	if k >= kQ2Edge {
		ladder = g.soloLadderP.pick(g.u64())
	} else {
		ladder = g.ladderP.pick(g.u64())
	}
	solo := ladders[ladder].solo
	n := 2
	if !solo {
		n = teamSizes[g.intn(len(teamSizes))]
	}
	var mp int
	if solo {
		mp = g.soloMapP.pick(g.u64())
	} else {
		mp = g.teamMapP.pick(g.u64())
	}
	server := g.serverP.pick(g.u64())
	proPick := proServers[g.intn(len(proServers))]
	switch k {
	case kMarathon:
		server = proPick
	case kAvgEdge, kDur7200, kDur7201:
		if g.chance(0.7) {
			server = proPick
		}
	}
	g.newToken(&g.token)

	// messy matches get random missing and odd values; planted boundary
	// matches stay clean so that the boundary is what decides.
	messy := true
	switch k {
	case kAvgEdge, kDur7200, kDur7201, kQ2Edge:
		messy = false
	case kUpset:
		messy = g.chance(0.2)
	}

	ps := g.players[:n]
	for j := range ps {
		ps[j] = player{team: 1 + j*2/n}
	}
	// Ratings.
	exactAvg := false
	switch k {
	case kNormal:
		spread := 75.0
		if solo {
			spread = 100
		}
		g.fillRatings(ps, clamp(lin(1450, 420, g.norm()), 760, 2700), spread)
	case kMarathon:
		g.fillRatings(ps, lin(2100, 500, g.float()), 60)
	case kAvgEdge:
		g.fillExact(ps, avgEdgeTargets[g.intn(len(avgEdgeTargets))])
		exactAvg = true
	case kDur7200, kDur7201:
		if g.chance(0.3) {
			g.fillExact(ps, [...]float64{2000.5, 2001, 2050}[g.intn(3)])
			exactAvg = true
		} else {
			g.fillRatings(ps, lin(2150, 400, g.float()), 40)
		}
	}
	// Winner.
	winTeam := 1
	switch k {
	case kQ2Edge, kUpset, kNearUpset, kLowUpset:
		var w, l float64
		switch k {
		case kQ2Edge:
			e := q2Edges[g.intn(len(q2Edges))]
			w, l = e[0], e[1]
		case kUpset:
			w = float64(1010 + g.intn(891))
			if g.chance(0.05) {
				w = 1000
			}
			l = math.Min(2800, math.Round(w*lin(1.45, 0.45, g.float())))
		case kNearUpset:
			w = float64(1000 + g.intn(1000))
			l = math.Round(w * lin(1.1, 0.32, g.float()))
		case kLowUpset:
			w = float64(700 + g.intn(301))
			l = math.Min(2800, math.Round(w*lin(1.45, 0.55, g.float())))
		}
		winTeam = 1 + g.intn(2)
		ps[winTeam-1].rating, ps[2-winTeam].rating = w, l
		for j := range ps {
			ps[j].rstyle = uint8(g.intn(2)) // numDot0 or numBare
		}
	default:
		var s1, s2 float64
		for j := range ps {
			if ps[j].team == 1 {
				s1 += ps[j].rating
			} else {
				s2 += ps[j].rating
			}
		}
		p1 := 1 / (1 + math.Pow(10, (s2-s1)/float64(n/2)/400))
		if !g.chance(p1) {
			winTeam = 2
		}
	}
	for j := range ps {
		ps[j].winner = ps[j].team == winTeam
	}
	// Civilizations.
	civP := g.landCivP
	if waterMap[mp] {
		civP = g.waterCivP
	}
	pm := 0.02
	if !solo {
		pm = 0.003
	}
	forceMirror := g.chance(pm)
	c0 := civP.pick(g.u64())
	mirror := true
	for j := range ps {
		c := c0
		if j > 0 && !forceMirror {
			c = civP.pick(g.u64())
		}
		ps[j].civ = c
		if c != c0 {
			mirror = false
		}
	}
	// Colors: the first n of a random permutation.
	var colors [8]uint8
	for j := range colors {
		colors[j] = uint8(j)
	}
	for j := range ps {
		r := j + g.intn(8-j)
		colors[j], colors[r] = colors[r], colors[j]
		ps[j].color = int(colors[j])
	}
	// Player-level mess.
	if messy {
		for j := range ps {
			p := &ps[j]
			if !exactAvg && k != kUpset && k != kNearUpset && k != kLowUpset {
				u := g.float()
				switch {
				case u < 0.002:
					p.rating = 2000
				case u < 0.004:
					p.rating = 1000
				case u < 0.034:
					p.rating += float64(0.25 * float64(1+g.intn(3)))
				}
			}
			u := g.float()
			switch {
			case u < 0.031:
				p.rstyle = numMissing
			case u < 0.0313:
				p.rstyle = numInvalid
				p.rinv = uint8(g.intn(numInvalidForms))
			}
			if g.chance(0.005) {
				p.civ = -1
			}
			p.wstyle, p.walt = g.boolStyle(0.015, 0.001, 0.001)
		}
	} else {
		for j := range ps {
			ps[j].wstyle, ps[j].walt = g.boolStyle(0.03, 0, 0)
		}
	}
	rows := n
	if solo && messy {
		u := g.float()
		if k == kUpset {
			u *= 0.05 // the anomaly is the reason this upset is messy
		}
		switch {
		case u < 0.003: // a third row for a 1v1 match
			ps = g.players[:3]
			ps[2] = ps[g.intn(2)]
			rows = 3
			g.c.threeRowSolos++
		case u < 0.006: // both players winners
			ps[0].winner, ps[1].winner = true, true
			g.c.twoWinnerSolos++
		case u < 0.007: // both players losers
			ps[0].winner, ps[1].winner = false, false
		case u < 0.008:
			ps[g.intn(2)].rstyle = numMissing
		case u < 0.009:
			ps[g.intn(2)].wstyle = boolInvalid
		}
	}

	if orphan {
		g.c.orphanMatches++
	} else {
		g.writeMatch(i, k, ladder, mp, server, n, ps[:n], winTeam, mirror, messy, exactAvg)
	}
	for j := 0; j < rows; j++ {
		g.writePlayer(&ps[j])
		if orphan {
			g.c.orphanPlayerRows++
		}
	}
}

// fillRatings draws integral ratings around base.
func (g *gen) fillRatings(ps []player, base, spread float64) {
	for j := range ps {
		ps[j].rating = math.Round(clamp(lin(base, spread, g.norm()), 700, 2800))
		ps[j].rstyle = numDot0
		if g.chance(0.2) {
			ps[j].rstyle = numBare
		}
	}
}

// fillExact draws ratings whose mean is exactly target.
func (g *gen) fillExact(ps []player, target float64) {
	g.fillRatings(ps, target, 60)
	sum := 0.0
	for _, p := range ps[:len(ps)-1] {
		sum += p.rating
	}
	ps[len(ps)-1].rating = float64(target*float64(len(ps))) - sum
}

func (g *gen) boolStyle(alt, invalid, missing float64) (style, which uint8) {
	u := g.float()
	switch {
	case u < alt:
		return boolAlt, uint8(g.intn(len(altTrue)))
	case u < alt+invalid:
		return boolInvalid, uint8(g.intn(len(invalidBools)))
	case u < alt+invalid+missing:
		return boolMissing, 0
	}
	return boolCanon, 0
}

func (g *gen) writeMatch(i int64, k kind, ladder, mp, server, n int, ps []player, winTeam int, mirror, messy, exactAvg bool) {
	f := &g.mf
	for j := range f {
		f[j] = f[j][:0]
	}
	f[mToken] = append(f[mToken], g.token[:]...)
	f[mWinningTeam] = strconv.AppendInt(f[mWinningTeam], int64(winTeam), 10)

	ms, malt := uint8(boolCanon), uint8(0)
	if messy {
		ms, malt = g.boolStyle(0.025, 0.003, 0.002)
	}
	f[mMirror] = appendBool(f[mMirror], mirror, ms, malt)

	lname, mname := ladders[ladder].name, mapNames[mp]
	if messy && g.chance(0.001) { // text is case-sensitive: these match no query
		if g.chance(0.5) {
			lname = caseVariant(lname)
		} else {
			mname = caseVariant(mname)
		}
	}
	f[mLadder] = append(f[mLadder], lname...)
	f[mPatch] = strconv.AppendInt(f[mPatch], int64(patches[g.patchP.pick(g.u64())]), 10)

	// average_rating: the mean of the ratings when all are present.
	sum, present := 0.0, 0
	for _, p := range ps {
		if p.rstyle != numMissing {
			sum += p.rating
			present++
		}
	}
	astyle := uint8(numDot0)
	if exactAvg {
		astyle = uint8(g.intn(2))
	} else if g.chance(0.15) {
		astyle = numBare
	}
	var ainv uint8
	if present < len(ps) && (present == 0 || g.chance(0.5)) {
		astyle = numMissing
	}
	if messy {
		u := g.float()
		switch {
		case u < 0.015:
			astyle = numMissing
		case u < 0.0153:
			astyle = numInvalid
			ainv = uint8(g.intn(numInvalidForms))
		}
	}
	if present > 0 {
		f[mAverageRating] = appendNumber(f[mAverageRating], sum/float64(present), astyle, ainv)
	}

	f[mMap] = append(f[mMap], mname...)
	f[mMapSize] = append(f[mMapSize], mapSize(n, g.float())...)
	f[mNumPlayers] = strconv.AppendInt(f[mNumPlayers], int64(n), 10)
	f[mServer] = append(f[mServer], serverNames[server]...)

	secs, dstyle := g.duration(k, n, messy)
	f[mDuration] = appendDuration(f[mDuration], secs, dstyle)
	if g.cfg.ShuffleColumns {
		f[mExtra] = strconv.AppendUint(f[mExtra], 100_000_000+g.xsrc.Uint64()%900_000_000, 10)
	}

	bad, pos := g.malformed(len(g.mOrder))
	g.line = g.appendRow(g.line[:0], f[:], g.mOrder, bad, pos)
	if bad != badNone {
		g.c.malformedMatchRows++
	}
	g.writeMatchLine(g.line)

	// Duplicated match rows: usually identical, sometimes with another
	// duration; written right away or some matches later.
	if g.chance(0.005) {
		if g.chance(0.2) {
			secs, dstyle := g.duration(k, n, true)
			f[mDuration] = appendDuration(f[mDuration][:0], secs, dstyle)
			g.line = g.appendRow(g.line[:0], f[:], g.mOrder, badNone, 0)
		}
		g.c.duplicateMatchRows++
		if g.chance(0.5) {
			g.writeMatchLine(g.line)
		} else {
			var buf []byte
			if n := len(g.spare); n > 0 {
				buf, g.spare = g.spare[n-1][:0], g.spare[:n-1]
			}
			g.pending = append(g.pending, pendingRow{due: i + 1 + int64(g.intn(2000)), line: append(buf, g.line...)})
		}
	}
}

func (g *gen) duration(k kind, n int, messy bool) (int64, int) {
	switch k {
	case kDur7200, kDur7201:
		s := int64(7200)
		if k == kDur7201 {
			s = 7201
		}
		if g.chance(0.1) {
			return s, durPadded
		}
		return s, durClock
	case kMarathon, kAvgEdge:
		s := int64(7201 + g.intn(5400))
		u := g.float()
		switch {
		case messy && u < 0.01:
			return 0, durMissing
		case u < 0.15:
			return int64(1+g.intn(3))*86400 + int64(g.intn(86400)), durDays
		}
		return s, durClock
	}
	u := g.float()
	if messy {
		switch {
		case u < 0.005:
			return 0, durMissing
		case u < 0.0055:
			return int64(g.intn(numInvalidDurations)), durInvalid
		case u < 0.0155:
			days := int64(1)
			switch v := g.float(); {
			case v < 0.25:
				days = int64(2 + g.intn(4))
			case v < 0.30:
				days = int64(6 + g.intn(15))
			}
			return days*86400 + int64(g.intn(86400)), durDays
		}
	}
	m := 1.0
	if n > 2 {
		m = 1.15
	}
	s := int64(lin(240, m, math.Exp(lin(7.4, 0.5, g.norm()))))
	if s > 10800 {
		s = 7200 + int64(g.intn(3600))
	}
	if g.chance(0.01) {
		return s, durPadded
	}
	return s, durClock
}

func mapSize(n int, u float64) string {
	switch n {
	case 2:
		if u < 0.9 {
			return "tiny"
		}
		return "small"
	case 4:
		if u < 0.8 {
			return "small"
		}
		return "medium"
	case 6:
		return "medium"
	}
	if u < 0.7 {
		return "normal"
	}
	return "large"
}

func caseVariant(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
			return string(b)
		case 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
			return string(b)
		}
	}
	return s
}

func (g *gen) writePlayer(p *player) {
	f := &g.pf
	for j := range f {
		f[j] = f[j][:0]
	}
	var tok [16]byte
	g.newToken(&tok)
	f[pToken] = append(f[pToken], tok[:]...)
	f[pMatch] = append(f[pMatch], g.token[:]...)
	f[pRating] = appendNumber(f[pRating], p.rating, p.rstyle, p.rinv)
	f[pColor] = append(f[pColor], colorNames[p.color]...)
	if p.civ >= 0 {
		f[pCiv] = append(f[pCiv], civNames[p.civ]...)
	}
	f[pTeam] = strconv.AppendInt(f[pTeam], int64(p.team), 10)
	f[pWinner] = appendBool(f[pWinner], p.winner, p.wstyle, p.walt)
	if g.cfg.ShuffleColumns {
		f[pExtra] = append(f[pExtra], playerNames[g.xsrc.Uint64()%uint64(len(playerNames))]...)
	}
	bad, pos := g.malformed(len(g.pOrder))
	if bad != badNone {
		g.c.malformedPlayerRows++
	}
	// Through the shuffle window: once it is full, a random earlier row
	// leaves it for every row that enters.
	var slot *[]byte
	if len(g.pool) < g.poolCap {
		g.pool = append(g.pool, make([]byte, 0, 96))
		slot = &g.pool[len(g.pool)-1]
	} else {
		slot = &g.pool[g.intn(g.poolCap)]
		g.writePlayerLine(*slot)
	}
	*slot = g.appendRow((*slot)[:0], f[:], g.pOrder, bad, pos)
}

// malformed decides whether the next row gets the wrong number of fields.
func (g *gen) malformed(nfields int) (bad, pos int) {
	if !g.chance(0.0001) {
		return badNone, 0
	}
	bad = 1 + g.intn(3)
	if bad == badMerge {
		return bad, g.intn(nfields - 1)
	}
	return bad, g.intn(nfields)
}

func (g *gen) writeMatchLine(b []byte) {
	g.st.MatchRows++
	g.st.Bytes += int64(len(b))
	if _, err := g.mw.Write(b); err != nil && g.err == nil {
		g.err = err
	}
}

func (g *gen) writePlayerLine(b []byte) {
	g.st.Players++
	g.st.Bytes += int64(len(b))
	if _, err := g.pw.Write(b); err != nil && g.err == nil {
		g.err = err
	}
}

func (g *gen) emitPending(i int64, all bool) {
	kept := g.pending[:0]
	for _, p := range g.pending {
		if all || p.due <= i {
			g.writeMatchLine(p.line)
			g.spare = append(g.spare, p.line)
		} else {
			kept = append(kept, p)
		}
	}
	g.pending = kept
}

func (g *gen) writeHeaders() {
	var mh [numMatchFields][]byte
	for i, s := range matchHeader {
		mh[i] = []byte(s)
	}
	var ph [numPlayerFields][]byte
	for i, s := range playerHeader {
		ph[i] = []byte(s)
	}
	for _, w := range []struct {
		bw     *bufio.Writer
		fields [][]byte
		order  []int
	}{{g.mw, mh[:], g.mOrder}, {g.pw, ph[:], g.pOrder}} {
		line := g.appendRow(nil, w.fields, w.order, badNone, 0)
		g.st.Bytes += int64(len(line))
		if _, err := w.bw.Write(line); err != nil && g.err == nil {
			g.err = err
		}
	}
}

func (g *gen) finish() {
	g.emitPending(0, true)
	// Drain the shuffle window in random order.
	for n := len(g.pool); n > 0; n-- {
		j := g.intn(n)
		g.writePlayerLine(g.pool[j])
		g.pool[j] = g.pool[n-1]
	}
	g.pool = g.pool[:0]
	for _, w := range []*bufio.Writer{g.mw, g.pw} {
		if err := w.Flush(); err != nil && g.err == nil {
			g.err = err
		}
	}
}

// ---- formatting ----

// appendRow appends one CSV record: fields in the given order, then the
// line ending. bad/pos make it malformed: drop the field at output
// position pos, merge it with the next one (a missing comma), or put an
// extra empty field before it (an extra comma).
func (g *gen) appendRow(dst []byte, fields [][]byte, order []int, bad, pos int) []byte {
	if bad == badMerge && !g.cfg.QuoteAll && (needsQuote(fields[order[pos]]) || needsQuote(fields[order[pos+1]])) {
		bad = badDrop // a merged quoted field would not be valid CSV at all
	}
	first := true
	for k, idx := range order {
		if bad == badDrop && k == pos {
			continue
		}
		if !first && !(bad == badMerge && k == pos+1) {
			dst = append(dst, ',')
		}
		first = false
		if bad == badExtra && k == pos {
			dst = append(dst, ',')
		}
		dst = appendField(dst, fields[idx], g.cfg.QuoteAll)
	}
	return append(dst, g.eol...)
}

func needsQuote(f []byte) bool {
	for _, c := range f {
		if c == ',' || c == '"' || c == '\n' || c == '\r' {
			return true
		}
	}
	return false
}

func appendField(dst, f []byte, quote bool) []byte {
	if !quote && !needsQuote(f) {
		return append(dst, f...)
	}
	dst = append(dst, '"')
	for _, c := range f {
		if c == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, c)
	}
	return append(dst, '"')
}

func appendBool(dst []byte, v bool, style, which uint8) []byte {
	switch style {
	case boolAlt:
		if v {
			return append(dst, altTrue[which]...)
		}
		return append(dst, altFalse[which]...)
	case boolInvalid:
		return append(dst, invalidBools[which]...)
	case boolMissing:
		return dst
	}
	if v {
		return append(dst, "True"...)
	}
	return append(dst, "False"...)
}

const numInvalidForms = 6

// appendNumber writes a rating. Integral values follow style (1523.0 or
// 1523); others are written in full (1523.25, 1523.3333333333333).
func appendNumber(dst []byte, v float64, style, inv uint8) []byte {
	switch style {
	case numMissing:
		return dst
	case numInvalid:
		iv := int64(math.Round(v))
		switch inv {
		case 0:
			return append(strconv.AppendInt(dst, iv, 10), '.') // 1500.
		case 1:
			return strconv.AppendFloat(dst, v, 'e', -1, 64) // 1.5e+03
		case 2:
			return strconv.AppendInt(append(dst, '+'), iv, 10) // +1500
		case 3:
			return append(dst, "NaN"...)
		case 4:
			return append(dst, "N/A"...)
		default: // 1,500 (quoted in the file)
			dst = strconv.AppendInt(dst, iv/1000, 10)
			dst = append(dst, ',')
			r := iv % 1000
			return append(dst, byte('0'+r/100), byte('0'+r/10%10), byte('0'+r%10))
		}
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		dst = strconv.AppendInt(dst, int64(v), 10)
		if style == numDot0 {
			dst = append(dst, ".0"...)
		}
		return dst
	}
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}

const numInvalidDurations = 3

func appendDuration(dst []byte, secs int64, style int) []byte {
	switch style {
	case durMissing:
		return dst
	case durInvalid:
		switch secs {
		case 0:
			return append(dst, "0:42"...) // H:MM
		case 1:
			return append(dst, "N/A"...)
		default:
			return append(dst, "unknown"...)
		}
	case durDays:
		days := secs / 86400
		dst = strconv.AppendInt(dst, days, 10)
		if days == 1 {
			dst = append(dst, " day, "...)
		} else {
			dst = append(dst, " days, "...)
		}
		secs %= 86400
	}
	h, m, s := secs/3600, secs/60%60, secs%60
	if style == durPadded && h < 10 {
		dst = append(dst, '0')
	}
	dst = strconv.AppendInt(dst, h, 10)
	return append(dst, ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+s/10), byte('0'+s%10))
}
