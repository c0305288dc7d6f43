// Package respell makes the input of the tests that hold the SQL engine's
// output to one answer whatever the order rows arrive in (docs/sql.md
// "Numbers"): a table's rows with their numbers written other ways
// (1500, 1500.0, 1500.00: equal values of different texts), some rows
// twice, each twin written another way, in an order of the test's
// choosing; as tables for the in-process runners and as CSV files for
// the demo.
//
// It only rewrites the columns every query of a job reads as numbers
// (Columns): there a number's text is its value at its scale, so that
// respelling it changes no value the queries compute with.
package respell

import (
	"bytes"
	"math/rand/v2"

	"github.com/wololo/wololo/services/dataflow/csvio"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// Columns is, per table, the columns that the scans of the plans read as
// numbers (not durations), and none reads as anything else.
func Columns(roots ...*plan.Node) map[string]map[string]bool {
	number, other := map[string]map[string]bool{}, map[string]map[string]bool{}
	var walk func(n *plan.Node)
	walk = func(n *plan.Node) {
		if n.Op == plan.Scan {
			for _, c := range n.Output {
				kinds := other
				if c.Type == plan.Number && c.Read == "" {
					kinds = number
				}
				if kinds[n.Table] == nil {
					kinds[n.Table] = map[string]bool{}
				}
				kinds[n.Table][c.Name] = true
			}
		}
		for _, in := range n.Input {
			walk(in)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	for table, cols := range number {
		for c := range cols {
			if other[table][c] {
				delete(cols, c)
			}
		}
	}
	return number
}

// Rows is tab's rows with the numbers of the columns named by numbers
// written at random in their normal form or with one or two more
// trailing zeros (within value.MaxDigits), and about half the rows twice,
// the twin written another way. twice reports whether some value is
// written two ways.
func Rows(tab *exec.Table, numbers map[string]bool, r *rand.Rand) (rows [][][]byte, twice bool) {
	cols := make([]plan.Column, len(tab.Columns))
	for i, name := range tab.Columns {
		cols[i] = plan.Column{Name: name, Type: plan.Text}
	}
	all := exec.Concat(cols, tab.Batches)
	spellings := map[string]string{} // a value's normal form: its first text
	respell := func(f []byte) []byte {
		d, ok := value.ReadNumber(f)
		if !ok {
			return f
		}
		normal := d.Normal().Append(nil)
		out := normal
		for range r.IntN(3) {
			if !bytes.ContainsRune(out, '.') {
				out = append(out, '.')
			}
			out = append(out, '0')
		}
		if e, ok := value.ReadNumber(out); !ok || e.Cmp(d) != 0 {
			out = f
		}
		if first, ok := spellings[string(normal)]; !ok {
			spellings[string(normal)] = string(out)
		} else if first != string(out) {
			twice = true
		}
		return out
	}
	for i := range all.N {
		for copies := 1 + r.IntN(2); copies > 0; copies-- {
			row := make([][]byte, len(cols))
			for c, v := range all.Cols {
				row[c] = v.Text(i)
				if numbers[tab.Columns[c]] {
					row[c] = respell(row[c])
				}
			}
			rows = append(rows, row)
		}
	}
	return rows, twice
}

// Shuffle puts rows in a random order.
func Shuffle(rows [][][]byte, r *rand.Rand) {
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
}

// Table is a table of rows, in batches of batchRows rows (at least 1).
func Table(columns []string, rows [][][]byte, batchRows int) *exec.Table {
	tab := &exec.Table{Columns: columns, Rows: int64(len(rows))}
	for start := 0; start < len(rows); start += batchRows {
		part := rows[start:min(start+batchRows, len(rows))]
		b := &exec.Batch{N: len(part)}
		for c := range columns {
			v := &exec.Vec{Type: plan.Text, N: len(part)}
			for _, row := range part {
				v.Data = append(v.Data, row[c]...)
				v.Ends = append(v.Ends, uint32(len(v.Data)))
			}
			b.Cols = append(b.Cols, v)
		}
		tab.Batches = append(tab.Batches, b)
	}
	return tab
}

// CSV is a CSV file of rows under a header of columns, a field quoted
// when it must be (csvio.AppendRecord).
func CSV(columns []string, rows [][][]byte) []byte {
	out := csvio.AppendRecord(nil, columns...)
	fields := make([]string, len(columns))
	for _, row := range rows {
		for i, f := range row {
			fields[i] = string(f)
		}
		out = csvio.AppendRecord(out, fields...)
	}
	return out
}
