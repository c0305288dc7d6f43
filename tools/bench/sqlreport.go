package bench

import (
	"fmt"
	"strings"
	"time"
)

// renderSQLTargets writes the rows of the SQL targets, when a mode
// measured beside the defaults ran: the four default queries as SQL (the
// default) against the hand-written graph (--builtin-graph) in demo mode
// and, when it ran, in durable local mode, and a job of the example
// queries against the four, on median CPU time.
func renderSQLTargets(p func(string, ...any), r Report) {
	if len(r.Compared) == 0 {
		return
	}
	// The four default queries through SQL against the hand-written
	// graph in the same place.
	vsGraph := func(place, sql, graph, there string) {
		text, met := "not measured", false
		ratio, ran := r.CPURatio(sql, graph)
		if ran {
			sqlCPU, graphCPU, rows := r.MedianOf(sql).CPU, r.MedianOf(graph).CPU, r.Dataset.Rows()
			text = fmt.Sprintf("%.2fx (%s against %s of CPU, %s against %s per input row)", ratio,
				secs(sqlCPU), secs(graphCPU), perRow(sqlCPU, rows), perRow(graphCPU, rows))
			met = ratio <= TargetSQLVsGraph
		}
		p("| The four default queries through SQL in %s (`%s`) <= %gx the CPU per row of the hand-written graph%s (`%s`, medians) | %s | %s |\n",
			place, sql, TargetSQLVsGraph, there, graph, text, metIf(ran, met))
	}
	vsGraph("demo mode", ModeDemo, ModeDemoGraph, "")
	job := "the example user queries"
	if ex, ok := r.ComparedOf(ModeDemoExamples); ok {
		job = fmt.Sprintf("%d user queries", len(ex.Queries))
	}
	text, met := "not measured", false
	ratio, ran := r.CPURatio(ModeDemoExamples, ModeDemo)
	if ran {
		text = fmt.Sprintf("%.2fx (%s against %s of CPU)", ratio, secs(r.MedianOf(ModeDemoExamples).CPU), secs(r.MedianOf(ModeDemo).CPU))
		met = ratio <= TargetExamplesVsSQL
	}
	p("| A job of %s in demo mode (`%s`) <= %gx the CPU of the four default queries through SQL (`%s`, medians) | %s | %s |\n",
		job, ModeDemoExamples, TargetExamplesVsSQL, ModeDemo, text, metIf(ran, met))
	if _, ok := r.ComparedOf(ModeLocalGraph); ok {
		vsGraph("durable local mode", ModeLocal, ModeLocalGraph, " there")
	}
}

// graphBase is the mode a mode's CPU is compared with in the table of
// renderCompared: the hand-written graph in the same place (demo or
// local).
func graphBase(mode string) string {
	if mode == ModeLocal || mode == ModeLocalGraph {
		return ModeLocalGraph
	}
	return ModeDemoGraph
}

// renderCompared writes the SQL plan of the four default queries (demo
// and local mode's defaults) beside the hand-written graph, and demo
// mode's job of example queries, when any of the modes measured beside
// the defaults ran.
func renderCompared(p func(string, ...any), r Report) {
	if len(r.Compared) == 0 {
		return
	}
	rows := r.Dataset.Rows()
	p("## SQL plans and the hand-written graph\n\n")
	p("`wololo demo` runs the four default queries (`queries/q1.sql` .. `q4.sql`, compiled into the binary) as SQL, with the SQL engine's in-process runner (`sqlops.RunFeeds`: every table streamed in as the plan runs, the columns its scans read, parsed on every core a few pieces ahead, and every instance of the gateway and shard tasks of the physical plan in this process, rows between them as ColumnBatches handed over, not marshalled); `--query NAME=FILE.sql ...` runs a job of other queries the same way (the example queries); `--builtin-graph` runs the four default queries on the hand-written graph instead (`%s`). ", ModeDemoGraph)
	p("`wololo local run` runs the same SQL plan in the durable local cluster (the gateway fills in the four default queries; each process its task's part of the job's plan); with `--builtin-graph`, the hand-written graph (`%s`). ", ModeLocalGraph)
	p("Each row is the mode's median over its runs; CPU per row is the median CPU over the %s input rows of both files, and the last but one column is the median CPU against the hand-written graph's in the same mode (demo or local).\n\n", count(rows))
	p("| Mode | Queries | Runs | Median wall time | Median CPU | CPU per input row | CPU vs the hand-written graph | Outputs |\n|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, mode := range modeOrder {
		m := r.MedianOf(mode)
		if m.Runs == 0 {
			continue
		}
		var queries, out string
		switch mode {
		case ModeDemo:
			queries, out = "q1, q2, q3, q4: the defaults, SQL", equal(r.Demo)
		case ModeLocal:
			queries, out = "q1, q2, q3, q4: the defaults, SQL", equal(ProcessRun{Wall: r.Local.Wall, Equal: r.Local.Equal})
		case ModeDemoGraph, ModeLocalGraph, ModeDemoExamples:
			c, ok := r.ComparedOf(mode)
			if !ok {
				continue
			}
			queries, out = queryList(c.Queries), outputs(mode, c.Run)
			if len(c.Queries) == 0 {
				queries = "the four, hand-written"
			}
		default:
			continue
		}
		vs := "—"
		if ratio, ok := r.CPURatio(mode, graphBase(mode)); ok {
			vs = fmt.Sprintf("%.2fx", ratio)
		}
		p("| %s | %s | %d | %s | %s | %s | %s | %s |\n", modeLabel(mode), queries, m.Runs, secs(m.Wall), secs(m.CPU), perRow(m.CPU, rows), vs, out)
	}
	p("\n")
	if ratio, ok := r.CPURatio(ModeDemoExamples, ModeDemo); ok {
		ex, _ := r.ComparedOf(ModeDemoExamples)
		p("The job of %d example queries costs %.2fx the CPU of the four default queries through SQL: the tables are scanned once for the job, and a table shuffled by a key is one channel whatever the number of queries reading it (docs/sql.md, Physical plans). ", len(ex.Queries), ratio)
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
