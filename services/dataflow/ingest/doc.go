// Package ingest reads an input file as the pipeline sees it: its header
// (ReadHeader: the columns and where the records begin) and then its
// records (Ingest: the bytes, fed in chunks of any size, cut into records,
// their values parsed and projected into rows for the first stage, and
// counted: rows read, malformed, values missing, records too long).
//
// Every way into the pipeline reads a file through it, so that they agree
// byte for byte on what a header, a record and a row are: the gateway
// parses uploads with it, the client checks a file's header with it before
// uploading, and the in-memory executor of `wololo demo` parses its pieces
// with it. It lives on the dataflow floor because it is the pure part of
// those roles that they share: no role imports another for it.
//
// What it may not touch: it is pure. It opens no file, dials nothing,
// keeps no state beyond one file's parse, logs nothing and reads no
// clock; it only reads the bytes it is fed and, for ReadHeader, the file
// its caller opened. Its dependencies are the dataflow packages it builds
// on (schema for the columns and values, csvio for the records, batch and
// stage for the rows it emits).
package ingest
