package batch_test

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
)

// FuzzReaders decodes arbitrary bytes as a RowBatch and reads it with the
// matching reader. A reader must never panic: it either calls fn once per
// row (Rows of the batch) or returns an error wrapping ErrBadBatch without
// calling fn at all.
//
//	go test -run='^$' -fuzz=FuzzReaders -fuzztime=30s ./services/dataflow/batch
func FuzzReaders(f *testing.F) {
	for _, rb := range fuzzSeeds(f) {
		b, err := proto.Marshal(rb)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		var rb wololov1.RowBatch
		if err := proto.Unmarshal(data, &rb); err != nil {
			return
		}
		calls := 0
		var err error
		switch r := rb.GetRows().(type) {
		case *wololov1.RowBatch_Matches:
			err = batch.EachMatch(r.Matches, func(m *batch.Match) {
				calls++
				// Touch every value, as an operator would.
				_ = len(m.Token) + len(m.Ladder) + len(m.Map) + len(m.Server)
				if m.HasAverageRating {
					_ = m.AverageRating.String()
					_ = m.AverageRating.CmpInt(2000)
				}
				if m.Mirror > batch.True {
					t.Fatalf("mirror = %d after a successful check", m.Mirror)
				}
			})
		case *wololov1.RowBatch_Players:
			err = batch.EachPlayer(r.Players, func(p *batch.Player) {
				calls++
				_ = len(p.Match) + len(p.Civ)
				if p.HasRating {
					_ = p.Rating.String()
					_ = p.Rating.CmpInt(1000)
				}
				if p.Winner > batch.True {
					t.Fatalf("winner = %d after a successful check", p.Winner)
				}
			})
		case *wololov1.RowBatch_Tokens:
			err = batch.EachToken(r.Tokens, func(token []byte) { calls++; _ = len(token) })
		case *wololov1.RowBatch_Civs:
			err = batch.EachCiv(r.Civs, func(civ string, wins, count int64) { calls++; _ = len(civ) })
		case *wololov1.RowBatch_Columns:
			var cols batch.Columns
			if cols, err = batch.ReadColumns(r.Columns); err == nil {
				for row := range cols.Rows() {
					calls++
					for c := range cols.Width() {
						v, ok := cols.Value(c, row)
						if !ok && len(v) != 0 {
							t.Fatalf("NULL value %q", v)
						}
					}
				}
			}
		default:
			if n := batch.Rows(&rb); n != 0 {
				t.Fatalf("Rows of a batch without rows = %d", n)
			}
			return
		}
		switch {
		case err != nil && !errors.Is(err, batch.ErrBadBatch):
			t.Fatalf("error %v does not wrap ErrBadBatch", err)
		case err != nil && calls != 0:
			t.Fatalf("fn called %d times before error %v", calls, err)
		case err == nil && calls != batch.Rows(&rb):
			t.Fatalf("fn called %d times, Rows = %d", calls, batch.Rows(&rb))
		}
	})
}

// fuzzSeeds are valid batches of every kind and a few broken ones.
func fuzzSeeds(t testing.TB) []*wololov1.RowBatch {
	var mb batch.MatchBuilder
	for _, m := range []batch.Match{
		match(t, "t1", "RM_1v1", "arena", "eastus", batch.False, "2034.5", 7201),
		match(t, "t2", "RM_TEAM", "islands", "koreacentral", batch.Missing, "", -1),
		match(t, "t3", "RM_1v1", "arena", "eastus", batch.True, "123456789012345.1234567", 0),
	} {
		mb.Add(&m)
	}
	var pb batch.PlayerBuilder
	for _, p := range []batch.Player{
		player(t, "m1", "Aztecs", "2100", batch.True),
		player(t, "m1", "Britons", "", batch.False),
		player(t, "m2", "", "1.0000001", batch.Missing),
	} {
		pb.Add(&p)
	}
	var tb batch.TokenBuilder
	tb.Add([]byte("a"))
	tb.Add([]byte(""))
	tb.Add([]byte("bcd"))
	var cb batch.CivBuilder
	cb.Add("Aztecs", 1, 3)
	cb.Add("Britons", 0, 2)
	var vb batch.ColumnBuilder
	for i := range 10 {
		vb.Add([][]byte{[]byte("x"), []byte(fmt.Sprint(i))}, []bool{i%3 == 0, false})
	}
	var zero batch.ColumnBuilder
	zero.AddRows(4)

	badMatches := validMatches()
	badMatches.AverageRating.Kinds = []byte{2, 2}
	badPlayers := validPlayers()
	badPlayers.Civ.Codes = []uint32{0, 9}
	return []*wololov1.RowBatch{
		mb.Build(), pb.Build(), tb.Build(), cb.Build(), vb.Build(), zero.Build(),
		{Rows: &wololov1.RowBatch_Columns{Columns: &wololov1.ColumnBatch{Rows: 3, Columns: []*wololov1.ValueColumn{{Text: &wololov1.TextColumn{Data: []byte("ab"), Ends: []uint32{1, 2}}}}}}},
		{Rows: &wololov1.RowBatch_Columns{Columns: &wololov1.ColumnBatch{Rows: 2, Columns: []*wololov1.ValueColumn{{Text: &wololov1.TextColumn{Data: []byte("ab"), Ends: []uint32{1, 2}}, Nulls: []byte{1, 0}}}}}},
		{Rows: &wololov1.RowBatch_Matches{Matches: badMatches}},
		{Rows: &wololov1.RowBatch_Players{Players: badPlayers}},
		{Rows: &wololov1.RowBatch_Tokens{Tokens: &wololov1.TokenRows{Token: &wololov1.TextColumn{Data: []byte("x"), Ends: []uint32{1, 0}}}}},
		{Rows: &wololov1.RowBatch_Civs{Civs: &wololov1.CivRows{Civ: [][]byte{[]byte("a")}}}},
	}
}
