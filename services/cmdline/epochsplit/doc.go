// Package epochsplit is what `wololo demo --epochs N` (in process) and
// `wololo local run --epochs N` (on the durable cluster, through the
// client) share of a standing job fed in N appends: how the input is cut
// (each table's records into N contiguous runs, the k-th run of every
// table in epoch k: Cuts, SplitCSV) and the line printed for each
// version (Header, Line, ChangeSize). Both print alike and cut alike: the
// k-th run is the records that start in the k-th share of the file's
// bytes (Cuts: RunLast over the file's size), found as the demo reads the
// file (exec.NewCSVReaderCut) and in one reading by SplitCSV, not by a
// count of the records, which would read the file once more.
package epochsplit
