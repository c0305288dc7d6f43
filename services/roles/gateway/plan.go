package gateway

import (
	"fmt"
	"maps"

	"github.com/wololo/wololo/services/dataflow/ingest"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// The upload of a job. A job carries its physical plan (job.plan); the
// upload of a file parses its records as text (ingest's Text) and hands
// them to the plan's Source of the file's table, whose scan and exchanges
// route each row onto the plan's channels; the upload's commits each hold
// every row up to its offset (planUpload.flush before each). What
// the gateway does with the rows that come back (the final aggregates,
// sorts and sinks) is its stage runtime's, from the same plan
// (sqlops.StageSpec, Config.PlanOf).

// planUpload is one upload call's Source and the Outputs it routes into.
type planUpload struct {
	src *sqlops.Source
	out *stage.Outputs
	err error // the first error of a flush from the ingest's hook
	// missing is the file's count of values that read as NULL by column
	// before this call (a resumed upload's report), to which the
	// Source's own are added.
	missing map[string]int64
}

// newPlanUpload makes the Source of a job's plan for the table of one of
// its inputs (a file or a table) of epoch (a standing job's, from 1; a
// batch job's 0), and hooks it to the ingest: each well-formed record's
// fields go to it, applied a batch at a time.
func (g *Gateway) newPlanUpload(j *job, fs *fileState, epoch int64, in *ingest.Ingest) (*planUpload, error) {
	p, err := physical.Decode(j.plan)
	if err != nil {
		return nil, fmt.Errorf("job %s: its plan: %w", j.id, err)
	}
	src, err := sqlops.NewSource(p, fs.table, fs.names)
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", j.id, err)
	}
	if epoch > 0 {
		// Its rows are those of the epoch after the last one ended;
		// under j.epochMu, so that a cut under way (cuts.go) is
		// committed, and counted, first.
		j.epochMu.Lock()
		j.mu.Lock()
		ended := j.standing.ended
		j.mu.Unlock()
		j.epochMu.Unlock()
		if err := src.ResumeEpochs(ended); err != nil {
			return nil, fmt.Errorf("job %s: %w", j.id, err)
		}
	}
	u := &planUpload{src: src, out: stage.NewOutputs(g.self, j.id, src.Outputs()), missing: maps.Clone(in.Report.Missing)}
	in.Text, in.TextWidth = u.row, src.Width()
	return u, nil
}

func (u *planUpload) row(fields [][]byte) {
	u.src.Row(fields)
	if u.src.Full() && u.err == nil {
		u.err = u.src.Flush(u.out)
	}
}

// flush applies the rows held, so that the next commit holds every row
// the ingest has parsed, and brings the report's counts of NULLs up to
// date.
func (u *planUpload) flush(in *ingest.Ingest) error {
	if u.err == nil {
		u.err = u.src.Flush(u.out)
	}
	u.count(in)
	return u.err
}

// end flushes and ends the table: every route its rows go on ends.
func (u *planUpload) end(in *ingest.Ingest) error {
	if u.err == nil {
		u.err = u.src.End(u.out)
	}
	u.count(in)
	return u.err
}

func (u *planUpload) count(in *ingest.Ingest) {
	for col, n := range u.src.Stats() {
		in.Report.Missing[col] = u.missing[col] + n
	}
}
