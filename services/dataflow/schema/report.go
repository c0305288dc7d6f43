package schema

// FileReport counts what a reader of one input file read, skipped and left
// out: the per-file, per-reason figures every job reports.
type FileReport struct {
	// Rows is the number of data records read: malformed ones included,
	// blank lines and the header excluded.
	Rows int64
	// Malformed is the number of records skipped for the wrong field count
	// or bad quoting.
	Malformed int64
	// Missing maps a column to the number of rows whose value in it was
	// missing or invalid, so that the rows were left out of the queries
	// that need it: the number, boolean and duration columns, and civ when
	// empty.
	Missing map[string]int64
	// OversizedAt holds the byte offsets of the records skipped for being
	// over the record size bound (counted in Malformed too), the first
	// MaxOversizedListed of them.
	OversizedAt []int64
	// Rejects are the first MaxRejectsListed malformed records, in file
	// order (AddReject).
	Rejects []Reject
}

// MaxOversizedListed bounds FileReport.OversizedAt.
const MaxOversizedListed = 100

// AddOversized notes a record skipped for its size at offset.
func (r *FileReport) AddOversized(offset int64) {
	if len(r.OversizedAt) < MaxOversizedListed {
		r.OversizedAt = append(r.OversizedAt, offset)
	}
}

// AddMissing counts n more rows with a missing value in column, creating
// the map if needed.
func (r *FileReport) AddMissing(column string, n int64) {
	if r.Missing == nil {
		r.Missing = map[string]int64{}
	}
	r.Missing[column] += n
}
