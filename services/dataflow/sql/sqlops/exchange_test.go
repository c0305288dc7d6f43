package sqlops_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// TestChunksBoundRowsAndBytes: a batch within the bounds goes as it is;
// one of more rows, or of more text, is cut into runs within them, in
// order, every row once.
func TestChunksBoundRowsAndBytes(t *testing.T) {
	text := func(n, width int) *exec.Batch {
		vb := exec.NewVecBuilder(plan.Text, n)
		for i := range n {
			_ = vb.Text(bytes.Repeat([]byte{byte('a' + i%26)}, width))
		}
		return &exec.Batch{N: n, Cols: []*exec.Vec{vb.Vec()}}
	}
	for _, c := range []struct {
		name       string
		b          *exec.Batch
		wantChunks int
	}{
		{"small", text(100, 10), 1},
		{"many rows", text(20000, 1), 3},
		{"wide rows", text(10, 300_000), 4},
	} {
		got := sqlops.ChunkRanges(c.b)
		if len(got) != c.wantChunks {
			t.Errorf("%s: %d chunks, want %d", c.name, len(got), c.wantChunks)
		}
		n := 0
		for _, r := range got {
			start := uint32(0)
			if r[0] > 0 {
				start = c.b.Cols[0].Ends[r[0]-1]
			}
			size := int(c.b.Cols[0].Ends[r[1]-1] - start)
			if r[0] != n || r[1]-r[0] > 8192 || size > 1<<20 {
				t.Errorf("%s: a chunk of rows %d..%d and %d bytes after %d rows", c.name, r[0], r[1], size, n)
			}
			n = r[1]
		}
		if n != c.b.N {
			t.Errorf("%s: %d rows in the chunks, want %d", c.name, n, c.b.N)
		}
	}
}

// TestExchangeRoutesByItsColumns: an exchange keyed by a key of two
// columns (a self-join's KEY(match, team)) sends each row to the
// instance its key, as the channel's column carries it, routes to, and
// makes the key's column once for both (allocations bounded).
func TestExchangeRoutesByItsColumns(t *testing.T) {
	tables := map[string]*exec.Table{"match_players": {Columns: []string{"match", "civ", "team", "winner"}}}
	p := planOf(t, map[string]string{"q": `SELECT p.civ, q.civ, COUNT(*) FROM match_players p
		JOIN match_players q ON q.match = p.match AND q.team = p.team GROUP BY 1, 2`}, []string{"q"}, tables, 3)
	var ch *physical.Channel
	for _, c := range p.Channels {
		if len(c.Key) == 1 && c.Columns[c.Key[0]].Name == "KEY(match, team)" {
			ch = c
		}
	}
	if ch == nil {
		t.Fatalf("no channel by KEY(match, team):\n%s", p)
	}
	x, err := sqlops.NewExchange(p, ch, 3)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	cols := make([]*exec.VecBuilder, 4)
	for c := range cols {
		cols[c] = exec.NewVecBuilder(plan.Text, n)
	}
	for i := range n {
		for c, v := range []string{fmt.Sprintf("m%d", i/4), "Franks", fmt.Sprint(i % 2), "True"} {
			_ = cols[c].Text([]byte(v))
		}
	}
	b := &exec.Batch{N: n}
	for _, c := range cols {
		b.Cols = append(b.Cols, c.Vec())
	}
	// The producer's input is the scan's: the table's columns, as text.
	sent := 0
	route := func(to int, out *exec.Batch, rows []int32, _ []uint64) error {
		key := out.Cols[ch.Key[0]]
		for _, r := range rows {
			if want := stage.Route(key.Text(int(r)), 3); want != to {
				t.Errorf("row %d (key %q) sent to %d, want %d", r, key.Text(int(r)), to, want)
			}
		}
		sent += len(rows)
		return nil
	}
	if err := x.Route(b, route); err != nil {
		t.Fatal(err)
	}
	if sent != n {
		t.Errorf("%d rows sent, want %d", sent, n)
	}
	allocs := testing.AllocsPerRun(5, func() {
		_ = x.Route(b, func(int, *exec.Batch, []int32, []uint64) error { return nil })
	})
	if allocs > 30 { // 45 when the key was made twice
		t.Errorf("Route of %d rows: %v allocations, want at most 30", n, allocs)
	}
}
