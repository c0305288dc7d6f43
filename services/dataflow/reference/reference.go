package reference

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"sort"
	"strings"

	"github.com/wololo/wololo/services/dataflow/schema"
)

// Logical file names used in errors by Evaluate.
const (
	MatchesFile = "matches.csv"
	PlayersFile = "match_players.csv"
)

// Required columns, in the order docs/queries.md lists them (the first missing
// one is the one reported).
var (
	matchesColumns = []string{"token", "ladder", "mirror", "average_rating", "map", "server", "duration"}
	playersColumns = []string{"match", "rating", "civ", "winner"}
)

// Q1's servers.
var q1Servers = map[string]bool{"koreacentral": true, "southeastasia": true, "eastus": true}

// Constants of the comparisons.
var (
	rat1000 = big.NewRat(1000, 1)
	rat2000 = big.NewRat(2000, 1)
	rat7    = big.NewRat(7, 1)
	rat10   = big.NewRat(10, 1)
	sec7200 = big.NewInt(7200)
)

// Report counts the data records of each file.
type Report struct {
	Matches, Players FileReport
}

// FileReport is one file's counts.
type FileReport struct {
	// Rows is the number of data records read, malformed ones included,
	// the header excluded. (Blank lines are not records.)
	Rows int64
	// Malformed is the number of records skipped because their field count
	// differs from the header's or because they are not valid CSV.
	Malformed int64
}

// Result is the four queries' answers, each its result file byte for
// byte, and the report.
type Result struct {
	// Answers are by query name, q1..q4: the names of the default
	// queries' files (queries.Names, which a test of that package keeps
	// equal to these keys).
	Answers map[string][]byte
	Report  Report
}

// Files are the answers by result file name (schema.ResultFile:
// q1.csv..q4.csv).
func (r Result) Files() map[string][]byte {
	out := make(map[string][]byte, len(r.Answers))
	for q, data := range r.Answers {
		out[schema.ResultFile(q)] = data
	}
	return out
}

// Evaluate answers the four queries over matches.csv and match_players.csv
// read from the two readers. Errors name the files "matches.csv" and
// "match_players.csv".
func Evaluate(matches, players io.Reader) (Result, error) {
	return evaluate(context.Background(), MatchesFile, matches, PlayersFile, players, MaxRecordBytes)
}

// MaxRecordBytes is the contract's default bound on one data record, the
// system's schema.MaxRecordBytes (a test keeps them equal): a longer record
// is malformed, skipped and counted.
const MaxRecordBytes = 1 << 20

// EvaluateFiles is Evaluate over two files; errors name the paths given.
func EvaluateFiles(matchesPath, playersPath string) (Result, error) {
	return evaluateFiles(context.Background(), matchesPath, playersPath, MaxRecordBytes)
}

func evaluateFiles(ctx context.Context, matchesPath, playersPath string, maxRecord int) (Result, error) {
	m, err := os.Open(matchesPath)
	if err != nil {
		return Result{}, err
	}
	defer m.Close()
	p, err := os.Open(playersPath)
	if err != nil {
		return Result{}, err
	}
	defer p.Close()
	return evaluate(ctx, matchesPath, m, playersPath, p, maxRecord)
}

// table is one input file being read: its CSV reader, header and counts.
type table struct {
	name   string
	r      *csv.Reader
	width  int            // the header's field count
	max    int            // a longer record is malformed
	col    map[string]int // required column -> index
	report FileReport
}

// maxHeaderBytes is the contract's bound on a header row, the same as the
// system's schema.MaxHeaderBytes (a test keeps them equal; the reference
// shares no code with the system it checks).
const maxHeaderBytes = 1 << 20

// openTable strips a UTF-8 BOM, reads the header and finds the required
// columns by exact name; a required one must appear once, and the header
// be at most maxHeaderBytes.
func openTable(name string, in io.Reader, required []string) (*table, error) {
	br := bufio.NewReaderSize(in, 1<<16)
	if bom, err := br.Peek(3); err == nil && bytes.Equal(bom, []byte("\xEF\xBB\xBF")) {
		br.Discard(3)
	}
	r := csv.NewReader(br)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	header, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: no header row", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	size := 0
	index := map[string]int{}
	count := map[string]int{}
	for i, h := range header {
		size += len(h) + 1
		count[h]++
		if _, dup := index[h]; !dup {
			index[h] = i
		}
	}
	if size > maxHeaderBytes {
		return nil, fmt.Errorf("%s: the header row is longer than %d bytes: not a CSV header (is it the right file?)", name, maxHeaderBytes)
	}
	t := &table{name: name, r: r, width: len(header), col: map[string]int{}}
	for _, c := range required {
		i, ok := index[c]
		if !ok {
			return nil, fmt.Errorf("%s: header has no %q column", name, c)
		}
		if count[c] > 1 {
			return nil, fmt.Errorf("%s: header has the %q column twice", name, c)
		}
		t.col[c] = i
	}
	return t, nil
}

// each calls fn with every well-formed data record, counting rows and
// malformed ones. The record is reused: fn must clone what it keeps.
func (t *table) each(ctx context.Context, fn func(rec []string)) error {
	for {
		from := t.r.InputOffset()
		rec, err := t.r.Read()
		if err == io.EOF {
			return nil
		}
		var perr *csv.ParseError
		switch {
		case t.max > 0 && t.r.InputOffset()-from > int64(t.max):
			t.report.Rows++ // too long a record: malformed, whatever it holds
			t.report.Malformed++
			continue
		case errors.As(err, &perr):
			t.report.Rows++
			t.report.Malformed++
			continue
		case err != nil:
			return fmt.Errorf("%s: %w", t.name, err)
		}
		t.report.Rows++
		if len(rec) != t.width {
			t.report.Malformed++
			continue
		}
		if t.report.Rows%(1<<16) == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		fn(rec)
	}
}

// pairState is Q2's state of one match. The first row's winner flag and
// rating text are kept until the second row arrives; the pair is judged
// then and the text dropped; a third row rules the match out for good.
type pairState struct {
	rows        uint8  // 0, 1, 2, or 3 for "more than two"
	firstWinner int8   // the first row's winner: 1 true, 0 false, -1 missing
	qualifies   bool   // with rows == 2: the two rows make a qualifying pair
	firstRating string // the first row's rating if it is a number, else ""
}

// winnerCode is a winner value as pairState keeps it.
func winnerCode(v, ok bool) int8 {
	switch {
	case !ok:
		return -1
	case v:
		return 1
	}
	return 0
}

// qualifyingPair is Q2's condition on a match of exactly two rows, given
// each row's winner code and rating text: one winner and one loser, both
// rated, the winner rated above 1000 and 10 × winner ≤ 7 × loser.
func qualifyingPair(w1 int8, r1 string, w2 int8, r2 string) bool {
	var win, lose string
	switch {
	case w1 == 1 && w2 == 0:
		win, lose = r1, r2
	case w1 == 0 && w2 == 1:
		win, lose = r2, r1
	default:
		return false
	}
	w, okW := parseNumber(win)
	l, okL := parseNumber(lose)
	if !okW || !okL {
		return false
	}
	return w.Cmp(rat1000) > 0 && new(big.Rat).Mul(rat10, w).Cmp(new(big.Rat).Mul(rat7, l)) <= 0
}

type civCount struct {
	wins, played int64
}

func evaluate(ctx context.Context, mName string, mIn io.Reader, pName string, pIn io.Reader, maxRecord int) (Result, error) {
	// Both headers are checked before any row is processed.
	mt, err := openTable(mName, mIn, matchesColumns)
	if err != nil {
		return Result{}, err
	}
	pt, err := openTable(pName, pIn, playersColumns)
	if err != nil {
		return Result{}, err
	}
	mt.max, pt.max = maxRecord, maxRecord

	// matches.csv: the Q1 answer and the qualifying tokens of Q3 and Q4.
	q1 := map[string]struct{}{}
	q3Matches := map[string]struct{}{}
	q4Matches := map[string]struct{}{}
	var (
		cToken, cLadder, cMirror = mt.col["token"], mt.col["ladder"], mt.col["mirror"]
		cAvg, cMap               = mt.col["average_rating"], mt.col["map"]
		cServer, cDuration       = mt.col["server"], mt.col["duration"]
	)
	err = mt.each(ctx, func(rec []string) {
		token := rec[cToken]
		if q1Servers[rec[cServer]] {
			avg, okAvg := parseNumber(rec[cAvg])
			dur, okDur := parseDuration(rec[cDuration])
			if okAvg && okDur && avg.Cmp(rat2000) > 0 && dur.Cmp(sec7200) > 0 {
				addToken(q1, token)
			}
		}
		if rec[cLadder] == "RM_1v1" && rec[cMap] == "arena" {
			if mirror, ok := parseBool(rec[cMirror]); ok && !mirror {
				addToken(q3Matches, token)
			}
		}
		if rec[cLadder] == "RM_TEAM" && rec[cMap] == "islands" {
			addToken(q4Matches, token)
		}
	})
	if err != nil {
		return Result{}, err
	}

	// match_players.csv: Q2 state per match, Q3 and Q4 counters per civ.
	pairs := map[string]pairState{}
	q3 := map[string]*civCount{}
	q4 := map[string]int64{}
	var (
		cMatch, cRating = pt.col["match"], pt.col["rating"]
		cCiv, cWinner   = pt.col["civ"], pt.col["winner"]
	)
	err = pt.each(ctx, func(rec []string) {
		match, rating, civ := rec[cMatch], rec[cRating], rec[cCiv]
		winner, winnerOK := parseBool(rec[cWinner])

		// Q2: every row counts, whatever its values.
		st, seen := pairs[match]
		if !seen {
			match = strings.Clone(match)
		}
		switch st.rows {
		case 0:
			st.rows = 1
			st.firstWinner = winnerCode(winner, winnerOK)
			if isNumber(rating) {
				st.firstRating = strings.Clone(rating)
			}
		case 1:
			st.rows = 2
			st.qualifies = qualifyingPair(st.firstWinner, st.firstRating, winnerCode(winner, winnerOK), rating)
			st.firstRating = ""
		default:
			st = pairState{rows: 3}
		}
		pairs[match] = st

		// Q3.
		if _, ok := q3Matches[match]; ok && civ != "" && winnerOK {
			c := q3[civ]
			if c == nil {
				c = &civCount{}
				q3[strings.Clone(civ)] = c
			}
			c.played++
			if winner {
				c.wins++
			}
		}

		// Q4.
		if _, ok := q4Matches[match]; ok && civ != "" {
			if r, ok := parseNumber(rating); ok && r.Cmp(rat2000) > 0 {
				if _, seen := q4[civ]; !seen {
					civ = strings.Clone(civ)
				}
				q4[civ]++
			}
		}
	})
	if err != nil {
		return Result{}, err
	}

	var q2 []string
	for match, st := range pairs {
		if st.rows == 2 && st.qualifies {
			q2 = append(q2, match)
		}
	}

	return Result{
		Answers: map[string][]byte{
			"q1": tokenFile(keys(q1)),
			"q2": tokenFile(q2),
			"q3": q3File(q3),
			"q4": q4File(q4),
		},
		Report: Report{Matches: mt.report, Players: pt.report},
	}, nil
}

// addToken adds token to set, cloning it so that the set does not keep the
// whole CSV line alive.
func addToken(set map[string]struct{}, token string) {
	if _, ok := set[token]; !ok {
		set[strings.Clone(token)] = struct{}{}
	}
}

func keys(set map[string]struct{}) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	return out
}

// tokenFile is q1.csv or q2.csv: header "token", rows sorted by byte value.
func tokenFile(tokens []string) []byte {
	sort.Strings(tokens)
	var b bytes.Buffer
	writeRow(&b, "token")
	for _, t := range tokens {
		writeRow(&b, t)
	}
	return b.Bytes()
}

// q3File is q3.csv, sorted by civ.
func q3File(counts map[string]*civCount) []byte {
	civs := make([]string, 0, len(counts))
	for civ := range counts {
		civs = append(civs, civ)
	}
	sort.Strings(civs)
	var b bytes.Buffer
	writeRow(&b, "civ", "wins", "played", "win_pct")
	for _, civ := range civs {
		c := counts[civ]
		pct := float64(100*c.wins) / float64(c.played)
		writeRow(&b, civ, fmt.Sprint(c.wins), fmt.Sprint(c.played), fmt.Sprintf("%.4f", pct))
	}
	return b.Bytes()
}

// q4File is q4.csv: the top 5 by count descending, then civ ascending.
func q4File(counts map[string]int64) []byte {
	civs := make([]string, 0, len(counts))
	for civ := range counts {
		civs = append(civs, civ)
	}
	sort.Slice(civs, func(i, j int) bool {
		if counts[civs[i]] != counts[civs[j]] {
			return counts[civs[i]] > counts[civs[j]]
		}
		return civs[i] < civs[j]
	})
	if len(civs) > 5 {
		civs = civs[:5]
	}
	var b bytes.Buffer
	writeRow(&b, "rank", "civ", "players")
	for i, civ := range civs {
		writeRow(&b, fmt.Sprint(i+1), civ, fmt.Sprint(counts[civ]))
	}
	return b.Bytes()
}

// writeRow writes one CSV record ending in "\n"; a field is quoted only if
// it contains a comma, a quote, "\n" or "\r", with quotes doubled.
func writeRow(b *bytes.Buffer, fields ...string) {
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		if strings.ContainsAny(f, ",\"\n\r") {
			b.WriteByte('"')
			b.WriteString(strings.ReplaceAll(f, `"`, `""`))
			b.WriteByte('"')
		} else {
			b.WriteString(f)
		}
	}
	b.WriteByte('\n')
}
