// Package batch builds and reads the columnar row batches (wololo.v1.RowBatch)
// that travel between the tasks of a job's plan: ColumnBatches, rows of any
// columns (ColumnBuilder builds them as text; ReadColumns checks a received
// one and reads its values), and the one encoding of a batch (Encode).
// Readers refuse a batch whose columns disagree in length instead of
// panicking. This package knows the row shapes only: no routing, no I/O,
// no query logic.
package batch

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// ErrBadBatch is returned for a batch whose columns are inconsistent.
var ErrBadBatch = errors.New("malformed row batch")

// The builders start each batch's columns with room for the largest batch
// they built so far: batches are cut at the same row count, so a column
// then fills without growing, where growing it from nothing copied it about
// twice over.
type textBuilder struct {
	col        wololov1.TextColumn
	data, ends int // the largest built so far
}

func (t *textBuilder) add(b []byte) {
	t.col.Data = append(t.col.Data, b...)
	t.col.Ends = append(t.col.Ends, uint32(len(t.col.Data)))
}

func (t *textBuilder) build() *wololov1.TextColumn {
	c := &wololov1.TextColumn{Data: t.col.Data, Ends: t.col.Ends}
	t.data, t.ends = max(t.data, len(c.Data)), max(t.ends, len(c.Ends))
	t.col = wololov1.TextColumn{Data: make([]byte, 0, t.data), Ends: make([]uint32, 0, t.ends)}
	return c
}

func checkText(c *wololov1.TextColumn, n int, name string) error {
	if len(c.GetEnds()) != n {
		return fmt.Errorf("%w: column %s has %d rows, want %d", ErrBadBatch, name, len(c.GetEnds()), n)
	}
	prev := uint32(0)
	for _, e := range c.GetEnds() {
		if e < prev || int(e) > len(c.GetData()) {
			return fmt.Errorf("%w: column %s has a bad offset", ErrBadBatch, name)
		}
		prev = e
	}
	return nil
}

func textAt(c *wololov1.TextColumn, i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = c.Ends[i-1]
	}
	return c.Data[start:c.Ends[i]]
}

// Encode returns rb's proto encoding, sized once and allocated to fit, and
// its rows. It is the one time a batch is encoded: the store, the sender
// and the receiver's journal keep these bytes, never encoding them again.
func Encode(rb *wololov1.RowBatch) ([]byte, int, error) {
	b, err := proto.Marshal(rb)
	if err != nil {
		return nil, 0, fmt.Errorf("encode a batch of %d rows: %w", Rows(rb), err)
	}
	return b, Rows(rb), nil
}

// Rows returns the number of rows in a batch (0 for a batch with no rows
// set).
func Rows(rb *wololov1.RowBatch) int { return int(rb.GetColumns().GetRows()) }
