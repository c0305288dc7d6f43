package gateway

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// A job's SQL queries (CreateJobRequest.queries): a job made of them runs
// their physical plan instead of the built-in graph, and its results are
// NAME.csv of each. The gateway checks their names and sizes against its
// limits, compiles them against the job's two headers (the tables matches
// and match_players) and plans them on the deployment's tasks before the
// job exists, all by sqljob.Check, the one validation `wololo explain` and
// `wololo demo` share; the plan is recorded with the job
// (JobRecord.plan) and carried to every process by IntroduceJob.

// The query quotas' defaults (sqljob's): a job of 32 queries of 2 KiB
// each is far more than the four default ones (2 KiB together).
const (
	DefaultMaxQueries    = sqljob.DefaultMaxQueries
	DefaultMaxQueryBytes = sqljob.DefaultMaxQueryBytes
)

// defaultNames are the names of the default queries' results, q1..q4,
// those of a job of the hand-written graph an older version wrote.
var defaultNames = queries.Names

// defaultQueries are the four queries of docs/queries.md as SQL (the
// files of queries/), those of a job that gives none.
var defaultQueries = func() []*wololov1.Query {
	out := make([]*wololov1.Query, len(queries.Names))
	for i, name := range queries.Names {
		text, ok := queries.Text(name)
		if !ok {
			panic("queries: no " + name + ".sql")
		}
		out[i] = &wololov1.Query{Name: name, Sql: text}
	}
	return out
}()

// defaultPrint is queriesPrint(defaultQueries): a job of the default
// queries, whether it ran them as SQL or (written by an older version) on
// the hand-written graph, is the same job to a client that resumes it
// without queries.
var defaultPrint = textsPrint(defaultQueries)

// jobQueries are the queries a CreateJob asks for: its own, else the
// default ones; and whether they are the client's (which the quotas
// bound).
func jobQueries(req *wololov1.CreateJobRequest) (qs []*wololov1.Query, own bool) {
	if len(req.GetQueries()) > 0 {
		return req.GetQueries(), true
	}
	return defaultQueries, false
}

// queriesOf are a request's queries, as sqljob takes them.
func queriesOf(qs []*wololov1.Query) []sqljob.Query {
	out := make([]sqljob.Query, len(qs))
	for i, q := range qs {
		out[i] = sqljob.Query{Name: q.GetName(), Text: q.GetSql()}
	}
	return out
}

// jobPlan is a job's queries planned: what the job records and its
// client is told.
type jobPlan struct {
	queries []*wololov1.Query
	plan    []byte         // physical.Encode of the plan
	decoded *physical.Plan // plan read back (checkPlanRuns), for the job made of it
	explain string         // sqljob.Job.Explain
}

// planQueries checks a CreateJob's tables and queries and plans them on
// shape: sqljob.Check on its inputs' headers' columns (the two files'
// tables and its own), its queries, whether they are the client's own
// (which the limits bound) and the limits; then checkPlanRuns. A job
// Check refuses is InvalidArgument with
// Check's message (a query the engine refuses names the query, the
// construct and its line:column; a column an input lacks names the input
// and the query), or ResourceExhausted over a limit; a plan that breaks
// the planner's invariants is an internal error.
func (l Limits) planQueries(queries []*wololov1.Query, own bool, inputs []inputHeader, shape physical.Shape, shapeErr error) (*jobPlan, error) {
	spec := sqljob.Spec{
		Matches: inputs[schema.Matches].h.GetColumns(), Players: inputs[schema.Players].h.GetColumns(),
		NoFiles: absent(inputs[schema.Matches].h),
		Queries: queriesOf(queries), Own: own,
	}
	for _, in := range inputs[len(schema.Files):] {
		t := sqljob.Table{Name: in.in.table}
		if in.h != nil {
			t.Columns = in.h.GetColumns()
			if t.Columns == nil {
				t.Columns = []string{}
			}
		}
		spec.Tables = append(spec.Tables, t)
	}
	if shapeErr != nil {
		return nil, fmt.Errorf("the deployment's tasks for a plan: %w", shapeErr)
	}
	job, err := sqljob.Check(spec, l.jobLimits(), shape)
	switch {
	case errors.Is(err, sqljob.ErrPlanner):
		return nil, err
	case errors.Is(err, sqljob.ErrLimit):
		return nil, kindError{ErrFull, err}
	case err != nil:
		return nil, kindError{ErrInvalid, err}
	}
	b, err := job.Encode()
	if err != nil {
		return nil, err
	}
	decoded, err := checkPlanRuns(b)
	if err != nil {
		return nil, err
	}
	return &jobPlan{queries: queries, plan: b, decoded: decoded, explain: job.Explain()}, nil
}

// standing makes the plan a standing job's (make: EpochRuntime.
// MakeStanding), refusing with InvalidArgument one the runtime cannot
// maintain, and encodes it again (the plan a standing job records says
// so: every process builds its epoch tasks from it).
func (jp *jobPlan) standing(make func(*physical.Plan) error) error {
	if err := make(jp.decoded); err != nil {
		return kindError{ErrInvalid, fmt.Errorf("a standing job: %w", err)}
	}
	b, err := physical.Encode(jp.decoded)
	if err != nil {
		return err
	}
	decoded, err := checkPlanRuns(b)
	if err != nil {
		return err
	}
	jp.plan, jp.decoded = b, decoded
	return nil
}

// kindOfJob says whether a job is standing, for a message.
func kindOfJob(standing bool) string {
	if standing {
		return "standing (--standing)"
	}
	return "a batch job (without --standing)"
}

// jobLimits are the limits sqljob.Check holds a job to.
func (l Limits) jobLimits() sqljob.Limits {
	return sqljob.Limits{MaxQueries: l.MaxQueries, MaxQueryBytes: l.MaxQueryBytes, MaxTables: l.MaxTables}
}

// checkPlanRuns refuses, as InvalidArgument, an encoded plan that a
// process of the deployment would refuse when the job is introduced to it: one
// that does not decode (a plan nested deeper than the decoder reads), one
// a task cannot make its part of (sqlops.DecodeSpec: the plan's
// invariants, then sqlops.StageSpec of each task). Checked before the job
// is recorded, so that a job the graph will refuse is refused at
// CreateJob, with nothing stored, not at its first upload. A channel's
// stream name is no longer a reason: it is numbered and bounded
// (sqlops.ChannelStream), whatever the queries' keys. It returns the plan
// read back, which the job is made of (newJob), so that CreateJob decodes
// it once.
func checkPlanRuns(plan []byte) (*physical.Plan, error) {
	p, err := physical.Decode(plan)
	if err != nil {
		return nil, errorf(ErrInvalid, "the queries' plan cannot be read back (%v); simplify the queries", err)
	}
	if err := physical.Check(p); err != nil {
		return nil, errorf(ErrInvalid, "the queries' plan: %v", err)
	}
	for _, task := range []string{p.Gateway.Name, p.Shard.Name} {
		if _, err := sqlops.StageSpec(p, task, sqlops.Budget{}); err != nil {
			return nil, errorf(ErrInvalid, "the queries' plan cannot run on task %s: %v", task, err)
		}
	}
	return p, nil
}

// queriesPrint is a fingerprint of a job's queries, names and texts in
// order, by which a resume with other queries is told apart; the zero
// value for the default queries, or none (a job of the hand-written graph
// an older version wrote).
func queriesPrint(queries []*wololov1.Query) [sha256.Size]byte {
	if p := textsPrint(queries); len(queries) > 0 && p != defaultPrint {
		return p
	}
	return [sha256.Size]byte{}
}

// textsPrint is the SHA-256 of the queries' names and texts in order,
// each length-prefixed.
func textsPrint(queries []*wololov1.Query) [sha256.Size]byte {
	h := sha256.New()
	for _, q := range queries {
		for _, s := range []string{q.GetName(), q.GetSql()} {
			h.Write(binary.AppendUvarint(nil, uint64(len(s))))
			h.Write([]byte(s))
		}
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// sameQueries refuses a resume with other queries than the job was
// created with (or queries of its own for a job of the default ones, or
// none for a job of the client's own), as sameFiles refuses other files.
func (j *job) sameQueries(queries []*wololov1.Query) error {
	if queriesPrint(queries) == j.queriesPrint {
		return nil
	}
	return errorf(ErrConflict, "job %q was created with other queries (%s then); it cannot continue with these: use another --job, or the queries it was made from", j.name, strings.Join(j.queries, ", "))
}

// resultFiles are the job's result files, NAME.csv of each of its queries
// in order.
func (j *job) resultFiles() []string { return schema.ResultFiles(j.queries) }

// planOf is the physical plan of a job (by its internal id) as its record
// holds it (physical.Encode), nil for a job of the hand-written graph an
// older version wrote; ok reports whether
// the job is known. The stage runtime runs a known job's plan.
func (js *jobs) planOf(id string) (plan []byte, ok bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.byID[id]
	if !ok {
		return nil, false
	}
	return j.plan, true
}
