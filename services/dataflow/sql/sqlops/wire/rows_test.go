package wire_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
)

// TestFromRowsRefuses: a batch of another kind, width, or whose values do
// not read as their columns' types is refused as a bad batch.
func TestFromRowsRefuses(t *testing.T) {
	cols := []plan.Column{{Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}}
	var b batch.ColumnBuilder
	b.Add([][]byte{[]byte("1.50"), []byte("true")}, nil)
	good := b.Build()
	if got, err := wire.FromRows(good, cols); err != nil || got.N != 1 || got.Cols[0].Nums[0].String() != "1.50" {
		t.Fatalf("FromRows = %v, %v", got, err)
	}
	b.Add([][]byte{[]byte("1e3"), []byte("true")}, nil)
	notNumber := b.Build()
	b.Add([][]byte{[]byte("1"), []byte("TRUE")}, nil)
	notBool := b.Build()
	for _, rb := range []*wololov1.RowBatch{notNumber, notBool, {}} {
		if _, err := wire.FromRows(rb, cols); !errors.Is(err, batch.ErrBadBatch) {
			t.Errorf("FromRows(%v) = %v, want ErrBadBatch", rb, err)
		}
	}
	if _, err := wire.FromRows(good, cols[:1]); !errors.Is(err, batch.ErrBadBatch) {
		t.Errorf("a batch of 2 columns read as 1: %v", err)
	}
}

// randomColumn is a column of n values of type typ as text ("" NULL):
// numbers of one scale or of mixed ones, some too wide for an int64,
// negative ones and zeros with their trailing zeros.
func randomColumn(r *rand.Rand, typ plan.Type, n int) []string {
	out := make([]string, n)
	oneScale := r.IntN(2) == 0
	scale := r.IntN(4)
	// Text of every length, of one length, or with values past 255
	// bytes: each compact form of a text column's offsets, and ends.
	textKind := r.IntN(3)
	for i := range out {
		if r.IntN(5) == 0 {
			continue // NULL
		}
		switch typ {
		case plan.Text:
			switch textKind {
			case 0:
				out[i] = fmt.Sprint("t", r.IntN(1000))
			case 1:
				out[i] = fmt.Sprintf("t%04d", r.IntN(10000))
			default:
				out[i] = strings.Repeat("x", 1+r.IntN(400))
			}
		case plan.Bool:
			out[i] = fmt.Sprint(r.IntN(2) == 0)
		default:
			s := scale
			if !oneScale {
				s = r.IntN(8)
			}
			digits := 1 + r.IntN(5)
			if r.IntN(8) == 0 {
				digits = 19 + r.IntN(10) // wide
			}
			var b strings.Builder
			if r.IntN(3) == 0 {
				b.WriteByte('-')
			}
			for d := range digits + s {
				if d == digits {
					b.WriteByte('.')
				}
				b.WriteByte(byte('0' + r.IntN(10)))
			}
			out[i] = b.String()
		}
	}
	return out
}

// TestRowsRoundTrip: a batch of every type's columns, NULLs, numbers of
// one scale and of mixed scales, wide numbers among them, read back from
// its marshalled ColumnBatch is the same, value for value, trailing zeros
// included; its number and boolean columns travel typed, not as text.
// So do some of its rows: a run of them, and rows picked.
func TestRowsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cols := []plan.Column{{Name: "t", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}, {Name: "d", Type: plan.Number, Read: plan.ReadDuration}}
	forms := map[[3]bool]int{} // text columns written with a width, lengths, ends
	defer func() {
		for _, f := range [][3]bool{{true, false, false}, {false, true, false}, {false, false, true}} {
			if forms[f] == 0 {
				t.Errorf("no text column was written in the form (width, lengths, ends) %v: %v", f, forms)
			}
		}
	}()
	for round := range 200 {
		n := 1 + r.IntN(40)
		b := randomBatch(t, r, cols, n)
		rb := wire.ToRows(b)
		for c, vc := range rb.GetColumns().GetColumns() {
			if cols[c].Type != plan.Text && vc.GetText() != nil {
				t.Fatalf("column %s travels as text", cols[c].Name)
			}
			if tc := vc.GetText(); tc != nil {
				forms[[3]bool{tc.Width != 0, tc.Lengths != nil, tc.Ends != nil}]++
			}
		}
		enc, err := proto.Marshal(rb)
		if err != nil {
			t.Fatal(err)
		}
		var back wololov1.RowBatch
		if err := proto.Unmarshal(enc, &back); err != nil {
			t.Fatal(err)
		}
		got, err := wire.FromRows(&back, cols)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if want := b.String(); got.String() != want {
			t.Fatalf("round %d: read back\n%s\nwant\n%s", round, got.String(), want)
		}
		// Some rows, as an exchange sends them: a run, and rows picked.
		start := r.IntN(n)
		end := start + 1 + r.IntN(n-start)
		var rows []int32
		for i := range n {
			if r.IntN(2) == 0 {
				rows = append(rows, int32(i))
			}
		}
		if rows == nil {
			rows = []int32{int32(start)}
		}
		run := make([]int32, 0, end-start)
		for i := start; i < end; i++ {
			run = append(run, int32(i))
		}
		for _, sel := range []struct {
			rb   *wololov1.RowBatch
			want *exec.Batch
		}{
			{wire.ToSelectedRows(b, selectionOf(nil, start, end), nil), b.Rows(run)},
			{wire.ToSelectedRows(b, selectionOf(rows, 0, 0), nil), b.Rows(rows)},
		} {
			got, err := wire.FromRows(sel.rb, cols)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if got.String() != sel.want.String() {
				t.Fatalf("round %d: rows read back\n%s\nwant\n%s", round, got.String(), sel.want.String())
			}
		}
	}
}

// FuzzFromRows reads arbitrary bytes as a ColumnBatch of a text, a number
// and a boolean column. It must never panic: FromRows refuses them with
// ErrBadBatch, or what it read writes a batch that reads back the same.
//
//	go test -run='^$' -fuzz=FuzzFromRows -fuzztime=30s ./services/dataflow/sql/sqlops/wire
func FuzzFromRows(f *testing.F) {
	cols := []plan.Column{{Name: "t", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}}
	r := rand.New(rand.NewPCG(3, 4))
	for range 4 {
		enc, err := proto.Marshal(wire.ToRows(randomBatch(f, r, cols, 5)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var rb wololov1.RowBatch
		if err := proto.Unmarshal(data, &rb); err != nil {
			return
		}
		got, err := wire.FromRows(&rb, cols)
		if err != nil {
			if !errors.Is(err, batch.ErrBadBatch) {
				t.Fatalf("error %v does not wrap ErrBadBatch", err)
			}
			return
		}
		again, err := wire.FromRows(wire.ToRows(got), cols)
		if err != nil {
			t.Fatalf("written again, refused: %v", err)
		}
		if again.String() != got.String() {
			t.Fatalf("written again as\n%s\nwas\n%s", again.String(), got.String())
		}
	})
}
