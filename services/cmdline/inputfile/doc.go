// Package inputfile opens a CSV file a user names on the command line
// (--matches, --players, --table NAME=F) the way every command reads it:
// a plain file, a gzip-compressed one, or "-", standard input.
//
// A file is gzip-compressed when it starts with gzip's magic bytes (1f
// 8b), whatever its name: a CSV file cannot start with them (neither is
// a printable byte nor a byte order mark). Its content, for every reader
// (the header, the client's upload, the demo's parse), is the
// decompressed stream: offsets, sizes and the fingerprint are in it, so
// a job made from data.csv.gz is the job made from data.csv, and an
// upload resumed at an offset the gateway acknowledged resumes at the
// same byte of the CSV text whichever of the two the client is given.
//
// The gateway needs each input's size before its upload starts (its
// quotas, its resume offsets, the end of the file are all in bytes of the
// CSV text), and gzip does not say it (its trailer's ISIZE is the size
// modulo 2^32, of the last member only). So Open makes one counting pass
// over a compressed file, decompressing it without keeping it: the size,
// and the fingerprint (the first and last MiB) on the way. It costs one
// decompression more (0.7 CPU-seconds for data/tenth's two files
// gzipped, 86 MB of CSV, where `gzip -dc` takes 0.57; 7 MB of memory at
// most; 0.01 s for the plain files) and no disk; the alternative,
// decompressing once into a temporary file, would cost the whole CSV's
// size in disk. A resume at
// offset N decompresses (and discards) the first N bytes again: the
// stream has no index.
//
// Standard input can be read once, but a job may need its bytes again (a
// resume after a break, a job lost and submitted again, a standing job's
// epoch split): "-" is spooled to a temporary file as it is read, before
// anything is sent, and read from there; Close removes the spool. Its
// bytes are kept as they came (compressed ones stay compressed).
package inputfile
