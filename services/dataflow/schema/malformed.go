package schema

import (
	"fmt"
	"strconv"
)

// The share of malformed records a job tolerates (--max-malformed).
//
// A file whose records are nearly all malformed (a wrong file, another
// separator, a broken export) must not end "done" with empty answers: past
// the limit its job fails, naming the file, the counts and the first bad
// record. The share is known for sure only at the end of a file, so that is
// where it is judged (MalformedLimit.Check); the gateway does it when an
// upload finishes, the in-memory demo when a file is parsed, with this
// same function.
//
// A small file is judged by a count, not a share: a 3-row file with one bad
// row is 33% malformed, yet it is a typo, not a wrong file. So up to
// MalformedGrace malformed records are tolerated whatever the share, unless
// the limit is 0 (none tolerated) or every record of the file is malformed
// (there is nothing to compute from, which is always an error below a
// limit of 1).
const (
	// DefaultMaxMalformed is the limit when neither the client nor the
	// gateway sets one: a file more than 10% malformed is not the file
	// its job was meant for.
	DefaultMaxMalformed = 0.1
	// MalformedGrace is how many malformed records any file may have
	// under a limit above 0, whatever their share.
	MalformedGrace = 10
)

// MalformedLimit is the largest share of a file's records that may be
// malformed, from 0 (none) to 1 (no limit).
type MalformedLimit float64

// Valid says whether the limit is a share: from 0 to 1.
func (l MalformedLimit) Valid() error {
	if !(l >= 0 && l <= 1) { // NaN too
		return fmt.Errorf("--max-malformed %v: a share from 0 (no malformed record) to 1 (no limit), e.g. 0.1", float64(l))
	}
	return nil
}

// Exceeded says whether a whole file of rows records, malformed of them
// malformed, is past the limit. It is pure.
func (l MalformedLimit) Exceeded(rows, malformed int64) bool {
	switch {
	case malformed <= 0 || l >= 1:
		return false
	case malformed >= rows:
		return true // nothing readable
	case l > 0 && malformed <= MalformedGrace:
		return false
	}
	return float64(malformed) > float64(l)*float64(rows)
}

// Check is the error of a whole file whose report is r when it is past
// the limit (Exceeded), nil otherwise: which file, how many of how many
// records, the limit, and the first malformed record as r lists it.
func (l MalformedLimit) Check(file File, r FileReport) error {
	return l.CheckNamed(file.String(), r)
}

// CheckNamed is Check of an input named name (a table's "table NAME").
func (l MalformedLimit) CheckNamed(name string, r FileReport) error {
	if !l.Exceeded(r.Rows, r.Malformed) {
		return nil
	}
	msg := fmt.Sprintf("%s: %s of %s records malformed (%s), more than --max-malformed %s",
		name, thousands(r.Malformed), thousands(r.Rows), percent(float64(r.Malformed)/float64(r.Rows)), percent(float64(l)))
	if len(r.Rejects) > 0 {
		first := r.Rejects[0]
		msg += fmt.Sprintf("; first at byte %d (%s): %q", first.Offset, first.Reason, first.Head)
	}
	return TooMalformed(msg)
}

// TooMalformed is Check's error: a file past its job's limit.
type TooMalformed string

func (e TooMalformed) Error() string { return string(e) }

// percent writes a share as a percentage with at most one decimal.
func percent(share float64) string {
	return strconv.FormatFloat(float64(int64(share*1000+0.5))/10, 'f', -1, 64) + "%"
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// Reasons a record is rejected (Reject.Reason).
const (
	// RejectFieldCount: not as many fields as the header.
	RejectFieldCount = "field-count"
	// RejectQuoting: bad quoting (csvio.Malformed).
	RejectQuoting = "quoting"
	// RejectTooLong: over the record size bound (--max-record-bytes).
	RejectTooLong = "too-long"
)

// Reject is one malformed record a reader skipped.
type Reject struct {
	Offset int64  // of its first byte in the file
	Reason string // RejectFieldCount, RejectQuoting or RejectTooLong
	Head   []byte // its first RejectHeadBytes bytes at most
}

// MaxRejectsListed bounds FileReport.Rejects: what a job keeps of its
// malformed records is bounded whatever the file (about 100 KB a file).
const MaxRejectsListed = 1000

// RejectHeadBytes is how much of a rejected record is kept.
const RejectHeadBytes = 80

// AddReject notes a malformed record at offset whose bytes begin with
// record, if fewer than MaxRejectsListed are listed; it keeps a copy of
// at most RejectHeadBytes of them.
func (r *FileReport) AddReject(offset int64, reason string, record []byte) {
	if len(r.Rejects) >= MaxRejectsListed {
		return
	}
	head := append([]byte(nil), record[:min(len(record), RejectHeadBytes)]...)
	r.Rejects = append(r.Rejects, Reject{Offset: offset, Reason: reason, Head: head})
}
