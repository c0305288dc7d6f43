// Package ingest reads an input file as a job sees it: its header
// (ReadHeader: the columns and where the records begin) and then its
// records (Ingest: the bytes, fed in chunks of any size, cut into
// records, each well-formed one's fields handed on as text, and counted:
// rows read, malformed, records too long).
//
// Every way into a job reads a file through it, so that they agree byte
// for byte on what a header and a record are: the gateway parses uploads
// with it, and the client and `wololo demo` read their files' headers
// with it. It lives on the dataflow floor because it is the pure part of
// those roles that they share: no role imports another for it.
//
// What it may not touch: it is pure. It opens no file, dials nothing,
// keeps no state beyond one file's parse, logs nothing and reads no
// clock; it only reads the bytes it is fed and, for ReadHeader and
// RowsEnd, the file or reader its caller opened. Its dependencies are the
// dataflow packages it builds on (schema for the header's limits and the
// counts, csvio for the records).
package ingest
