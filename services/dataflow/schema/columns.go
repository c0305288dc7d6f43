package schema

import (
	"errors"
	"fmt"
)

// File names one of the two input files.
type File int

const (
	Matches File = iota // matches.csv
	Players             // match_players.csv
)

// String returns the file's name: "matches.csv" or "match_players.csv".
func (f File) String() string {
	switch f {
	case Matches:
		return "matches.csv"
	case Players:
		return "match_players.csv"
	}
	return fmt.Sprintf("File(%d)", int(f))
}

// Files lists the input files, in the order of File.
var Files = [...]File{Matches, Players}

// RequiredColumns lists, per file, the header names the queries need, in
// the order a header is checked (the first one missing is reported).
// Changing it changes nothing: the parsers use their own copies.
var RequiredColumns = map[File][]string{
	Matches: append([]string(nil), matchColumns[:]...),
	Players: append([]string(nil), playerColumns[:]...),
}

var (
	matchColumns  = [...]string{"token", "ladder", "mirror", "average_rating", "map", "server", "duration"}
	playerColumns = [...]string{"match", "rating", "civ", "winner"}
)

// ErrMissingColumn is matched (errors.Is) by every *HeaderError.
var ErrMissingColumn = errors.New("header is missing a required column")

// MaxHeaderBytes bounds a header row: a longer one is not a header this
// system takes (binary data, or a file without line ends), and is refused
// with that message by the client, the gateway and the reference alike.
const MaxHeaderBytes = 1 << 20

// MaxRecordBytes is the contract's default bound on one data record: a
// longer one is malformed (skipped and counted), so that no record, an
// unclosed quote included, makes a process hold more than this, and every
// row fits a batch message. The gateway's --max-record-bytes and the
// reference's change it, up to MaxRecordLimit.
const MaxRecordBytes = 1 << 20

// MaxRecordLimit is the largest record bound a gateway takes: a batch is
// cut at about 1 MiB, and one more row must keep it under the 4 MiB a gRPC
// message may have.
const MaxRecordLimit = 2 << 20

// HeaderError reports a header without one of its file's required columns,
// or with one of them twice (which one is meant cannot be known).
type HeaderError struct {
	File   File
	Column string // the first required column missing, or repeated
	Twice  bool
}

func (e *HeaderError) Error() string {
	if e.Twice {
		return fmt.Sprintf("%s: header has the %q column twice", e.File, e.Column)
	}
	return fmt.Sprintf("%s: header has no %q column", e.File, e.Column)
}

// Is makes errors.Is(err, ErrMissingColumn) true.
func (e *HeaderError) Is(target error) bool { return target == ErrMissingColumn }

// HeaderTooLong is the error of a header row over MaxHeaderBytes.
func HeaderTooLong(f File) error {
	return fmt.Errorf("%s: the header row is longer than %d bytes: not a CSV header (is it the right file?)", f, MaxHeaderBytes)
}

// CheckHeaderSize refuses a header whose fields together exceed
// MaxHeaderBytes.
func CheckHeaderSize(f File, fields [][]byte) error {
	n := 0
	for _, h := range fields {
		n += len(h) + 1
	}
	if n > MaxHeaderBytes {
		return HeaderTooLong(f)
	}
	return nil
}

// MatchColumns holds the index in a matches.csv record of each column the
// queries read, and Fields, the number of fields in the header: a record
// with another count is malformed.
type MatchColumns struct {
	Token, Ladder, Mirror, AverageRating, Map, Server, Duration int
	Fields                                                      int
}

// PlayerColumns is MatchColumns for match_players.csv.
type PlayerColumns struct {
	Match, Rating, Civ, Winner int
	Fields                     int
}

// ParseMatchHeader finds the required columns of matches.csv in a header
// record. Names match exactly (case-sensitive, no trimming), extra columns
// are ignored (a repeated extra one too); a required one that repeats is an
// error.
func ParseMatchHeader(fields [][]byte) (MatchColumns, error) {
	var idx [len(matchColumns)]int
	if err := findColumns(Matches, matchColumns[:], fields, idx[:]); err != nil {
		return MatchColumns{}, err
	}
	return MatchColumns{
		Token: idx[0], Ladder: idx[1], Mirror: idx[2], AverageRating: idx[3],
		Map: idx[4], Server: idx[5], Duration: idx[6], Fields: len(fields),
	}, nil
}

// ParsePlayerHeader is ParseMatchHeader for match_players.csv.
func ParsePlayerHeader(fields [][]byte) (PlayerColumns, error) {
	var idx [len(playerColumns)]int
	if err := findColumns(Players, playerColumns[:], fields, idx[:]); err != nil {
		return PlayerColumns{}, err
	}
	return PlayerColumns{Match: idx[0], Rating: idx[1], Civ: idx[2], Winner: idx[3], Fields: len(fields)}, nil
}

// findColumns sets idx[i] to the index in header of names[i].
func findColumns(file File, names []string, header [][]byte, idx []int) error {
	if err := CheckHeaderSize(file, header); err != nil {
		return err
	}
	for i, name := range names {
		idx[i] = -1
		for j, h := range header {
			if string(h) != name {
				continue
			}
			if idx[i] >= 0 {
				return &HeaderError{File: file, Column: name, Twice: true}
			}
			idx[i] = j
		}
		if idx[i] < 0 {
			return &HeaderError{File: file, Column: name}
		}
	}
	return nil
}
