package wire_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
)

// randomBatch is a batch of n rows of cols, NULLs, wide numbers, mixed
// scales and text of every length form among them (randomColumn).
func randomBatch(t testing.TB, r *rand.Rand, cols []plan.Column, n int) *exec.Batch {
	b := &exec.Batch{N: n}
	for _, c := range cols {
		vb := exec.NewVecBuilder(c.Type, n)
		for _, s := range randomColumn(r, c.Type, n) {
			if s == "" {
				vb.Null()
			} else if err := vb.Text([]byte(s)); err != nil {
				t.Fatal(err)
			}
		}
		b.Cols = append(b.Cols, vb.Vec())
	}
	return b
}

// TestWireCodecIsProtobufs: what the wire codec writes of any selection
// of a batch's rows, with routes or without, is byte for byte what
// proto.Marshal writes of the RowBatch ToSelectedRows makes of them; and what it
// reads of those bytes is what FromRows reads of proto.Unmarshal's
// RowBatch, with the same routes.
func TestWireCodecIsProtobufs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	cols := []plan.Column{{Name: "t", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}, {Name: "d", Type: plan.Number, Read: plan.ReadDuration}, {Name: "u", Type: plan.Text}}
	var w wire.Writer // one writer for every batch: its scratch is reused
	for round := range 400 {
		n := 1 + r.IntN(40)
		b := randomBatch(t, r, cols, n)
		start := r.IntN(n)
		end := start + r.IntN(n-start+1)
		var rows []int32
		for i := range n {
			if r.IntN(2) == 0 {
				rows = append(rows, int32(i))
			}
		}
		sels := []struct {
			rows       []int32
			start, end int
		}{{nil, 0, n}, {nil, start, end}, {rows, 0, 0}}
		for _, sel := range sels {
			k := sel.end - sel.start
			if sel.rows != nil {
				k = len(sel.rows)
			}
			var routes []uint64
			if r.IntN(2) == 0 {
				for range k {
					routes = append(routes, uint64(r.IntN(8)))
				}
			}
			enc := w.Append(nil, b, selectionOf(sel.rows, sel.start, sel.end), routes)
			want, err := proto.Marshal(wire.ToSelectedRows(b, selectionOf(sel.rows, sel.start, sel.end), routes))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc, want) || cap(enc) != len(enc) {
				t.Fatalf("round %d: wire codec wrote (capacity %d)\n%x\nproto.Marshal\n%x", round, cap(enc), enc, want)
			}
			var back wololov1.RowBatch
			if err := proto.Unmarshal(want, &back); err != nil {
				t.Fatal(err)
			}
			if k == 0 {
				continue // FromRows' empty batch; Read leaves it to it
			}
			wantBatch, err := wire.FromRows(&back, cols)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			got, masks, ok := wire.Read(enc, cols)
			if !ok {
				t.Fatalf("round %d: the wire codec does not read what it wrote:\n%x", round, enc)
			}
			if got.String() != wantBatch.String() || !slices.Equal(masks, back.GetColumns().GetRoutes()) {
				t.Fatalf("round %d: read\n%s%v\nwant\n%s%v", round, got, masks, wantBatch, back.GetColumns().GetRoutes())
			}
			// Nothing read aliases the bytes.
			clear(enc)
			if got.String() != wantBatch.String() {
				t.Fatalf("round %d: what was read changed with the bytes", round)
			}
		}
	}
}

// FuzzReadWireRows reads arbitrary bytes with the wire codec and the long
// way (proto.Unmarshal, FromRows). It must never panic, and where the
// codec reads a batch, the long way reads the same one and routes.
//
//	go test -run='^$' -fuzz=FuzzReadWireRows -fuzztime=30s ./services/dataflow/sql/sqlops/wire
func FuzzReadWireRows(f *testing.F) {
	cols := []plan.Column{{Name: "t", Type: plan.Text}, {Name: "n", Type: plan.Number}, {Name: "b", Type: plan.Bool}}
	r := rand.New(rand.NewPCG(7, 8))
	var w wire.Writer
	for range 8 {
		b := randomBatch(f, r, cols, 1+r.IntN(6))
		enc := w.Append(nil, b, selectionOf(nil, 0, b.N), []uint64{1, 2, 3, 1, 2, 3}[:b.N])
		f.Add(enc)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, masks, ok := wire.Read(data, cols)
		if !ok {
			return
		}
		var rb wololov1.RowBatch
		if err := proto.Unmarshal(data, &rb); err != nil {
			t.Fatalf("read straight, but proto.Unmarshal refuses: %v", err)
		}
		want, err := wire.FromRows(&rb, cols)
		if err != nil {
			if !errors.Is(err, batch.ErrBadBatch) {
				t.Fatalf("error %v does not wrap ErrBadBatch", err)
			}
			t.Fatalf("read straight, but FromRows refuses: %v", err)
		}
		if got.String() != want.String() || !slices.Equal(masks, rb.GetColumns().GetRoutes()) {
			t.Fatalf("read straight\n%s%v\nthe long way\n%s%v", got, masks, want, rb.GetColumns().GetRoutes())
		}
	})
}

// TestWireCodecRefusesRowsItHasNoBytesFor: a batch that says it has far
// more rows than it has bytes is refused by both ways of reading it,
// without memory allocated for the rows it says it has.
func TestWireCodecRefusesRowsItHasNoBytesFor(t *testing.T) {
	cols := []plan.Column{{Name: "t", Type: plan.Text}, {Name: "n", Type: plan.Number}}
	for _, vc := range [][]*wololov1.ValueColumn{
		{{Text: &wololov1.TextColumn{Data: []byte("x"), Width: 1}}, {Numbers: &wololov1.DecimalColumn{Unscaled: []int64{1}}}},
		{{Text: &wololov1.TextColumn{Data: []byte("x"), Lengths: []byte{1}}}, {Numbers: &wololov1.DecimalColumn{Unscaled: []int64{1}}}},
	} {
		enc, err := proto.Marshal(&wololov1.RowBatch{Rows: &wololov1.RowBatch_Columns{Columns: &wololov1.ColumnBatch{Rows: math.MaxUint32, Columns: vc}}})
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, ok := wire.Read(enc, cols)
		var rb wololov1.RowBatch
		if err := proto.Unmarshal(enc, &rb); err != nil {
			t.Fatal(err)
		}
		_, longErr := wire.FromRows(&rb, cols)
		runtime.ReadMemStats(&after)
		if ok || !errors.Is(longErr, batch.ErrBadBatch) {
			t.Errorf("a batch of %d rows in %d bytes: read straight %v, the long way %v", uint32(math.MaxUint32), len(enc), ok, longErr)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("reading it allocated %d bytes", grew)
		}
	}
}

// selectionOf is the rows of a batch at rows, or (rows nil) its run
// start..end-1.
func selectionOf(rows []int32, start, end int) wire.Selection {
	if rows != nil {
		return wire.Picked(rows)
	}
	return wire.Span(start, end-start)
}
