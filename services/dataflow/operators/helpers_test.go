package operators

import (
	"fmt"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// fakeEmitter records every call, rendered as one line each, in call order.
// Rows are copied out at once: operators reuse the rows they pass.
type fakeEmitter struct {
	calls []string
}

var _ stage.Emitter = (*fakeEmitter)(nil)

func (e *fakeEmitter) Match(stream string, m *batch.Match) {
	e.calls = append(e.calls, fmt.Sprintf("match %s token=%q ladder=%q map=%q server=%q mirror=%s rating=%s duration=%d",
		stream, m.Token, m.Ladder, m.Map, m.Server, triString(m.Mirror), numString(m.AverageRating, m.HasAverageRating), m.DurationSeconds))
}

func (e *fakeEmitter) Player(stream string, p *batch.Player) {
	e.calls = append(e.calls, fmt.Sprintf("player %s match=%q civ=%q rating=%s winner=%s",
		stream, p.Match, p.Civ, numString(p.Rating, p.HasRating), triString(p.Winner)))
}

func (e *fakeEmitter) Token(stream string, token []byte) {
	e.calls = append(e.calls, fmt.Sprintf("token %s %q", stream, token))
}

func (e *fakeEmitter) Civ(stream string, civ string, wins, count int64) {
	e.calls = append(e.calls, fmt.Sprintf("civ %s %q wins=%d count=%d", stream, civ, wins, count))
}

func (e *fakeEmitter) Record(key string, value []byte) {
	e.calls = append(e.calls, fmt.Sprintf("record %s %q", key, value))
}

// Batch and End: the operators under test emit rows one at a time.
func (e *fakeEmitter) Batch(string, int, *wololov1.RowBatch) {}
func (e *fakeEmitter) End(string)                            {}

// take returns the calls so far and forgets them.
func (e *fakeEmitter) take() []string {
	c := e.calls
	e.calls = nil
	if c == nil {
		c = []string{}
	}
	return c
}

func numString(n schema.Number, ok bool) string {
	if !ok {
		return "missing"
	}
	return n.String()
}

func triString(v batch.Tri) string {
	switch v {
	case batch.Missing:
		return "missing"
	case batch.False:
		return "false"
	case batch.True:
		return "true"
	}
	return fmt.Sprintf("Tri(%d)", v)
}

func sameCalls(t testing.TB, what string, got, want []string) {
	t.Helper()
	if got == nil {
		got = []string{}
	}
	if want == nil {
		want = []string{}
	}
	n := max(len(got), len(want))
	bad := len(got) != len(want)
	for i := 0; i < n && !bad; i++ {
		bad = got[i] != want[i]
	}
	if !bad {
		return
	}
	t.Errorf("%s: got %d calls, want %d", what, len(got), len(want))
	for i := 0; i < n; i++ {
		g, w := "(none)", "(none)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		mark := "  "
		if g != w {
			mark = "!="
		}
		t.Errorf("%s %d\n   got:  %s\n   want: %s", mark, i, g, w)
	}
}

// ---- batch builders ----

// T, F and X are the winner/mirror values, for short tables.
const (
	T = batch.True
	F = batch.False
	X = batch.Missing
)

// num parses a number field; "" is a missing value.
func num(t testing.TB, s string) (schema.Number, bool) {
	t.Helper()
	if s == "" {
		return schema.Number{}, false
	}
	n, ok := schema.ParseNumber([]byte(s))
	if !ok {
		t.Fatalf("bad test number %q", s)
	}
	return n, true
}

// mr is one matches.csv row: rating "" is missing, duration -1 is missing.
type mr struct {
	token, ladder, mapName, server string
	mirror                         batch.Tri
	rating                         string
	duration                       int64
}

func (r mr) row(t testing.TB) batch.Match {
	n, ok := num(t, r.rating)
	return batch.Match{
		Token: []byte(r.token), Ladder: []byte(r.ladder), Map: []byte(r.mapName), Server: []byte(r.server),
		Mirror: r.mirror, AverageRating: n, HasAverageRating: ok, DurationSeconds: r.duration,
	}
}

func matchBatch(t testing.TB, rows ...mr) *wololov1.RowBatch {
	t.Helper()
	var b batch.MatchBuilder
	for _, r := range rows {
		row := r.row(t)
		b.Add(&row)
	}
	return b.Build()
}

// pr is one player row: rating "" is missing.
type pr struct {
	match, civ, rating string
	winner             batch.Tri
}

func playerBatch(t testing.TB, rows ...pr) *wololov1.RowBatch {
	t.Helper()
	var b batch.PlayerBuilder
	for _, r := range rows {
		n, ok := num(t, r.rating)
		b.Add(&batch.Player{Match: []byte(r.match), Civ: []byte(r.civ), Rating: n, HasRating: ok, Winner: r.winner})
	}
	return b.Build()
}

func tokenBatch(tokens ...string) *wololov1.RowBatch {
	var b batch.TokenBuilder
	for _, t := range tokens {
		b.Add([]byte(t))
	}
	return b.Build()
}

// cr is one civ counter row.
type cr struct {
	civ         string
	wins, count int64
}

func civBatch(rows ...cr) *wololov1.RowBatch {
	var b batch.CivBuilder
	for _, r := range rows {
		b.Add(r.civ, r.wins, r.count)
	}
	return b.Build()
}

// input is one input batch of a stream.
type input struct {
	stream string
	rows   *wololov1.RowBatch
}

// apply feeds batches to an operator and fails the test on any error.
func apply(t testing.TB, op stage.Operator, out *fakeEmitter, batches ...input) {
	t.Helper()
	for i, b := range batches {
		if err := op.Apply(b.stream, b.rows, out); err != nil {
			t.Fatalf("Apply #%d (%s): %v", i, b.stream, err)
		}
	}
}
