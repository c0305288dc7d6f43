// Package epochsplit is what `wololo demo --epochs N` (in process) and
// `wololo local run --epochs N` (on the durable cluster, through the
// client) share of a standing job fed in N appends: how the input is cut
// (each table's records into N contiguous runs, the k-th run of every
// table in epoch k: Run, SplitCSV) and the line printed for each version
// (Header, Line, ChangeSize). Both commands cut and print alike, so that
// a user reads the same lines from either.
package epochsplit
