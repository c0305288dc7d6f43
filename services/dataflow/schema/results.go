package schema

// ResultFiles are the names of the four output files, in query order.
var ResultFiles = []string{"q1.csv", "q2.csv", "q3.csv", "q4.csv"}

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
