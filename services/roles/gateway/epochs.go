package gateway

import (
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// What the gateway's standing jobs (standing.go) call of the epoch
// runtime that maintains their answers (docs/standing.md, "In the
// cluster": sqlops' epoch tasks, Source.EndEpoch, Plan.Standing,
// stage.Config.OnRecords): every such call goes through an EpochRuntime,
// so that the lifecycle's tests (standing_test.go) run it against a fake
// that counts the calls, without a cluster.

// EpochRuntime is what a standing job needs of the runtime.
type EpochRuntime struct {
	// MakeStanding makes a job's plan a standing one (p.Standing = true,
	// encoded with the plan) and refuses, with an error naming the
	// construct, one the runtime cannot maintain
	// (sqlops.CheckStanding). Called at CreateJob, after sqljob.Check;
	// its error refuses the job with InvalidArgument.
	MakeStanding func(p *physical.Plan) error
	// EndEpoch is sqlops.(*Source).EndEpoch: what src holds is flushed
	// and an epoch marker sent on each of its output streams to every
	// receiver. The gateway calls it on every Source of a job (one per
	// table, a table with no rows in the epoch too) in the commit step
	// that commits the epoch's last rows.
	EndEpoch func(src *sqlops.Source, out stage.Emitter) error
	// HookRecords sets cfg.OnRecords = f: f is called after every commit
	// of a job that wrote records (the versions: version/K/NAME.csv and
	// change/K/NAME.csv), not only its final one.
	HookRecords func(cfg *stage.Config, f func(job string, records map[string][]byte))
}

// DefaultEpochRuntime is the runtime a gateway uses when its Config
// gives none: sqlops' epoch tasks.
var DefaultEpochRuntime = EpochRuntime{
	MakeStanding: func(p *physical.Plan) error {
		p.Standing = true
		return sqlops.CheckStanding(p)
	},
	EndEpoch:    (*sqlops.Source).EndEpoch,
	HookRecords: func(cfg *stage.Config, f func(string, map[string][]byte)) { cfg.OnRecords = f },
}

// HookRecords registers the gateway's Records as the stage runtime's
// OnRecords (through the seam): the node calls it where it sets OnFinish.
func (g *Gateway) HookRecords(cfg *stage.Config) { g.epochs.HookRecords(cfg, g.Records) }
