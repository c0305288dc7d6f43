package operators

import (
	"fmt"
	"strings"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// step is one event for a two-input operator: a batch, or with end set the
// end of a stream.
type step struct {
	stream string
	rows   *wololov1.RowBatch
	end    bool
}

func toks(stream string, tokens ...string) step {
	return step{stream: stream, rows: tokenBatch(tokens...)}
}
func ends(stream string) step { return step{stream: stream, end: true} }

func plays(t testing.TB, stream string, rows ...pr) step {
	return step{stream: stream, rows: playerBatch(t, rows...)}
}

func civOut(stream string, rows ...cr) []string {
	out := []string{}
	for _, r := range rows {
		out = append(out, fmt.Sprintf("civ %s %q wins=%d count=%d", stream, r.civ, r.wins, r.count))
	}
	return out
}

func runJoiner(t *testing.T, j *Joiner, steps []step) []string {
	t.Helper()
	out := &fakeEmitter{}
	for i, s := range steps {
		var err error
		if s.end {
			err = j.EndStream(s.stream, out)
		} else {
			err = j.Apply(s.stream, s.rows, out)
		}
		if err != nil {
			t.Fatalf("step %d (%s): %v", i, s.stream, err)
		}
		sameCalls(t, fmt.Sprintf("emitted at step %d", i), out.take(), nil)
	}
	if err := j.Finish(out); err != nil {
		t.Fatal(err)
	}
	return out.take()
}

func TestQ3Joiner(t *testing.T) {
	const M, P = Q3Matches, Q3Players
	long := strings.Repeat("T", 30)
	cases := []struct {
		name  string
		steps func(t testing.TB) []step
		want  []string
	}{
		{
			"no input",
			func(t testing.TB) []step { return nil },
			civOut(Q3Partials),
		},
		{
			"players before the match stream ends are buffered, counted at EndStream",
			func(t testing.TB) []step {
				return []step{
					plays(t, P, pr{"m1", "Aztecs", "", T}, pr{"m1", "Britons", "", F}, pr{"m2", "Celts", "", T}),
					toks(M, "m1"),
					ends(M),
				}
			},
			civOut(Q3Partials, cr{"Aztecs", 1, 1}, cr{"Britons", 0, 1}),
		},
		{
			"players after the match stream ends are counted directly",
			func(t testing.TB) []step {
				return []step{
					toks(M, "m1"),
					ends(M),
					plays(t, P, pr{"m1", "Aztecs", "", T}, pr{"m1", "Britons", "", F}, pr{"m2", "Celts", "", T}),
				}
			},
			civOut(Q3Partials, cr{"Aztecs", 1, 1}, cr{"Britons", 0, 1}),
		},
		{
			"buffered and direct rows add up",
			func(t testing.TB) []step {
				return []step{
					plays(t, P, pr{"m1", "Aztecs", "", T}),
					toks(M, "m1", "m2"),
					plays(t, P, pr{"m2", "Aztecs", "", F}),
					ends(M),
					plays(t, P, pr{"m1", "Aztecs", "", T}, pr{"m3", "Aztecs", "", T}),
					plays(t, P, pr{"m2", "Aztecs", "", T}),
				}
			},
			civOut(Q3Partials, cr{"Aztecs", 3, 4}),
		},
		{
			"a token twice in the match stream counts its players once (buffered)",
			func(t testing.TB) []step {
				return []step{
					plays(t, P, pr{"m1", "Aztecs", "", T}, pr{"m1", "Britons", "", F}),
					toks(M, "m1", "m1"),
					toks(M, "m1"),
					ends(M),
				}
			},
			civOut(Q3Partials, cr{"Aztecs", 1, 1}, cr{"Britons", 0, 1}),
		},
		{
			"a token twice in the match stream counts its players once (direct)",
			func(t testing.TB) []step {
				return []step{
					toks(M, "m1"),
					toks(M, "m1", "m1"),
					ends(M),
					plays(t, P, pr{"m1", "Aztecs", "", T}, pr{"m1", "Britons", "", F}),
				}
			},
			civOut(Q3Partials, cr{"Aztecs", 1, 1}, cr{"Britons", 0, 1}),
		},
		{
			"Finish without EndStream still counts the buffered rows",
			func(t testing.TB) []step {
				return []step{
					plays(t, P, pr{"m1", "Aztecs", "", T}),
					toks(M, "m1"),
					plays(t, P, pr{"m1", "Aztecs", "", F}, pr{"m9", "Aztecs", "", T}),
				}
			},
			civOut(Q3Partials, cr{"Aztecs", 1, 2}),
		},
		{
			"the end of the player stream does not end buffering",
			func(t testing.TB) []step {
				return []step{
					plays(t, P, pr{"m1", "Aztecs", "", T}),
					ends(P),
					toks(M, "m1"),
					ends(M),
				}
			},
			civOut(Q3Partials, cr{"Aztecs", 1, 1}),
		},
		{
			"rows of matches that never qualify are dropped",
			func(t testing.TB) []step {
				return []step{
					toks(M, "m1"),
					plays(t, P, pr{"m2", "Aztecs", "", T}, pr{"m10", "Aztecs", "", T}, pr{"m", "Aztecs", "", T}, pr{"M1", "Aztecs", "", T}),
					ends(M),
					plays(t, P, pr{"m2", "Britons", "", T}, pr{"m1 ", "Britons", "", T}),
				}
			},
			civOut(Q3Partials),
		},
		{
			"output sorted by civ, byte order, case kept",
			func(t testing.TB) []step {
				return []step{
					toks(M, "m1"),
					ends(M),
					plays(t, P, pr{"m1", "Vikings", "", T}, pr{"m1", "aztecs", "", F}, pr{"m1", "Britons", "", T}, pr{"m1", "Aztecs", "", F}, pr{"m1", "Civ, The", "", T}),
				}
			},
			civOut(Q3Partials, cr{"Aztecs", 0, 1}, cr{"Britons", 1, 1}, cr{"Civ, The", 1, 1}, cr{"Vikings", 1, 1}, cr{"aztecs", 0, 1}),
		},
		{
			"only winner true is a win",
			func(t testing.TB) []step {
				return []step{
					toks(M, "m1"),
					plays(t, P, pr{"m1", "Aztecs", "", T}, pr{"m1", "Aztecs", "", F}, pr{"m1", "Aztecs", "", X}),
					ends(M),
					plays(t, P, pr{"m1", "Aztecs", "", T}, pr{"m1", "Aztecs", "", F}, pr{"m1", "Aztecs", "", X}),
				}
			},
			civOut(Q3Partials, cr{"Aztecs", 2, 6}),
		},
		{
			"long and short tokens",
			func(t testing.TB) []step {
				return []step{
					plays(t, P, pr{long, "Aztecs", "", T}, pr{long[:23], "Britons", "", T}, pr{long[:24], "Celts", "", T}),
					toks(M, long, long[:23]),
					ends(M),
					plays(t, P, pr{long, "Aztecs", "", T}, pr{long[:23], "Britons", "", T}, pr{long[:24], "Celts", "", T}),
				}
			},
			civOut(Q3Partials, cr{"Aztecs", 2, 2}, cr{"Britons", 2, 2}),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := runJoiner(t, NewJoiner(Q3Matches, Q3Players, Q3Partials), c.steps(t))
			sameCalls(t, "emitted by Finish", got, c.want)
		})
	}
}

func TestQ4Joiner(t *testing.T) {
	const M, P = Q4Matches, Q4Players
	j := NewJoiner(Q4Matches, Q4Players, Q4Partials)
	got := runJoiner(t, j, []step{
		plays(t, P, pr{"m1", "Franks", "", X}, pr{"m2", "Franks", "", X}),
		toks(M, "m1", "m2"),
		toks(M, "m3"),
		ends(M),
		plays(t, P, pr{"m3", "Goths", "", X}, pr{"m1", "Franks", "", X}, pr{"m4", "Goths", "", X}),
	})
	sameCalls(t, "emitted by Finish", got, civOut(Q4Partials, cr{"Franks", 0, 3}, cr{"Goths", 0, 1}))
}

func TestAggregator(t *testing.T) {
	cases := []struct {
		name    string
		out     string
		top     int
		batches []*wololov1.RowBatch
		want    []string
	}{
		{"no input, all", Q3Civs, 0, nil, civOut(Q3Civs)},
		{"no input, top 5", Q4Civs, 5, nil, civOut(Q4Civs)},
		{
			"sums partials, sorted by civ",
			Q3Civs, 0,
			[]*wololov1.RowBatch{
				civBatch(cr{"Britons", 1, 2}, cr{"Aztecs", 3, 5}),
				civBatch(cr{"Aztecs", 1, 2}, cr{"Celts", 0, 4}),
				civBatch(),
				civBatch(cr{"Britons", 2, 2}),
			},
			civOut(Q3Civs, cr{"Aztecs", 4, 7}, cr{"Britons", 3, 4}, cr{"Celts", 0, 4}),
		},
		{
			"all civs when top is 0, even more than 5",
			Q3Civs, 0,
			[]*wololov1.RowBatch{civBatch(cr{"f", 0, 1}, cr{"e", 0, 2}, cr{"d", 0, 3}, cr{"c", 0, 4}, cr{"b", 0, 5}, cr{"a", 0, 6})},
			civOut(Q3Civs, cr{"a", 0, 6}, cr{"b", 0, 5}, cr{"c", 0, 4}, cr{"d", 0, 3}, cr{"e", 0, 2}, cr{"f", 0, 1}),
		},
		{
			"top 5 by count, ties by name ascending",
			Q4Civs, 5,
			[]*wololov1.RowBatch{
				civBatch(cr{"Franks", 0, 5}, cr{"Aztecs", 0, 10}, cr{"Celts", 0, 7}),
				civBatch(cr{"Goths", 0, 12}, cr{"Britons", 0, 7}, cr{"Huns", 0, 1}),
				civBatch(cr{"Incas", 0, 5}, cr{"Dravidians", 0, 5}),
			},
			civOut(Q4Civs, cr{"Goths", 0, 12}, cr{"Aztecs", 0, 10}, cr{"Britons", 0, 7}, cr{"Celts", 0, 7}, cr{"Dravidians", 0, 5}),
		},
		{
			"ranking uses the sums",
			Q4Civs, 5,
			[]*wololov1.RowBatch{
				civBatch(cr{"Aztecs", 0, 5}, cr{"Britons", 0, 3}),
				civBatch(cr{"Britons", 0, 3}),
			},
			civOut(Q4Civs, cr{"Britons", 0, 6}, cr{"Aztecs", 0, 5}),
		},
		{
			"ties by byte order: upper case first",
			Q4Civs, 5,
			[]*wololov1.RowBatch{civBatch(cr{"aztecs", 0, 2}, cr{"Zapotecs", 0, 2}, cr{"Aztecs", 0, 2})},
			civOut(Q4Civs, cr{"Aztecs", 0, 2}, cr{"Zapotecs", 0, 2}, cr{"aztecs", 0, 2}),
		},
		{
			"fewer than 5 civs",
			Q4Civs, 5,
			[]*wololov1.RowBatch{civBatch(cr{"Celts", 0, 1}, cr{"Aztecs", 0, 3}, cr{"Britons", 0, 3})},
			civOut(Q4Civs, cr{"Aztecs", 0, 3}, cr{"Britons", 0, 3}, cr{"Celts", 0, 1}),
		},
		{
			"exactly 5 civs, all tied",
			Q4Civs, 5,
			[]*wololov1.RowBatch{civBatch(cr{"e", 0, 1}, cr{"d", 0, 1}, cr{"c", 0, 1}, cr{"b", 0, 1}, cr{"a", 0, 1})},
			civOut(Q4Civs, cr{"a", 0, 1}, cr{"b", 0, 1}, cr{"c", 0, 1}, cr{"d", 0, 1}, cr{"e", 0, 1}),
		},
		{
			"top keeps wins too",
			Q4Civs, 2,
			[]*wololov1.RowBatch{civBatch(cr{"a", 1, 3}, cr{"b", 2, 4}, cr{"c", 3, 1}), civBatch(cr{"a", 1, 1})},
			civOut(Q4Civs, cr{"a", 2, 4}, cr{"b", 2, 4}),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := NewAggregator(c.out, c.top)
			out := &fakeEmitter{}
			for _, b := range c.batches {
				apply(t, a, out, input{"partials", b})
			}
			sameCalls(t, "emitted before Finish", out.take(), nil)
			if err := a.Finish(out); err != nil {
				t.Fatal(err)
			}
			sameCalls(t, "emitted by Finish", out.take(), c.want)
		})
	}
}

// TestSpecs pins the default graph of the package comment, and checks that
// each joiner and aggregator made by a spec reads and writes the streams
// the spec names.
func TestSpecs(t *testing.T) {
	specs := Specs()
	want := map[string]string{
		"matches-filter": "matches -> q1-tokens,q3-matches,q4-matches",
		"players-filter": "players -> q2-players,q3-players,q4-players",
		"q2-grouper":     "q2-players -> q2-tokens",
		"q3-joiner":      "q3-matches,q3-players -> q3-partials",
		"q4-joiner":      "q4-matches,q4-players -> q4-partials",
		"q3-aggregator":  "q3-partials -> q3-civs",
		"q4-aggregator":  "q4-partials -> q4-civs",
		"results":        "q1-tokens,q2-tokens,q3-civs,q4-civs -> ",
	}
	if len(specs) != len(want) {
		t.Errorf("Specs has %d operators, want %d", len(specs), len(want))
	}
	for name, w := range want {
		s, ok := specs[name]
		if !ok {
			t.Errorf("Specs has no %s", name)
			continue
		}
		if got := strings.Join(s.Inputs, ",") + " -> " + strings.Join(s.Outputs, ","); got != w {
			t.Errorf("%s: %s, want %s", name, got, w)
		}
		if s.New() == nil {
			t.Errorf("%s: New returned nil", name)
		}
	}
	for _, name := range []string{"q3-joiner", "q4-joiner"} {
		s := specs[name]
		j, ok := s.New().(*Joiner)
		if !ok {
			t.Fatalf("%s: New returned %T, want *Joiner", name, s.New())
		}
		got := runJoiner(t, j, []step{
			plays(t, s.Inputs[1], pr{"m", "Aztecs", "", T}),
			toks(s.Inputs[0], "m"),
			ends(s.Inputs[0]),
		})
		sameCalls(t, name, got, civOut(s.Outputs[0], cr{"Aztecs", 1, 1}))
	}
	for _, name := range []string{"q3-aggregator", "q4-aggregator"} {
		s := specs[name]
		op := s.New()
		out := &fakeEmitter{}
		apply(t, op, out, input{s.Inputs[0], civBatch(cr{"a", 0, 1}, cr{"b", 0, 2}, cr{"c", 0, 3}, cr{"d", 0, 4}, cr{"e", 0, 5}, cr{"f", 0, 6})})
		if err := op.Finish(out); err != nil {
			t.Fatal(err)
		}
		rows := []cr{{"a", 0, 1}, {"b", 0, 2}, {"c", 0, 3}, {"d", 0, 4}, {"e", 0, 5}, {"f", 0, 6}}
		if name == "q4-aggregator" { // top five by count, descending
			rows = []cr{{"f", 0, 6}, {"e", 0, 5}, {"d", 0, 4}, {"c", 0, 3}, {"b", 0, 2}}
		}
		sameCalls(t, name, out.take(), civOut(s.Outputs[0], rows...))
	}
}
