package election

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

var (
	flagSeeds = flag.Int("election.seeds", 0, "seeds for TestSimulation (0: 5000, 500 with -short)")
	flagSeed  = flag.Uint64("election.seed", 0, "run only this seed of TestSimulation, and print its trace")
	// With a deliberately broken rule in bully.go, this shows whether the
	// end invariants (one leader per term, one acting master, liveness)
	// catch it without the checks that restate the rules.
	flagEndOnly = flag.Bool("election.end-invariants-only", false, "skip the checks that restate the rules (acting justified, term owned)")
)

// Liveness bounds, in ticks, checked on every seed.
//
// After a leader crash in a healthy network: the followers miss it for at
// most LeaderTimeout after its last heartbeat reached them (at once if the
// runtime confirms its death), the highest live id waits ElectionTimeout
// for an ALIVE from the dead higher ones and takes over, the followers'
// promises to the dead leader have run out by then, and a COORDINATOR and
// its acknowledgement take two round trips at most.
//
// After the network heals there is no such chain to follow: the messages
// still in flight arrive (up to the chaos phase's longest delay), a master
// that restarts as the network heals listens for ListenTicks and keeps its
// promise, a stale leader of a higher term may depose the current one, and
// an election may need a COORDINATOR wait and a second round. The bound
// adds all of these up; the measured figures (TestSimulation's log) are far
// below it.
func failoverBound(cfg Config) int {
	return cfg.LeaderTimeout + cfg.ElectionTimeout + 8
}

func healBound(cfg Config, chaos netParams) int {
	return chaos.maxDelay + chaos.longMax + cfg.ListenTicks + 2*cfg.LeaderTimeout + 2*(cfg.ElectionTimeout+cfg.CoordinatorTimeout)
}

type simResult struct {
	seed     uint64
	peers    int
	heal     int // ticks from the heal to agreement
	failover int // ticks from the leader's crash to agreement; -1 if not run
	// confirmed: the runtime confirmed the crash to the others
	confirmed bool
	stats     simStats
	err       error
}

// simulate runs one seed: a chaos phase (loss, duplication, delay and
// reordering, partitions and one-way link failures, crashes, restarts and
// crashes between persisting and sending, death confirmations), then the
// network heals and crashes stop (liveness: agreement within healBound),
// then the leader crashes (the highest live id takes over within
// failoverBound), then it returns (it must not depose the new leader).
func simulate(seed uint64, tracing bool) (res simResult, c *cluster) {
	r := rand.New(rand.NewPCG(seed, 1))
	n := []int{1, 2, 3, 3, 3, 4, 5, 5, 5, 7}[r.IntN(10)]
	var ids []ID
	for len(ids) < n {
		if id := ID(1 + r.IntN(30)); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	hb := 1 + r.IntN(3)
	lease := hb + 5 + r.IntN(4) // > HeartbeatEvery + a round trip once healed
	lt := lease + 1 + r.IntN(5)
	cfg := Config{
		HeartbeatEvery:     hb,
		LeaseTicks:         lease,
		LeaderTimeout:      lt,
		ListenTicks:        lt + r.IntN(6),
		ElectionTimeout:    6 + r.IntN(3), // > a round trip and a tick once healed (delays <= 2)
		CoordinatorTimeout: 5 + r.IntN(8),
	}
	c = newCluster(seed, cfg, ids)
	c.tracing = tracing
	res = simResult{seed: seed, peers: n, failover: -1}
	c.logf("seed %d peers %v config %+v", seed, c.ids, cfg)

	// Chaos.
	c.net = netParams{
		loss:     r.Float64() * 0.3,
		dup:      r.Float64() * 0.1,
		minDelay: r.IntN(2),
		maxDelay: 1 + r.IntN(4),
		longP:    r.Float64() * 0.05,
		longMax:  10 + r.IntN(30),
	}
	c.confirmP = r.Float64() * 0.6
	c.crashMidP = 0.01
	crashP := r.Float64() * 0.01
	partP := r.Float64() * 0.03
	restartAt := make([]int64, n)
	for range 150 + r.IntN(450) {
		for i := range c.ms {
			switch {
			case c.live(i) && r.Float64() < crashP:
				c.crash(i)
				restartAt[i] = c.step + downtime(r, cfg)
			case !c.live(i) && restartAt[i] == 0: // crashed between persist and send
				restartAt[i] = c.step + downtime(r, cfg)
			case !c.live(i) && restartAt[i] <= c.step:
				c.start(i)
				restartAt[i] = 0
			}
		}
		if r.Float64() < partP {
			groups := make([][]ID, 1+r.IntN(3))
			for _, id := range c.ids {
				g := r.IntN(len(groups))
				groups[g] = append(groups[g], id)
			}
			c.partition(groups...)
		}
		if r.Float64() < partP {
			clear(c.group)
			c.logf("partition healed")
		}
		if r.Float64() < partP/2 {
			a, b := r.IntN(n), r.IntN(n)
			c.cut[[2]int{a, b}] = true
			c.logf("cut %d -> %d", c.ids[a], c.ids[b])
		}
		if r.Float64() < partP/2 {
			clear(c.cut)
			c.logf("cuts healed")
		}
		if err := c.run(1); err != nil {
			res.err = err
			return res, c
		}
	}

	// The network heals and crashes stop. Either the runtime confirms the
	// deaths of the masters that stay down, every tick, or there is no
	// runtime to ask and every master comes back.
	chaos := c.net
	c.heal()
	c.net = netParams{minDelay: 1, maxDelay: 2}
	c.crashMidP = 0
	c.confirmP = 0
	if r.IntN(2) == 0 {
		c.confirmP = 1
	}
	if c.confirmP == 0 || r.IntN(2) == 0 || c.liveCount() == 0 {
		for i := range c.ms {
			if !c.live(i) {
				c.start(i)
			}
		}
	}
	stable := cfg.ListenTicks + 3*cfg.LeaderTimeout
	ticks, leader, _, err := c.converge(healBound(cfg, chaos), stable)
	if err != nil {
		res.err = fmt.Errorf("after the heal: %w", err)
		return res, c
	}
	res.heal = ticks
	if c.liveCount() < 2 || (c.confirmP == 0 && c.liveCount()-1 < n/2+1) {
		return res, c
	}

	// The leader crashes: the highest live id must take over.
	old := c.index(leader)
	c.crash(old)
	ticks, leader, term, err := c.converge(failoverBound(cfg), stable)
	if err != nil {
		res.err = fmt.Errorf("after the leader crashed: %w", err)
		return res, c
	}
	res.failover = ticks
	res.confirmed = c.confirmP > 0
	highest := None
	for _, m := range c.ms {
		if m.node != nil {
			highest = max(highest, m.id)
		}
	}
	if leader != highest {
		res.err = fmt.Errorf("step %d: after the leader crashed, %d leads, not the highest live id %d", c.step, leader, highest)
		return res, c
	}

	// The old leader returns (higher or lower): it must listen and follow,
	// never depose the healthy leader.
	c.start(old)
	for range cfg.ListenTicks + 3*cfg.LeaderTimeout {
		if err := c.run(1); err != nil {
			res.err = err
			return res, c
		}
		if st := c.ms[c.index(leader)].state; st.Role != RoleLeader || st.Term != term {
			res.err = fmt.Errorf("step %d: returning %d deposed leader %d of term %d: %s", c.step, c.ids[old], leader, term, c.describe())
			return res, c
		}
	}
	if l, t, ok := c.agreed(); !ok || l != leader || t != term {
		res.err = fmt.Errorf("step %d: returning %d did not join leader %d of term %d: %s", c.step, c.ids[old], leader, term, c.describe())
	}
	res.stats = c.stats
	return res, c
}

// downtime: often shorter than a lease (a quick restart is what the
// restart promise is for), sometimes long.
func downtime(r *rand.Rand, cfg Config) int64 {
	if r.IntN(2) == 0 {
		return 1 + int64(r.IntN(cfg.LeaseTicks))
	}
	return 1 + int64(r.IntN(80))
}

func TestSimulation(t *testing.T) {
	if *flagSeed != 0 {
		res, c := simulate(*flagSeed, true)
		t.Log(c.traceTail(4000))
		if res.err != nil {
			t.Fatalf("seed %d: %v", res.seed, res.err)
		}
		return
	}
	seeds := 5000
	if testing.Short() {
		seeds = 500
	}
	if *flagSeeds > 0 {
		seeds = *flagSeeds
	}
	start := time.Now()
	results := make([]simResult, seeds)
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				results[i], _ = simulate(uint64(i+1), false)
			}
		})
	}
	for i := range seeds {
		next <- i
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)

	var heal, failoverConfirmed, failoverTimeout []int
	var stats simStats
	for _, res := range results {
		if res.err != nil {
			_, c := simulate(res.seed, true)
			t.Fatalf("seed %d (%d masters): %v\nrerun: go test ./election -run TestSimulation -election.seed=%d\ntrace tail:\n%s",
				res.seed, res.peers, res.err, res.seed, c.traceTail(150))
		}
		heal = append(heal, res.heal)
		switch {
		case res.failover < 0:
		case res.confirmed:
			failoverConfirmed = append(failoverConfirmed, res.failover)
		default:
			failoverTimeout = append(failoverTimeout, res.failover)
		}
		stats.add(res.stats)
	}
	t.Logf("%d seeds in %v (%.0f seeds/s)", seeds, elapsed.Round(time.Millisecond), float64(seeds)/elapsed.Seconds())
	t.Logf("ticks to agree after the heal:                      %s", percentiles(heal))
	t.Logf("ticks to agree after a leader crash, confirmed:     %s", percentiles(failoverConfirmed))
	t.Logf("ticks to agree after a leader crash, by timeout:    %s", percentiles(failoverTimeout))
	t.Logf("reached: %d leaderships, %d step-downs, %d acting handoffs; instants with two leaders %d, with an idle leader %d, acting on confirmed deaths %d; acknowledgements held back by a promise %d",
		stats.claims, stats.stepDowns, stats.handoffs, stats.twoLeaders, stats.idleLeader, stats.actingOnDeaths, stats.refusedByLeader)
}

func percentiles(v []int) string {
	if len(v) == 0 {
		return "none"
	}
	slices.Sort(v)
	p := func(q float64) int { return v[min(len(v)-1, int(q*float64(len(v))))] }
	return fmt.Sprintf("n=%d p50=%d p99=%d max=%d", len(v), p(0.5), p(0.99), v[len(v)-1])
}
