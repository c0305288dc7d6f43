package sqlops

import "sync"

// StatePool is the memory a process gives the state of the jobs it runs
// (--memory-budget less a reserve: MemoryBudget), shared among them:
// each job's instance here may hold its even share before its joins and
// aggregates spill (Budget.Pool), a share that shrinks as jobs start
// here and grows back as they end, and more while the others hold less
// than theirs: what the pool's other holders leave of its total
// (Share). A job counts from when its plan is taken up (Join) until it
// finishes, fails or is dropped (Leave), whichever comes first; joining
// or leaving twice counts once. A nil pool (a process without a budget)
// counts nothing: Join and Leave do nothing on it.
//
// Why borrow: an even share is what every member may always hold, but
// the members seldom need the same. The demo runs the gateway and every
// shard of one job in one process, each a member: the gateway holds a
// few megabytes, and the shards' tables of keys alone (which do not
// spill) passed a third of the pool at the full dataset, so that q2's
// aggregate spilled, a fifth of the run's CPU, with two thirds of the
// pool free. The total still bounds them together: a holder over what
// the others leave spills at its next batch, down to its even share at
// least, so the pool is over its total by one batch's growth of each
// holder at most, and only until then.
type StatePool struct {
	total int64
	mu    sync.Mutex
	jobs  map[string]struct{}
	held  map[string]holding // by holder: what it said it holds (Hold)
}

// holding is what a holder of a job holds.
type holding struct {
	job   string
	bytes int64
}

// NewStatePool is a pool of total bytes of state.
func NewStatePool(total int64) *StatePool {
	return &StatePool{total: total, jobs: map[string]struct{}{}, held: map[string]holding{}}
}

// Join counts job among the pool's.
func (p *StatePool) Join(job string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.jobs[job] = struct{}{}
}

// Leave counts job no longer, nor what its holders hold.
func (p *StatePool) Leave(job string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.jobs, job)
	for h, hd := range p.held {
		if hd.job == job {
			delete(p.held, h)
		}
	}
}

// Hold says that holder (one of job's task instances here) holds bytes
// of state now.
func (p *StatePool) Hold(job, holder string, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held[holder] = holding{job: job, bytes: bytes}
}

// Share is the bytes of state holder may hold now: the pool's total over
// the jobs it counts (all of it for one, or none), or what the other
// holders leave of the total, if that is more.
func (p *StatePool) Share(holder string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	left := p.total
	for h, hd := range p.held {
		if h != holder {
			left -= hd.bytes
		}
	}
	return max(p.total/int64(max(1, len(p.jobs))), left)
}

// MemoryReserve is what a process's memory budget keeps for itself, not
// for its jobs' state: the Go runtime, the gRPC buffers, the batches in
// flight and in the outboxes, the upload's buffers at the gateway.
const MemoryReserve = 64 << 20

// DefaultMemoryBudget is a process's memory budget unless it sets
// another (--memory-budget): its resident memory stays about within it,
// at any input size.
const DefaultMemoryBudget = 512 << 20

// MemoryBudget is how a process's memory budget (bytes; <= 0: the
// default) divides: the soft memory limit of its Go runtime, three
// quarters of it (the rest for what the runtime holds beside the heap
// and the garbage between collections), and the bytes of state its jobs
// share (a StatePool's), half of the budget less MemoryReserve: a live
// heap of that state and the reserve stays under two thirds of the soft
// limit, so the collector has as much again to run without running back
// to back (internal/memlimit). 512 MiB: a soft limit of 384 MiB, 224 MiB
// of state; a shard of the four default queries holds about 200 MiB of
// state at the full dataset (3.1M matches, two shards), and spills past
// it on larger ones. The ceiling is where memlimit stops raising the soft
// limit over a live heap larger than it (state that does not spill: a
// standing job's), fifteen sixteenths of the budget, the rest for what
// the runtime holds beside the heap (about 28 MiB measured at 480 MiB of
// heap): 480 MiB of 512.
func MemoryBudget(budget int64) (softLimit, ceiling, state int64) {
	if budget <= 0 {
		budget = DefaultMemoryBudget
	}
	return budget / 4 * 3, budget / 16 * 15, max(budget-MemoryReserve, budget/2) / 2
}
