// Package csvio splits RFC 4180 CSV input into records and writes plain
// CSV. It is the CSV reader of the pipeline (the gateway's ingest, the
// client's header check), so that every part of it cuts the same bytes
// into the same records and reports the same byte offsets, and the writer
// of the four result files. (The reference evaluator deliberately uses
// encoding/csv instead, to stay independent.)
//
// # Reading
//
// Splitter.Next cuts one record off the front of a byte buffer, for callers
// that own their buffering (the gateway feeds it upload chunks and keeps
// the unconsumed tail). Scanner wraps it around an io.Reader, with a
// growing buffer, and also strips a leading UTF-8 byte order mark.
//
// The format is exactly what encoding/csv reads with FieldsPerRecord -1
// and LazyQuotes false, which the reference evaluator uses: the pipeline
// and it must cut every input, well formed or not, into the same records.
// Fields are separated by ',' and records end at "\n" or "\r\n" (the '\r'
// is not part of the last field) or at the end of the input, where a final
// '\r' also ends the line. A field is quoted only if its first byte is
// '"'; inside it "" is a quote, commas and line breaks are data, and
// "\r\n" becomes "\n" (a lone '\r' stays). Where encoding/csv's Read
// returns a *csv.ParseError the record is Malformed: a '"' in an unquoted
// field (ErrBareQuote; so a field like ` "a"` is malformed too), or after
// a closing quote a byte other than ',', "\n", "\r\n" or a final '\r'
// (ErrQuote). Like encoding/csv's, the Malformed record runs through the
// end of the physical line where the error is, so that reading resumes at
// the next line (which may be in the middle of what the writer meant as a
// quoted field). A quote that never closes makes the rest of the input one
// Malformed record. Empty lines ("\n", "\r\n", a final "\r") are Blank
// (callers skip them, as encoding/csv does); a line of spaces is a record.
// The field count is not checked here: callers compare it with the
// header's.
//
// On every input, the Record and Malformed results of Splitter (and so of
// Scanner, after its byte order mark) are the successful Reads and
// ParseErrors of encoding/csv, with the same fields, and each ends where
// encoding/csv's InputOffset is after it. A differential test and a fuzz
// target check this on arbitrary input fed in chunks of every size. What
// differs by design: a Malformed record carries no fields (encoding/csv
// returns the fields before the error), the Scanner strips a leading
// UTF-8 byte order mark (as the reference evaluator does before handing
// its input to encoding/csv), and Scanner.SetMaxRecordSize can bound a
// record's size, which encoding/csv does not.
//
// # Writing
//
// AppendRecord and AppendField write plain CSV: a field is quoted only if
// it contains ',', '"', '\n' or '\r', with quotes doubled, and a record ends
// in "\n".
//
// # Performance
//
// Splitter allocates nothing per record once its scratch space has grown
// to the widest record: fields alias the input. A record whose fields are
// unquoted without quotes, or quoted without inner quotes, commas or line
// breaks, takes a fast path: bytes.IndexByte finds the line's end, commas
// are found 8 bytes at a time with SWAR bit tricks, and one bytes.IndexByte
// (no quoted field) or bytes.Count (some) checks the quotes. Anything else
// goes to a byte-level parser, which alone decides Malformed.
//
// BenchmarkSplitter and friends (bench_test.go) parse a generated
// matches.csv-like file with every field plain and again with every field
// quoted, beside encoding/csv with ReuseRecord on the same bytes. Splitter
// is several times faster than encoding/csv and allocates nothing per
// record, where encoding/csv makes one allocation plus the field strings;
// the exact encoding/csv rules (bare quotes, "\r\n" in quoted fields, a
// final '\r') cost the fast path only its search for bare quotes. The
// figures are in BENCHMARKS.md (Micro-benchmarks), measured by `make
// bench`; `make bench-micro` runs them alone.
//
// # Boundaries
//
// The package is pure: it does no I/O beyond the io.Reader it is given and
// the byte slices it appends to, no logging, no gRPC, no goroutines, and
// imports only the standard library.
package csvio
