package operators

import (
	"sort"
	"strconv"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/csvio"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// Results is the gateway's sink: it collects the four answers of a job and,
// when every stream has ended, writes the output files as records.
type Results struct {
	q1, q2 map[string]struct{}
	q3, q4 map[string]*civCount
}

// NewResults returns an empty sink.
func NewResults() *Results {
	return &Results{q1: map[string]struct{}{}, q2: map[string]struct{}{}, q3: map[string]*civCount{}, q4: map[string]*civCount{}}
}

// Apply collects one batch of any result stream.
func (r *Results) Apply(stream string, rows *wololov1.RowBatch, _ stage.Emitter) error {
	switch stream {
	case Q1Tokens, Q2Tokens:
		set := r.q1
		if stream == Q2Tokens {
			set = r.q2
		}
		t := rows.GetTokens()
		if t == nil {
			return wrongKind(stream, rows, "tokens")
		}
		return batch.EachToken(t, func(token []byte) { set[string(token)] = struct{}{} })
	case Q3Civs:
		return addCivs(r.q3, stream, rows)
	default:
		return addCivs(r.q4, stream, rows)
	}
}

// Finish writes the four files.
func (r *Results) Finish(out stage.Emitter) error {
	out.Record(schema.ResultRecord("q1.csv"), FormatTokens(r.q1))
	out.Record(schema.ResultRecord("q2.csv"), FormatTokens(r.q2))
	out.Record(schema.ResultRecord("q3.csv"), FormatQ3(r.q3))
	out.Record(schema.ResultRecord("q4.csv"), FormatQ4(r.q4))
	return nil
}

// FormatTokens writes q1.csv or q2.csv: the header, then the tokens sorted
// by byte value.
func FormatTokens(set map[string]struct{}) []byte {
	tokens := make([]string, 0, len(set))
	for t := range set {
		tokens = append(tokens, t)
	}
	sort.Strings(tokens)
	buf := csvio.AppendRecord(nil, "token")
	for _, t := range tokens {
		buf = csvio.AppendRecord(buf, t)
	}
	return buf
}

// FormatQ3 writes q3.csv: per civ, wins, played and 100×wins/played with
// four decimals, sorted by civ.
func FormatQ3(civs map[string]*civCount) []byte {
	names := make([]string, 0, len(civs))
	for civ := range civs {
		names = append(names, civ)
	}
	sort.Strings(names)
	buf := csvio.AppendRecord(nil, "civ", "wins", "played", "win_pct")
	for _, civ := range names {
		c := civs[civ]
		pct := float64(100*c.wins) / float64(c.count)
		buf = csvio.AppendRecord(buf, civ, strconv.FormatInt(c.wins, 10), strconv.FormatInt(c.count, 10), strconv.FormatFloat(pct, 'f', 4, 64))
	}
	return buf
}

// FormatQ4 writes q4.csv: the top five civs by count, ties by name.
func FormatQ4(civs map[string]*civCount) []byte {
	buf := csvio.AppendRecord(nil, "rank", "civ", "players")
	for i, r := range TopCivs(civs, 5) {
		buf = csvio.AppendRecord(buf, strconv.Itoa(i+1), r.Civ, strconv.FormatInt(r.Count, 10))
	}
	return buf
}
