package bench

import (
	"fmt"
	"strings"
	"time"
)

// renderSQLTargets writes the rows of the SQL targets, when a SQL job ran:
// the four default queries as SQL against the hand-written graph, and a
// job of the example queries against the four, on median CPU time.
func renderSQLTargets(p func(string, ...any), r Report) {
	if len(r.SQL) == 0 {
		return
	}
	sqlMed, graphMed := r.MedianOf(ModeDemoSQL), r.MedianOf(ModeDemo)
	text, met := "not measured", false
	ratio, ran := r.CPURatio(ModeDemoSQL, ModeDemo)
	if ran {
		text = fmt.Sprintf("%.2fx (%s against %s of CPU, %s against %s per input row)", ratio,
			secs(sqlMed.CPU), secs(graphMed.CPU), perRow(sqlMed.CPU, r.Dataset.Rows()), perRow(graphMed.CPU, r.Dataset.Rows()))
		met = ratio <= TargetSQLVsGraph
	}
	p("| The four default queries as SQL in demo mode <= %gx the CPU per row of the hand-written graph (medians) | %s | %s |\n", TargetSQLVsGraph, text, metIf(ran, met))
	n := 0
	if ex, ok := r.SQLOf(ModeDemoExamples); ok {
		n = len(ex.Queries)
	}
	text, met = "not measured", false
	ratio, ran = r.CPURatio(ModeDemoExamples, ModeDemoSQL)
	if ran {
		text = fmt.Sprintf("%.2fx (%s against %s of CPU)", ratio, secs(r.MedianOf(ModeDemoExamples).CPU), secs(sqlMed.CPU))
		met = ratio <= TargetExamplesVsSQL
	}
	p("| A job of %d user queries in demo mode <= %gx the CPU of the four default ones as SQL (medians) | %s | %s |\n", n, TargetExamplesVsSQL, text, metIf(ran, met))
	if _, ok := r.SQLOf(ModeLocalSQL); ok {
		text, met = "not measured", false
		ratio, ran = r.CPURatio(ModeLocalSQL, ModeLocal)
		if ran {
			text = fmt.Sprintf("%.2fx (%s against %s of CPU)", ratio, secs(r.MedianOf(ModeLocalSQL).CPU), secs(r.MedianOf(ModeLocal).CPU))
			met = ratio <= TargetSQLVsGraph
		}
		p("| The four default queries as SQL in durable local mode <= %gx the CPU of the hand-written graph there (medians) | %s | %s |\n", TargetSQLVsGraph, text, metIf(ran, met))
	}
}

// sqlBase is the mode a SQL job's mode is compared with: the
// hand-written graph in the same mode.
func sqlBase(mode string) string {
	if mode == ModeLocalSQL {
		return ModeLocal
	}
	return ModeDemo
}

// renderSQL writes demo mode's SQL jobs beside the hand-written graph.
func renderSQL(p func(string, ...any), r Report) {
	if len(r.SQL) == 0 {
		return
	}
	rows := r.Dataset.Rows()
	p("## SQL plans\n\n")
	p("`wololo demo --query NAME=FILE.sql ...` runs a job of SQL queries with the SQL engine's in-process runner (`sqlops.RunFeeds`: every table streamed in as the plan runs, the columns its scans read, parsed on every core a few pieces ahead, and every instance of the gateway and shard tasks of the physical plan in this process, rows between them as ColumnBatches handed over, not marshalled); `wololo demo` without `--query` runs the hand-written graph. `wololo local run --query ...` runs the same SQL job in the durable local cluster (each process its task's part of the job's plan); without `--query`, the hand-written graph. ")
	p("Each row is the mode's median over its runs; CPU per row is the median CPU over the %s input rows of both files, and the last but one column is the median CPU against the hand-written graph's in the same mode (demo or local).\n\n", count(rows))
	p("| Mode | Queries | Runs | Median wall time | Median CPU | CPU per input row | CPU vs the hand-written graph | Outputs |\n|---|---|---:|---:|---:|---:|---:|---|\n")
	if m := r.MedianOf(ModeDemo); m.Runs > 0 {
		p("| %s | the four, hand-written | %d | %s | %s | %s | 1.00x | %s |\n", modeLabel(ModeDemo), m.Runs, secs(m.Wall), secs(m.CPU), perRow(m.CPU, rows), equal(r.Demo))
	}
	for _, sr := range r.SQL {
		m := r.MedianOf(sr.Mode)
		vs := "—"
		if ratio, ok := r.CPURatio(sr.Mode, sqlBase(sr.Mode)); ok {
			vs = fmt.Sprintf("%.2fx", ratio)
		}
		p("| %s | %s | %d | %s | %s | %s | %s | %s |\n", modeLabel(sr.Mode), queryList(sr.Queries), m.Runs, secs(m.Wall), secs(m.CPU), perRow(m.CPU, rows), vs, outputs(sr.Mode, sr.Run))
	}
	p("\n")
	if ratio, ok := r.CPURatio(ModeDemoExamples, ModeDemoSQL); ok {
		ex, _ := r.SQLOf(ModeDemoExamples)
		p("The job of %d example queries costs %.2fx the CPU of the four default ones as SQL: the tables are scanned once for the job, and a table shuffled by a key is one channel whatever the number of queries reading it (docs/sql.md, Physical plans). ", len(ex.Queries), ratio)
	}
	p("The example queries are `queries/examples/*.sql` (their README lists them); this bench only checks that each wrote its file: `make sql-diff-test` (tools/duckdb) holds their answers against DuckDB's on a generated dataset.\n\n")
}

// perRow is cpu over rows, in nanoseconds a row.
func perRow(cpu time.Duration, rows int64) string {
	if cpu <= 0 || rows <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f ns", float64(cpu.Nanoseconds())/float64(rows))
}

// queryList names a job's queries, the first few of a long list.
func queryList(names []string) string {
	const shown = 4
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%d: %s, ...", len(names), strings.Join(names[:shown], ", "))
}
