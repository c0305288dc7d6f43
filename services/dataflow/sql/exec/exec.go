// Package exec is the logic of the SQL engine's operators over columnar
// batches: what the physical plan's operators (services/dataflow/sql/sqlops)
// run batch by batch, through stream.go's exported pieces and the
// incremental state below. (The tests' oracle that runs a logical plan
// whole with these pieces, node after node, is
// services/dataflow/sql/sqlgen/oracle: it runs in no job.)
//
// A batch is columns of equal length (Vec: text as one arena plus end
// offsets, the layout of the wire's TextColumn; exact decimals; booleans),
// and every expression is evaluated one column vector at a time. The
// keyed operators (the hash join, the semi-join's key set, the hash
// aggregate, distinct) keep their keys in a KeyTable keyed by the bytes
// of the key's values (appendKey), which the operators of one key on a
// shard share, each with its own state per key beside it; each also
// takes the slots of a batch's keys looked up once for all of them
// (KeyTable.Slots; AddSlots, KeepSlots, ProbeSlots). An outer join's
// unmatched rows and a key of several columns, KEY(...), one value of
// them all, are join.go's; ONE_ROW, a scalar subquery's value or its
// error of more than one row, subquery.go's. Sort orders by its
// keys, then by every column, equal numbers by their scale, so that the
// output is the same whatever order the rows arrived in; where one value
// stands for equal ones written differently (1500, 1500.0), it is the
// rule's, never the first seen: a group key or a DISTINCT row is written
// in the normal form (value.Dec.Normal), MIN and MAX keep the larger
// scale.
//
// The window functions (window.go, WindowRows) sort a Window node's rows
// by partition, its order, then every column and scale, as Sort does, so
// that ROW_NUMBER among peers never depends on arrival; their aggregates
// are the aggregate's accumulators, fed a peer group at a time and read
// after each (the default frame, up to the row's last peer).
//
// An aggregate of CASE WHEN c THEN x [ELSE constant] END (q2's and q3's
// conditional counts, sums and maxima) reads x where c is true and the
// constant (without ELSE, NULL) elsewhere, without making the CASE's
// column; the aggregates of one condition evaluate it once per batch
// (aggInput).
//
// The aggregate functions are one table (aggfunc.go): each function is
// one entry with its bind rule and result type, its state per group, its
// update and result, its partial columns, their merge and its result of
// them. The table lives here, not in a package of its own, because the
// accumulator is the bulk of an entry and it works on this package's
// vectors and per-group state; the binder (LookupAggregate,
// AggResultType), the physical planner (PartialColumns) and sqlops
// (PartialAggs, MergeAggs) read the rest of an entry from here. A new
// function is one entry (docs/sql.md's STDDEV_SAMP was).
//
// Numbers are bounded (value.MaxDigits, docs/sql.md "Numbers"): the scan
// reads a wider field as NULL, and an arithmetic result, a SUM or an AVG
// past the bound is NULL, so that every number of a Vec Fits and every
// operation works on bounded numbers. A partial aggregate's sums are the
// exception: kept whole (NewPartialAggregation) for the final aggregate,
// which bounds the total.
//
// The scan reads a table's text as the kinds the plan gives its columns
// (docs/queries.md's value rules, services/dataflow/sql/value) and counts,
// per column, the values that were empty and those that were present but
// did not read as the kind; both become NULL.
//
// ReadCSV and CSVReader read a CSV file's records into batches of text
// (TextRows): CSVReader batch by batch, its pieces parsed on goroutines
// of its own, ReadCSV the same taken whole. (The gateway's upload reads
// its records' fields straight into its scan's typed columns instead,
// with the builder's read, as readAs reads a text column.)
//
// The package does no I/O beyond the readers and writers it is given, and
// no logging. The incremental state (Aggregation, Distinct, KeySet, Join)
// is what the physical plan's operators stream through, and it writes and
// reads its own snapshots (snapshot.go).
package exec

import (
	"github.com/wololo/wololo/services/dataflow/csvio"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/value"
)

// ColumnStats counts one scanned column's values that read as NULL.
type ColumnStats struct {
	Table, Column string
	Type          plan.Type
	Read          plan.Read // the column's read rule, "" for its type's
	Missing       int64     // empty fields
	Invalid       int64     // present, but not a value of Type
}

// Result is a query's output.
type Result struct {
	Columns []plan.Column
	Rows    *Batch
	Stats   []ColumnStats // one per column read as a number, boolean or duration, per scan
}

// readAs reads a text column as a scan reads column c, counting what
// reads as NULL.
func readAs(src *Vec, c plan.Column, st *ColumnStats) *Vec {
	if c.Type == plan.Text {
		return src
	}
	out := newBuilder(c.Type, src.N)
	duration := c.Read == plan.ReadDuration
	for i := range src.N {
		out.read(src.Text(i), duration, st)
	}
	return out.v
}

// read appends field f of a table read by the rule of the builder's type
// (docs/queries.md's value rules), or, a number's, by the duration rule:
// text as it is; else NULL when f is empty or not a value of the rule,
// counted in st.
func (b *builder) read(f []byte, duration bool, st *ColumnStats) {
	var ok bool
	switch b.v.Type {
	case plan.Text:
		b.text(f)
		return
	case plan.Number:
		var d value.Dec
		if duration {
			d, ok = value.ReadDuration(f)
		} else {
			d, ok = value.ReadNumber(f)
		}
		if ok {
			b.num(d)
		}
	case plan.Bool:
		var v bool
		if v, ok = value.ReadBool(f); ok {
			b.boolean(v)
		}
	}
	if !ok {
		b.null()
		if len(f) == 0 {
			st.Missing++
		} else {
			st.Invalid++
		}
	}
}

// CSV writes the result as docs/queries.md formats the output files: a
// header of the column names, one line per row ending in "\n", a field
// quoted only when it holds a comma, a double quote or a line break.
// Text is written as its bytes, numbers in decimal with their scale,
// booleans as true and false, NULL as an empty field.
func (r *Result) CSV() []byte {
	out := AppendCSVHeader(nil, r.Columns)
	for row := range r.Rows.N {
		out = AppendCSVRow(out, r.Rows, row)
	}
	return out
}

// AppendCSVHeader appends the header line of a result of the columns,
// as CSV writes it.
func AppendCSVHeader(out []byte, cols []plan.Column) []byte {
	for i, c := range cols {
		if i > 0 {
			out = append(out, ',')
		}
		out = csvio.AppendField(out, c.Name)
	}
	return append(out, '\n')
}

// AppendCSVRow appends row of b as a line of CSV's, every column of b.
func AppendCSVRow(out []byte, b *Batch, row int) []byte {
	var num [32]byte
	for i, v := range b.Cols {
		if i > 0 {
			out = append(out, ',')
		}
		switch {
		case v.IsNull(row):
		case v.Type == plan.Text:
			out = csvio.AppendField(out, string(v.Text(row)))
		case v.Type == plan.Number:
			out = append(out, v.Nums[row].Append(num[:0])...)
		case v.Type == plan.Bool:
			if v.Bools[row] {
				out = append(out, "true"...)
			} else {
				out = append(out, "false"...)
			}
		}
	}
	return append(out, '\n')
}
