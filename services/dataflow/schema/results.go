package schema

// ResultFile is the name of a query's output file: NAME.csv.
func ResultFile(query string) string { return query + ".csv" }

// ResultFiles are the output files of the queries named, in their order
// (ResultFile of each).
func ResultFiles(queries []string) []string {
	out := make([]string, len(queries))
	for i, q := range queries {
		out[i] = ResultFile(q)
	}
	return out
}

// ResultRecord is the commit record key under which a finished job's output
// file is stored.
func ResultRecord(file string) string { return "result/" + file }

// FailedResultsRecord is the commit record key under which a job's final
// commit says why it has no results (a query's answer larger than the
// gateway holds), instead of the result records.
const FailedResultsRecord = "results-failed"

// ResultRows is the number of data rows of a result file: its line ends
// outside quotes, less the header's. A field's quoted line break (a civ
// name may hold one) is no row end.
func ResultRows(data []byte) int {
	n, quoted := 0, false
	for _, c := range data {
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\n' && !quoted:
			n++
		}
	}
	return n - 1
}
