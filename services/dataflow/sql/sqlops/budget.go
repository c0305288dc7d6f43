package sqlops

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/spill"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// Budget is what one job may make one instance of a task hold and make:
// the bounds a client cannot take a process past, whatever its query
// (a self-join on a key of few values makes the square of its input;
// rows that wait for the other side of a join are held until it ends).
// A Task counts against it as it goes, and an operator past a bound
// fails the job with an *OverBudget, at once and in the commit of the
// batch that took it there (stage.ErrFailsJob), so that a restarted
// process does not take the job up again. A zero field is its default
// (DefaultBudget); each is a flag of `wololo worker`.
//
// The budgets are each process's own (its flags), not the job's: a
// process bounds what it holds, whoever asks. They are per job and per
// instance, not per client or per process: what several jobs hold
// together is bounded by how many a process takes (--max-jobs).
type Budget struct {
	// StateBytes is about the most bytes of values the job's operators
	// hold here: the keys of its tables, a join's right rows and the
	// left rows that wait for them, an aggregate's groups, a distinct's
	// or a semi-join's keys (--job-max-state-bytes).
	StateBytes int64
	// JoinRows is the most rows the job's joins make here, in all
	// (--job-max-join-rows).
	JoinRows int64
	// StepBytes is about the most bytes of rows one batch given to the
	// task (or an input's end) may make it send on, all of which the
	// step holds until its commit (--job-max-step-bytes).
	StepBytes int64
	// SpillBytes is the most bytes of spill files the job's operators
	// write here, in all, once their state is past StateBytes
	// (--job-max-spill-bytes).
	SpillBytes int64
	// SpillDir, when set, is the directory under which the job's
	// operators spill state past StateBytes to disk (a directory per task
	// instance: package spill), rather than fail the job; "": they do
	// not, and the job fails past StateBytes.
	SpillDir string
	// Spilled, when set, is told when an operator of the job first
	// spills here: which (where), and the state the task held then (the
	// process logs it). The tasks of an in-process run call it from
	// their goroutines.
	Spilled func(where string, held int64)
	// Pool, when set, is the process's state shared among its jobs
	// (--memory-budget): the job's joins and aggregates here spill past
	// its share (StatePool.Share), or StateBytes if that is less; the
	// job fails past StateBytes still. PoolJob is the job's name in the
	// pool (StatePool.Join's); "": each task instance is a member of its
	// own, named TASK-INDEX (the demo's).
	Pool    *StatePool
	PoolJob string
	// HeldBytes is about the most bytes of values an operator that holds
	// rows until its inputs end holds at the gateway (a sort, a sink: a
	// query's answer); past it the job fails at its end, its answer too
	// large (--max-held-bytes; 0 at the shards: no such operator there).
	HeldBytes int64
}

// The defaults fit a shard of the compose deployment (2 GB of memory)
// with room for the ordinary jobs of the full dataset: at 3.1M matches
// the four default queries hold at most 203 MB of state on a shard of
// two (their key tables and groups), make no join rows (their joins are
// semi-joins), and one batch makes a shard send at most 0.9 MB (logged
// where a job finishes: 'wololo local run' of data/full). A job of
// several times that state spills its joins' and aggregates' largest
// partitions to disk past StateBytes (SpillDir: a worker's or gateway's
// data directory, the demo's temporary one; spilling.go, aggspill.go)
// rather than take more memory: the budget is where spilling starts,
// not a larger default. What cannot spill (key tables, semi-join and
// distinct keys, the gateway's sorts and sinks) still fails the job
// past it.
const (
	DefaultStateBytes = 768 << 20
	DefaultJoinRows   = 64 << 20
	DefaultStepBytes  = 128 << 20
	// DefaultSpillBytes bounds the disk a job's spilled state takes on
	// one process: a few times the default state.
	DefaultSpillBytes = 16 << 30
)

// DefaultBudget is the budget of the zero Budget's fields, but HeldBytes
// (a task's own: StageSpec's).
var DefaultBudget = Budget{StateBytes: DefaultStateBytes, JoinRows: DefaultJoinRows, StepBytes: DefaultStepBytes, SpillBytes: DefaultSpillBytes}

// withDefaults is b with each unset bound at its default.
func (b Budget) withDefaults() Budget {
	if b.StateBytes <= 0 {
		b.StateBytes = DefaultStateBytes
	}
	if b.JoinRows <= 0 {
		b.JoinRows = DefaultJoinRows
	}
	if b.StepBytes <= 0 {
		b.StepBytes = DefaultStepBytes
	}
	if b.SpillBytes <= 0 {
		b.SpillBytes = DefaultSpillBytes
	}
	return b
}

// OverBudget is the error of a job past a bound of its Budget: which, by
// how much, and the flag that sets it. It fails the job (Is
// stage.ErrFailsJob).
type OverBudget struct {
	// What is spent, as the flag's text says it ("bytes of state"), and
	// Verb what the job did with it ("held", "made").
	What, Verb string
	// Flag sets the bound.
	Flag string
	// Limit is the bound, Spent what the job had taken when it failed.
	Limit, Spent int64
	// Where is the operator, and its queries, that went past it.
	Where string
}

func (e *OverBudget) Error() string {
	return fmt.Sprintf("the job is over its budget: %s %s %d %s on one instance, more than the %d a job may (%s of wololo worker)", e.Where, e.Verb, e.Spent, e.What, e.Limit, e.Flag)
}

// Is makes an OverBudget fail the job where it is met.
func (e *OverBudget) Is(target error) bool { return target == stage.ErrFailsJob }

// meter is a task instance's count of its job against its budget. The
// step's count starts again with each batch or end given to the task
// (step); the others are the job's.
type meter struct {
	b         Budget
	joinRows  int64
	stepBytes int64
	// over is the first bound passed, sticky: every operator of the task
	// stops at it (the one passing it may not be the one running).
	over *OverBudget
	// mostState and mostStep are the most state held and the most bytes
	// one step sent, seen so far (Usage).
	mostState, mostStep int64
	// space, when set (Budget.SpillDir), is where the task's operators
	// spill state past the budget (spilling.go); spilled, the most
	// bytes its files held.
	space   *spill.Space
	spilled int64
	// interrupted, when set, says that the job was dropped while a batch
	// is applied (stage.Interrupter): err says so, and the operator in a
	// long loop stops at it.
	interrupted func() bool
	// poolJob and holder are the job's and the task instance's names in
	// the pool (Budget.PoolJob, or TASK-INDEX for both; JOB/TASK-INDEX).
	poolJob, holder string
	// between, when set (a Task's spillPast), runs between two chunks an
	// operator emits in one step (a join's, counted): a join that probes
	// its spilled partitions at its end emits all its rows in one step,
	// and what the operators after it hold grows with them, past the
	// budget, before the step's own check.
	between func() error
	// unchecked is the rows emitted since between last ran: it runs once
	// per betweenRows of them, as a step's check measures every operator.
	unchecked int
}

// betweenRows is how many rows a join emits in one step between two of
// its task's checks (meter.between): a check measures every operator of
// the task, some 230 of the analyst job's, 4.5 CPU-s of its 126 when it
// ran after every chunk.
var betweenRows = 1 << 16

// emitted counts n rows an operator emitted in the middle of a step, and
// runs between once betweenRows have been since it last ran.
func (m *meter) emitted(n int) error {
	if m.between == nil {
		return nil
	}
	if m.unchecked += n; m.unchecked < betweenRows {
		return nil
	}
	m.unchecked = 0
	return m.between()
}

// newMeter is the meter of the task instance name-index of a job held to
// budget b.
func newMeter(b Budget, name string, index int) *meter {
	m := &meter{b: b.withDefaults(), poolJob: b.PoolJob, holder: name + "-" + strconv.Itoa(index)}
	if m.poolJob == "" {
		m.poolJob = m.holder
	} else {
		m.holder = m.poolJob + "/" + m.holder
	}
	return m
}

// ErrInterrupted is what an operator stopped in the middle of a batch
// returns when its job was dropped meanwhile (stage.Interrupter).
var ErrInterrupted = errors.New("the job was dropped while a batch was applied")

// usage is what the job has spent of each budget, as log key-values.
func (m *meter) usage() []any {
	u := []any{"most-state-bytes", m.mostState, "join-rows", m.joinRows, "most-step-bytes", m.mostStep}
	if m.spilled > 0 {
		u = append(u, "most-spilled-bytes", m.spilled)
	}
	return u
}

// step starts the count of what one batch or end makes the task send.
func (m *meter) step() { m.stepBytes = 0 }

// err is the bound passed, if one was, or ErrInterrupted.
func (m *meter) err() error {
	switch {
	case m.over != nil:
		return m.over
	case m.interrupted != nil && m.interrupted():
		return ErrInterrupted
	}
	return nil
}

// pass records the bound passed, the first only.
func (m *meter) pass(e *OverBudget) error {
	if m.over == nil {
		m.over = e
	}
	return m.over
}

// joined counts n rows a join made (where: the join), and says when the
// job's joins have made more than their budget.
func (m *meter) joined(n int, where string) error {
	if m == nil {
		return nil
	}
	if m.joinRows += int64(n); m.joinRows > m.b.JoinRows {
		return m.pass(&OverBudget{What: "rows of joins", Verb: "made", Flag: "--job-max-join-rows", Limit: m.b.JoinRows, Spent: m.joinRows, Where: where})
	}
	return m.err()
}

// sent counts n bytes the task sends in this step (where: the exchange).
func (m *meter) sent(n int, where string) error {
	if m == nil {
		return nil
	}
	m.stepBytes += int64(n)
	m.mostStep = max(m.mostStep, m.stepBytes)
	if m.stepBytes > m.b.StepBytes {
		return m.pass(&OverBudget{What: "bytes to send from one batch", Verb: "was given", Flag: "--job-max-step-bytes", Limit: m.b.StepBytes, Spent: m.stepBytes, Where: where})
	}
	return m.err()
}

// checked is err, or, without one, the meter's error, or the error of
// the state a task's operators hold past the budget: state says how
// much, and the operator that holds the most (nil for none), asked only
// when there is no error yet (it walks the task's operators).
func (m *meter) checked(err error, task string, state func() (int64, *physical.Op)) error {
	if err != nil {
		return err
	}
	if err := m.err(); err != nil {
		return err
	}
	n, top := state()
	m.holds(n)
	if n <= m.b.StateBytes {
		m.mostState = max(m.mostState, n)
		return nil
	}
	where := "the operators of task " + task
	if top != nil {
		where = fmt.Sprintf("the operators of task %s (the most, #%d %s of %s)", task, top.ID, top.Kind, strings.Join(top.Queries, ", "))
	}
	return m.held(n, where)
}

// held checks n bytes of state the task holds (where: the task).
func (m *meter) held(n int64, where string) error {
	if m == nil {
		return nil
	}
	m.mostState = max(m.mostState, n)
	if n > m.b.StateBytes {
		return m.pass(&OverBudget{What: "bytes of state", Verb: "held", Flag: "--job-max-state-bytes", Limit: m.b.StateBytes, Spent: n, Where: where})
	}
	return m.err()
}

// spillAt is the state past which the task's operators spill: StateBytes,
// or the job's share of the process's pool if that is less. What cannot
// spill (key tables, semi-join and distinct keys, a standing job's
// state) still fails the job past StateBytes only.
func (m *meter) spillAt() int64 {
	if m.b.Pool == nil {
		return m.b.StateBytes
	}
	return min(m.b.StateBytes, m.b.Pool.Share(m.holder))
}

// holds tells the pool, if any, the state the task holds now (n bytes),
// as each batch's check measures it.
func (m *meter) holds(n int64) {
	if m.b.Pool != nil {
		m.b.Pool.Hold(m.poolJob, m.holder, n)
	}
}
