package schema

// ResultFiles are the names of the four output files, in query order.
var ResultFiles = []string{"q1.csv", "q2.csv", "q3.csv", "q4.csv"}

// ResultRecord is the commit record key under which a finished job's output
// file is stored.
func ResultRecord(file string) string { return "result/" + file }
