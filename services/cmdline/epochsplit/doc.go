// Package epochsplit is what `wololo demo --epochs N` (in process) and
// `wololo local run --epochs N` (on the durable cluster, through the
// client) share of a standing job fed in N appends: how the input is cut
// (each table's records into N contiguous runs, the k-th run of every
// table in epoch k: Run, RunLast, SplitCSV) and the line printed for each
// version (Header, Line, ChangeSize). Both print alike; the demo cuts
// runs of as many bytes (RunLast over the file's size, cut as it reads
// the file), local run runs of as many records (SplitCSV, which counts
// them first): on files of rows of even widths nearly the same runs.
package epochsplit
