package bench

import (
	"fmt"
	"strings"
	"time"
)

// renderSQLTargets writes the row of the SQL target, when demo mode's
// job of the example queries ran: that job against the four default
// queries, on median CPU time.
func renderSQLTargets(p func(string, ...any), r Report) {
	if len(r.Compared) == 0 {
		return
	}
	if st, ok := r.ComparedOf(ModeDemoStanding); ok {
		text, met := "not measured", false
		if ratio, ran := r.CPURatio(ModeDemoStanding, ModeDemo); ran {
			text = fmt.Sprintf("%.2fx (%s against %s of CPU)", ratio, secs(r.MedianOf(ModeDemoStanding).CPU), secs(r.MedianOf(ModeDemo).CPU))
			met = ratio <= TargetStandingVsBatch
		}
		p("| The dataset as %d appends to a standing job of the four default queries (`%s`: every version computed) <= %gx the CPU of one batch job of it (`%s`, medians) | %s | %s |\n",
			StandingEpochs, ModeDemoStanding, TargetStandingVsBatch, ModeDemo, text, metIf(st.Run.Wall > 0, met))
		p("| The standing job's process <= 512 MiB | %s | %s |\n", mib(st.Run.PeakRSS), metIf(st.Run.Wall > 0, st.Run.PeakRSS <= 512<<20))
	}
	if ap, ok := r.ComparedOf(ModeDemoAppend); ok {
		text, met := "not measured", false
		if ratio, ran := r.CPURatio(ModeDemoAppend, ModeDemo); ran {
			text = fmt.Sprintf("%.1f%% (%s against %s of CPU)", 100*ratio, secs(r.MedianOf(ModeDemoAppend).CPU), secs(r.MedianOf(ModeDemo).CPU))
			met = ratio <= TargetAppendVsBatch
		}
		p("| Appending %d%% of the dataset to a standing job of the rest (`%s`: the last epoch of `wololo demo --epochs 2 --last-epoch-percent %d`) <= %g%% of the CPU of one batch job of it all (`%s`, medians) | %s | %s |\n",
			AppendPercent, ModeDemoAppend, AppendPercent, 100*TargetAppendVsBatch, ModeDemo, text, metIf(ap.Run.Wall > 0, met))
	}
	if st := r.MedianOf(ModeLocalStanding); st.Runs > 0 {
		p("| With `--epoch-every %s` on the upload of a standing job (`%s`), its first version out within %s of the upload's start (median) | %s | %s |\n",
			StandingEpochEvery, ModeLocalStanding, TargetFirstVersion, secs(st.FirstVersion), metIf(true, st.FirstVersion <= TargetFirstVersion))
		text, met := "not measured", false
		if batch := r.MedianOf(ModeLocal); batch.Runs > 0 {
			ratio := float64(st.Wall) / float64(batch.Wall)
			text = fmt.Sprintf("%.2fx (%s against %s)", ratio, secs(st.Wall), secs(batch.Wall))
			met = ratio <= TargetEpochEveryVsBatch
		}
		p("| ... and its total time (upload, versions, close, results) <= %gx the batch job's (`%s`, median wall times) | %s | %s |\n",
			TargetEpochEveryVsBatch, ModeLocal, text, metIf(text != "not measured", met))
		text, met = "not measured", false
		if batch := r.MedianOf(ModeLocal); batch.Runs > 0 && st.AddedQueries > 0 {
			ratio := float64(st.AddedQueries) / float64(batch.Wall)
			text = fmt.Sprintf("%.2fx (%s against %s)", ratio, secs(st.AddedQueries), secs(batch.Wall))
			met = ratio <= TargetAddedVsBatch
		}
		p("| The four default queries added to that open job (`client query --job ID --query`, before its close) answer within %gx the time of their batch job over the same rows (`%s`, median wall times) | %s | %s |\n",
			TargetAddedVsBatch, ModeLocal, text, metIf(text != "not measured", met))
	}
	renderAnalystTargets(p, r)
	if _, ok := r.ComparedOf(ModeDemoExamples); !ok {
		return
	}
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
}

// renderCompared writes the SQL plan of the four default queries (demo
// and local mode's defaults) beside demo mode's job of example queries,
// when it ran.
func renderCompared(p func(string, ...any), r Report) {
	if len(r.Compared) == 0 {
		return
	}
	rows := r.Dataset.Rows()
	p("## SQL plans\n\n")
	p("`wololo demo` runs the four default queries (`queries/q1.sql` .. `q4.sql`, compiled into the binary) as SQL, with the SQL engine's in-process runner (`sqlops.RunFeeds`: every table streamed in as the plan runs, the columns its scans read, parsed on every core a few pieces ahead, and every instance of the gateway and shard tasks of the physical plan in this process, rows between them as ColumnBatches handed over, not marshalled); `--query NAME=FILE.sql ...` runs a job of other queries the same way (the example queries). ")
	p("`wololo local run` runs the same SQL plan in the durable local cluster (the gateway fills in the four default queries; each process its task's part of the job's plan). ")
	p("Each row is the mode's median over its runs; CPU per row is the median CPU over the %s input rows of both files.\n\n", count(rows))
	p("| Mode | Queries | Runs | Median wall time | Median CPU | CPU per input row | Outputs |\n|---|---|---:|---:|---:|---:|---|\n")
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
		case ModeDuckDBAnalyst, ModeDuckDBAnalystBounded, ModeDemoAnalyst, ModeLocalAnalyst:
			c, ok := r.ComparedOf(mode)
			if !ok {
				continue
			}
			queries, out = fmt.Sprintf("%s (queries/analyst)", queryList(c.Queries)), outputs(mode, c.Run)
		case ModeDemoExamples:
			c, ok := r.ComparedOf(mode)
			if !ok {
				continue
			}
			queries, out = queryList(c.Queries), outputs(mode, c.Run)
		case ModeDemoStanding:
			c, ok := r.ComparedOf(mode)
			if !ok {
				continue
			}
			queries, out = fmt.Sprintf("q1, q2, q3, q4: the defaults, a standing job of %d appends", StandingEpochs), equal(c.Run)
		case ModeDemoAppend:
			c, ok := r.ComparedOf(mode)
			if !ok {
				continue
			}
			queries, out = fmt.Sprintf("q1, q2, q3, q4: the defaults, the last %d%% of the rows appended (its epoch's wall and CPU alone)", AppendPercent), equal(c.Run)
		case ModeLocalStanding:
			all := true
			for _, s := range r.SamplesOf(mode) {
				all = all && s.Equal
			}
			queries = fmt.Sprintf("q1, q2, q3, q4: the defaults, a standing job of one upload cut every %s; first version out after %s (median)", StandingEpochEvery, secs(m.FirstVersion))
			out = equal(ProcessRun{Wall: m.Wall, Equal: all})
		default:
			continue
		}
		p("| %s | %s | %d | %s | %s | %s | %s |\n", modeLabel(mode), queries, m.Runs, secs(m.Wall), secs(m.CPU), perRow(m.CPU, rows), out)
	}
	p("\n")
	if ratio, ok := r.CPURatio(ModeDemoExamples, ModeDemo); ok {
		ex, _ := r.ComparedOf(ModeDemoExamples)
		p("The job of %d example queries costs %.2fx the CPU of the four default queries through SQL: the tables are scanned once for the job, and a table shuffled by a key is one channel whatever the number of queries reading it (docs/sql.md, Physical plans). ", len(ex.Queries), ratio)
	}
	if ratio, ok := r.CPURatio(ModeDemoStanding, ModeDemo); ok {
		p("Fed in %d appends as a standing job (`wololo demo --epochs %d`), the four default queries cost %.2fx the CPU of one batch job of them: each epoch's version of every answer is computed and written whole, and its change from the one before (docs/standing.md); its final answers are the batch job's. ", StandingEpochs, StandingEpochs, ratio)
	}
	if ratio, ok := r.CPURatio(ModeDemoAppend, ModeDemo); ok {
		p("Appending the last %d%% of the rows to a standing job of the rest (`wololo demo --epochs 2 --last-epoch-percent %d`, the cost its last version line prints, its share of reading the input included) costs %.1f%% of the CPU of one batch job of all the rows; its work is that of its rows and of the answers' changes, and writing each version whole. ", AppendPercent, AppendPercent, 100*ratio)
	}
	p("The example queries are `queries/examples/*.sql` (their README lists them); this bench only checks that each wrote its file: `make sql-diff-test` (tools/duckdb) holds their answers against DuckDB's on a generated dataset.\n\n")
	renderAnalystOutputs(p, r)
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
