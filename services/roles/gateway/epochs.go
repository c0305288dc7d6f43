package gateway

import (
	"errors"

	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// The seam between the gateway's standing jobs (standing.go) and the
// epoch runtime that maintains their answers (docs/standing.md, "In the
// cluster": the epoch task of sqlops, Source.EndEpoch, Plan.Standing,
// stage.Config.OnRecords). Every call the gateway makes into that runtime
// goes through an EpochRuntime, and nowhere else: the gateway's half of
// the contract was built before the runtime's, and the real calls are put
// in here, in NoEpochRuntime's place (DefaultEpochRuntime), in one place.

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

// ErrNoEpochRuntime is why a standing job is refused by a gateway built
// without the epoch runtime.
var ErrNoEpochRuntime = errors.New("standing jobs are not available: this build has no epoch runtime (the incremental engine's tasks); submit the job without --standing")

// NoEpochRuntime is a runtime without epochs: a standing job is refused
// at CreateJob (MakeStanding), and nothing else is ever called.
var NoEpochRuntime = EpochRuntime{
	MakeStanding: func(*physical.Plan) error { return ErrNoEpochRuntime },
	EndEpoch:     func(*sqlops.Source, stage.Emitter) error { return ErrNoEpochRuntime },
	HookRecords:  func(*stage.Config, func(string, map[string][]byte)) {},
}

// DefaultEpochRuntime is the runtime a gateway uses when its Config gives
// none. The integrator sets it to the real calls:
//
//	MakeStanding: func(p *physical.Plan) error { p.Standing = true; return sqlops.CheckStanding(p) },
//	EndEpoch:     (*sqlops.Source).EndEpoch,
//	HookRecords:  func(cfg *stage.Config, f func(string, map[string][]byte)) { cfg.OnRecords = f },
var DefaultEpochRuntime = NoEpochRuntime

// HookRecords registers the gateway's Records as the stage runtime's
// OnRecords (through the seam): the node calls it where it sets OnFinish.
func (g *Gateway) HookRecords(cfg *stage.Config) { g.epochs.HookRecords(cfg, g.Records) }
