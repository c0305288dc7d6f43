package batch

import wololov1 "github.com/wololo/wololo/proto/wololo/v1"

// builder is what every row kind's builder does besides adding its typed
// rows.
type builder interface {
	Len() int
	Build() *wololov1.RowBatch
}

// Builders holds one builder of every row kind: the rows bound for one
// place (an emitter's receiver instance, a chain's internal stream), of
// whatever kinds they are. The emitter, the chain and the discard path
// all keep their rows in one, so what they do with rows of every kind is
// written once, over kinds.
type Builders struct {
	Match  MatchBuilder
	Player PlayerBuilder
	Token  TokenBuilder
	Civ    CivBuilder
	Column ColumnBuilder
}

// kinds is the table of the row kinds, in the order of RowBatch's oneof:
// the one place a row kind is described besides its proto message, its
// builder and its reader. A new row kind is one entry here and its field
// in Builders.
var kinds = [...]struct {
	// name is the kind's, as its tests say it.
	name string
	// of is the kind's builder in a Builders.
	of func(*Builders) builder
	// rows is the number of rows of a batch of the kind (the length of
	// the column every row has); false for a batch of another kind.
	rows func(*wololov1.RowBatch) (int, bool)
}{
	{"match", func(b *Builders) builder { return &b.Match }, func(rb *wololov1.RowBatch) (int, bool) {
		_, ok := rb.GetRows().(*wololov1.RowBatch_Matches)
		return len(rb.GetMatches().GetToken().GetEnds()), ok
	}},
	{"player", func(b *Builders) builder { return &b.Player }, func(rb *wololov1.RowBatch) (int, bool) {
		_, ok := rb.GetRows().(*wololov1.RowBatch_Players)
		return len(rb.GetPlayers().GetMatch().GetEnds()), ok
	}},
	{"token", func(b *Builders) builder { return &b.Token }, func(rb *wololov1.RowBatch) (int, bool) {
		_, ok := rb.GetRows().(*wololov1.RowBatch_Tokens)
		return len(rb.GetTokens().GetToken().GetEnds()), ok
	}},
	{"civ", func(b *Builders) builder { return &b.Civ }, func(rb *wololov1.RowBatch) (int, bool) {
		_, ok := rb.GetRows().(*wololov1.RowBatch_Civs)
		return len(rb.GetCivs().GetCiv()), ok
	}},
	{"column", func(b *Builders) builder { return &b.Column }, func(rb *wololov1.RowBatch) (int, bool) {
		_, ok := rb.GetRows().(*wololov1.RowBatch_Columns)
		return int(rb.GetColumns().GetRows()), ok
	}},
}

// Len is the number of rows of every kind added since they were last built.
func (b *Builders) Len() int {
	n := 0
	for _, k := range kinds {
		n += k.of(b).Len()
	}
	return n
}

// Build builds a batch of every kind that has rows, in the table's order,
// passes each to fn and resets the builders.
func (b *Builders) Build(fn func(*wololov1.RowBatch)) {
	_ = b.BuildErr(func(rb *wololov1.RowBatch) error { fn(rb); return nil })
}

// BuildErr is Build with an fn that may fail: it stops at fn's first error
// and returns it (the batches not yet built stay in the builders).
func (b *Builders) BuildErr(fn func(*wololov1.RowBatch) error) error {
	for _, k := range kinds {
		if bk := k.of(b); bk.Len() > 0 {
			if err := fn(bk.Build()); err != nil {
				return err
			}
		}
	}
	return nil
}

// Reset drops every row added since the last Build (the discard path: the
// rows of a batch an operator rejected).
func (b *Builders) Reset() {
	for _, k := range kinds {
		if bk := k.of(b); bk.Len() > 0 {
			bk.Build()
		}
	}
}

// Rows returns the number of rows in a batch: the length of the column
// every row of its kind has (0 for a batch with no rows set).
func Rows(rb *wololov1.RowBatch) int {
	for _, k := range kinds {
		if n, ok := k.rows(rb); ok {
			return n
		}
	}
	return 0
}
