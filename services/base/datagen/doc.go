// Package datagen generates synthetic input for the Wololo queries: a pair
// of CSV files, matches.csv and match_players.csv, shaped like the public
// "Age of Empires II DE match data" dataset (same column names, value
// forms, value ranges and rough distributions) at any scale, by default
// 3,100,000 matches and about 10 million player rows.
//
// It exists so that every deployment mode can be tested and benchmarked on
// realistic, reproducible data without downloading the real dataset. The
// output is a pure function of Config: the same Config always yields the
// same bytes, and the format variants (ShuffleColumns, CRLF, QuoteAll)
// change only the layout of the files, never the data in them, so the four
// query answers are identical across variants of one seed.
//
// On purpose the data is not clean. Besides the common case it contains,
// in small proportions, everything the contract in docs/queries.md says a
// reader must cope with: boundary values of each query predicate
// (average_rating exactly 2000, durations of exactly 2:00:00 and 2:00:01,
// 1v1 pairs with 10 × winner = 7 × loser, winners rated exactly 1000),
// missing and malformed values (empty ratings, booleans written TRUE, 1,
// false or yes, numbers such as "1500.", "1.5e+03" or "1,500", empty civs,
// ladder and map names in another letter case),
// multi-day durations written "1 day, 2:03:04" (and therefore quoted),
// duplicated match rows, orphan player rows, 1v1 matches with three player
// rows or two winners, rows with the wrong number of fields, and player
// rows scattered far from the other rows of their match (emitted through
// a bounded shuffle window, so memory stays constant at any scale).
//
// It is a library rather than a tool because the embedded demo generates
// its default dataset with it, and the end-to-end, local-mode, chaos and
// bench tests generate theirs; the `wololo datagen` command (tools/datagen)
// is only its flag-parsing front end.
//
// Scope and limits: besides the Go standard library the package imports
// only atomicfile (which puts files in place and knows nothing of their
// contents), so it can never share a bug with the query engines it is meant
// to test; it does not compute query answers. It writes only to the
// io.Writers it is given, or, through WriteDir, to matches.csv and
// match_players.csv inside the one output folder it is given (creating that
// folder). It reads no files, uses no network, sets no global state and
// never calls os.Exit.
package datagen
