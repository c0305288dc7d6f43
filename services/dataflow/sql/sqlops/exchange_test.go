package sqlops_test

import (
	"bytes"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
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
