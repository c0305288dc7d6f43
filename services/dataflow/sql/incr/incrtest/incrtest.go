// Package incrtest is what the tests of standing queries share (incr's
// engine, sqlops' epoch task): a dataset cut into random epochs, the
// rows of the epochs so far, and a version's rows as its changes add
// them up. It is for tests alone.
package incrtest

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
)

// Epochs cuts each table's rows into n epochs at random cut points, each
// table on its own (so a player row may come epochs before its match,
// and an epoch may have no rows of a table, or of any): per epoch, per
// table, that epoch's rows.
func Epochs(r *rand.Rand, tables map[string]*exec.Table, n int) []map[string]*exec.Table {
	out := make([]map[string]*exec.Table, n)
	for i := range out {
		out[i] = map[string]*exec.Table{}
	}
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		t := tables[name]
		all := exec.Concat(TextColumns(t.Columns), t.Batches)
		cuts := []int{0, all.N}
		for range n - 1 {
			cuts = append(cuts, r.IntN(all.N+1))
		}
		slices.Sort(cuts)
		for i := range n {
			rows := make([]int32, 0, cuts[i+1]-cuts[i])
			for k := cuts[i]; k < cuts[i+1]; k++ {
				rows = append(rows, int32(k))
			}
			out[i][name] = &exec.Table{Columns: t.Columns, Batches: []*exec.Batch{all.Rows(rows)}}
		}
	}
	return out
}

// TextColumns are text columns of the names: a table's as read.
func TextColumns(names []string) []plan.Column {
	cols := make([]plan.Column, len(names))
	for i, n := range names {
		cols[i] = plan.Column{Name: n, Type: plan.Text}
	}
	return cols
}

// Prefix is the tables of epochs 1..k.
func Prefix(parts []map[string]*exec.Table, k int) map[string]*exec.Table {
	out := map[string]*exec.Table{}
	for _, p := range parts[:k] {
		for name, t := range p {
			if out[name] == nil {
				out[name] = &exec.Table{Columns: t.Columns}
			}
			out[name].Batches = append(out[name].Batches, t.Batches...)
		}
	}
	return out
}

// Rows is a multiset of a CSV's rows (its lines after the header).
func Rows(csv []byte) map[string]int64 {
	out := map[string]int64{}
	_, body, _ := bytes.Cut(csv, []byte("\n"))
	for l := range strings.Lines(string(body)) {
		out[l]++
	}
	return out
}

// AddChange adds a change, as its CSV writes it (the last field each
// row's weight, never 0), to a multiset of rows.
func AddChange(sum map[string]int64, change []byte) error {
	_, body, _ := bytes.Cut(change, []byte("\n"))
	for l := range strings.Lines(string(body)) {
		i := strings.LastIndexByte(l, ',')
		w, err := strconv.ParseInt(strings.TrimSuffix(l[i+1:], "\n"), 10, 64)
		if err != nil || w == 0 {
			return fmt.Errorf("change line %q: weight %d, %v", l, w, err)
		}
		row := l[:i] + "\n"
		if sum[row] += w; sum[row] == 0 {
			delete(sum, row)
		}
	}
	return nil
}
