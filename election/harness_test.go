package election

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// cluster is a deterministic simulated network of masters. Time moves in
// steps: in each step every live master ticks once, the messages due are
// delivered and the runtime's death confirmations arrive, all in an order
// shuffled by the seeded RNG. The invariants are checked after every event.
type cluster struct {
	cfg Config // timing template; Self is set per member
	ids []ID   // sorted
	ms  []*member
	rng *rand.Rand

	net       netParams
	confirmP  float64 // per step, per (live, crashed) pair: ConfirmDead
	crashMidP float64 // per output with messages: crash after Persist, before Send

	step    int64
	group   []int            // partition group of each member
	cut     map[[2]int]bool  // one-way link failures, from -> to
	flights []flight         // messages in the network
	evbuf   []event          // reused per step
	duebuf  []flight         // reused per step
	claims  map[Term]ID      // every leadership ever claimed
	acks    map[ackKey]int64 // acknowledgements delivered: newest seq per (leader, term, acker)

	stats   simStats
	tracing bool
	trace   []string
	err     error
}

// simStats counts situations the simulation reached, to show it covers them.
type simStats struct {
	claims          int // leaderships claimed
	stepDowns       int // a live leader gave up its term for a higher one
	handoffs        int // acting passed from one master to another
	twoLeaders      int // instants with two live leaders (different terms)
	idleLeader      int // instants with a live leader that may not act
	actingOnDeaths  int // instants a leader acts on death confirmations, without a majority
	refusedByLeader int // acknowledgements refused because of a promise to another leader
	lastActing      ID
}

func (s *simStats) add(o simStats) {
	s.claims += o.claims
	s.stepDowns += o.stepDowns
	s.handoffs += o.handoffs
	s.twoLeaders += o.twoLeaders
	s.idleLeader += o.idleLeader
	s.actingOnDeaths += o.actingOnDeaths
	s.refusedByLeader += o.refusedByLeader
}

type netParams struct {
	loss, dup          float64
	minDelay, maxDelay int     // steps; 0 delivers within the step
	longP              float64 // chance of a long delay
	longMax            int
}

type member struct {
	idx       int
	id        ID
	node      *Node // nil while crashed
	persisted Term
	state     State
	clock     int64   // ticks since the node started (mirrors its own)
	dead      []int64 // clock of the last ConfirmDead per peer, this incarnation
	starts    int
	claimed   Term // highest term it ever led
	claimedIn int  // the start in which it claimed it
}

type flight struct {
	m  Message
	at int64
}

type ackKey struct {
	leader, acker int
	term          Term
}

type evKind uint8

const (
	evTick evKind = iota
	evDeliver
	evConfirm
)

type event struct {
	kind evKind
	a, b int
}

const unset = -1 << 40

func newCluster(seed uint64, cfg Config, ids []ID) *cluster {
	ids = slices.Sorted(slices.Values(ids))
	c := &cluster{
		cfg:    cfg,
		ids:    ids,
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		net:    netParams{minDelay: 1, maxDelay: 1},
		group:  make([]int, len(ids)),
		cut:    map[[2]int]bool{},
		claims: map[Term]ID{},
		acks:   map[ackKey]int64{},
	}
	for i, id := range ids {
		c.ms = append(c.ms, &member{idx: i, id: id})
		c.start(i)
	}
	return c
}

func (c *cluster) config(i int) Config {
	cfg := c.cfg
	cfg.Self = c.ids[i]
	cfg.Peers = c.ids
	return cfg
}

func (c *cluster) index(id ID) int {
	i, ok := slices.BinarySearch(c.ids, id)
	if !ok {
		panic(fmt.Sprintf("no master %d", id))
	}
	return i
}

func (c *cluster) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("step %d: %s", c.step, fmt.Sprintf(format, args...))
	}
}

func (c *cluster) logf(format string, args ...any) {
	if !c.tracing {
		return
	}
	c.trace = append(c.trace, fmt.Sprintf("%5d ", c.step)+fmt.Sprintf(format, args...))
	if len(c.trace) > 4000 {
		c.trace = slices.Delete(c.trace, 0, 1000)
	}
}

// traceTail is the last lines of the trace.
func (c *cluster) traceTail(lines int) string {
	from := max(0, len(c.trace)-lines)
	return strings.Join(c.trace[from:], "\n")
}

// start (re)starts member i with only its persisted term.
func (c *cluster) start(i int) {
	m := c.ms[i]
	n, err := New(c.config(i), m.persisted)
	if err != nil {
		panic(err)
	}
	m.node, m.clock, m.starts = n, 0, m.starts+1
	m.state = n.State()
	m.dead = make([]int64, len(c.ids))
	for j := range m.dead {
		m.dead[j] = unset
	}
	c.logf("start %d persisted=%d", m.id, m.persisted)
}

func (c *cluster) crash(i int) {
	m := c.ms[i]
	if m.node == nil {
		return
	}
	m.node, m.state = nil, State{}
	c.logf("crash %d", m.id)
}

func (c *cluster) live(i int) bool { return c.ms[i].node != nil }

func (c *cluster) liveCount() int {
	k := 0
	for i := range c.ms {
		if c.live(i) {
			k++
		}
	}
	return k
}

// partition puts members in groups; only members of one group talk.
func (c *cluster) partition(groups ...[]ID) {
	for i := range c.group {
		c.group[i] = -1 - i // alone unless named
	}
	for g, ids := range groups {
		for _, id := range ids {
			c.group[c.index(id)] = g
		}
	}
	c.logf("partition %v", groups)
}

func (c *cluster) heal() {
	clear(c.group)
	clear(c.cut)
	c.logf("heal")
}

func (c *cluster) reachable(from, to int) bool {
	return c.group[from] == c.group[to] && !c.cut[[2]int{from, to}]
}

// run advances the cluster by steps, stopping at the first violation.
func (c *cluster) run(steps int) error {
	for range steps {
		if c.err != nil {
			return c.err
		}
		c.stepOnce()
	}
	return c.err
}

func (c *cluster) stepOnce() {
	c.step++
	ev := c.evbuf[:0]
	for i := range c.ms {
		if c.live(i) {
			ev = append(ev, event{kind: evTick, a: i})
		}
	}
	due, keep := c.duebuf[:0], c.flights[:0]
	for _, f := range c.flights {
		if f.at <= c.step {
			due = append(due, f)
		} else {
			keep = append(keep, f)
		}
	}
	c.flights = keep
	for j := range due {
		ev = append(ev, event{kind: evDeliver, a: j})
	}
	if c.confirmP > 0 {
		for i := range c.ms {
			for k := range c.ms {
				if c.live(i) && !c.live(k) && c.rng.Float64() < c.confirmP {
					ev = append(ev, event{kind: evConfirm, a: i, b: k})
				}
			}
		}
	}
	c.rng.Shuffle(len(ev), func(i, j int) { ev[i], ev[j] = ev[j], ev[i] })
	c.process(ev, due)
	// Messages sent with no delay arrive within the same step.
	for c.err == nil {
		due = due[:0]
		keep = c.flights[:0]
		for _, f := range c.flights {
			if f.at <= c.step {
				due = append(due, f)
			} else {
				keep = append(keep, f)
			}
		}
		c.flights = keep
		if len(due) == 0 {
			break
		}
		ev = ev[:0]
		for j := range due {
			ev = append(ev, event{kind: evDeliver, a: j})
		}
		c.rng.Shuffle(len(ev), func(i, j int) { ev[i], ev[j] = ev[j], ev[i] })
		c.process(ev, due)
	}
	c.evbuf, c.duebuf = ev[:0], due[:0]
}

func (c *cluster) process(ev []event, due []flight) {
	for _, e := range ev {
		switch e.kind {
		case evTick:
			if m := c.ms[e.a]; m.node != nil {
				m.clock++
				c.apply(m, m.node.Tick(), "tick")
			}
		case evDeliver:
			c.deliver(due[e.a].m)
		case evConfirm:
			// Only a master that is really down is ever confirmed dead.
			if m := c.ms[e.a]; m.node != nil && !c.live(e.b) {
				m.dead[e.b] = m.clock
				c.apply(m, m.node.ConfirmDead(c.ids[e.b]), fmt.Sprintf("confirm-dead %d", c.ids[e.b]))
			}
		}
		c.check()
		if c.err != nil {
			return
		}
	}
}

func (c *cluster) deliver(msg Message) {
	from, to := c.index(msg.From), c.index(msg.To)
	m := c.ms[to]
	if m.node == nil || !c.reachable(from, to) {
		c.logf("drop %v", msg)
		return
	}
	if msg.Kind == KindCoordinatorAck || msg.Kind == KindHeartbeatAck {
		k := ackKey{leader: to, acker: from, term: msg.Term}
		if old, ok := c.acks[k]; !ok || int64(msg.Seq) > old {
			c.acks[k] = int64(msg.Seq)
		}
	}
	o := m.node.Receive(msg)
	if (msg.Kind == KindCoordinator || msg.Kind == KindHeartbeat) && msg.Term > m.state.Term && len(o.Send) == 0 && m.state.Role != RoleCandidate {
		c.stats.refusedByLeader++
	}
	c.apply(m, o, "recv "+msg.String())
}

// apply carries out a node's Output like an adapter would (persist, state,
// send) and checks what it can see in it.
func (c *cluster) apply(m *member, o Output, what string) {
	if o.Persist != nil {
		if *o.Persist < m.persisted {
			c.fail("%d persists term %d below %d", m.id, *o.Persist, m.persisted)
		}
		m.persisted = *o.Persist
	}
	if len(o.Send) > 0 && c.crashMidP > 0 && c.rng.Float64() < c.crashMidP {
		c.logf("%d: %s -> crash before sending", m.id, what)
		c.crash(m.idx)
		return
	}
	prev := m.state
	m.state = o.State
	if prev.Role == RoleLeader && o.State.Role != RoleLeader {
		c.stats.stepDowns++
	}
	if c.tracing && (prev != o.State || o.Persist != nil || len(o.Send) > 0) {
		c.logf("%d@%d: %s -> %+v persist=%v send=%v", m.id, m.clock, what, o.State, o.Persist != nil, o.Send)
	}
	st := o.State
	if st.Term != m.persisted {
		c.fail("%d reports term %d but persisted %d", m.id, st.Term, m.persisted)
	}
	if st.Role == RoleLeader {
		if owner, ok := c.claims[st.Term]; ok && owner != m.id {
			c.fail("two leaders in term %d: %d and %d", st.Term, owner, m.id)
		}
		if _, ok := c.claims[st.Term]; !ok {
			c.stats.claims++
		}
		c.claims[st.Term] = m.id
		switch {
		case st.Term < m.claimed:
			c.fail("%d leads term %d after term %d", m.id, st.Term, m.claimed)
		case st.Term == m.claimed && m.claimedIn != m.starts:
			c.fail("%d leads term %d again after a restart", m.id, st.Term)
		case st.Term > m.claimed:
			m.claimed, m.claimedIn = st.Term, m.starts
		}
	}
	for _, msg := range o.Send {
		if msg.From != m.id || msg.To == m.id || !slices.Contains(c.ids, msg.To) {
			c.fail("%d sends a misaddressed %v", m.id, msg)
			continue
		}
		if msg.Term > m.persisted {
			c.fail("%d sends %v before persisting its term", m.id, msg)
		}
		accept := (msg.Kind == KindCoordinatorAck || msg.Kind == KindHeartbeatAck) && c.owner(msg.Term) == msg.To
		if accept && (st.Role == RoleLeader || st.Acting) {
			c.fail("%d acknowledges term %d while leading (%+v)", m.id, msg.Term, st)
		}
		c.send(msg)
	}
}

func (c *cluster) send(msg Message) {
	copies := 1
	if c.net.loss > 0 && c.rng.Float64() < c.net.loss {
		copies = 0
	} else if c.net.dup > 0 && c.rng.Float64() < c.net.dup {
		copies = 2
	}
	for range copies {
		d := c.net.minDelay
		if c.net.maxDelay > d {
			d += c.rng.IntN(c.net.maxDelay - d + 1)
		}
		if c.net.longP > 0 && c.rng.Float64() < c.net.longP {
			d += c.rng.IntN(c.net.longMax + 1)
		}
		c.flights = append(c.flights, flight{m: msg, at: c.step + int64(d)})
	}
}

// check runs the invariants that hold at every instant.
func (c *cluster) check() {
	acting, leaders := -1, 0
	for i, m := range c.ms {
		if m.node == nil {
			continue
		}
		st := m.state
		if st.Role == RoleLeader {
			leaders++
			if !st.Acting {
				c.stats.idleLeader++
			}
		}
		if st.Role == RoleLeader && (st.Leader != m.id || (!*flagEndOnly && c.owner(st.Term) != m.id)) {
			c.fail("%d leads term %d it does not own (%+v)", m.id, st.Term, st)
		}
		if !st.Acting {
			continue
		}
		if st.Role != RoleLeader {
			c.fail("%d acts as a %s", m.id, st.Role)
		}
		if acting >= 0 {
			c.fail("%d and %d act at once (terms %d and %d)", c.ids[acting], m.id, c.ms[acting].state.Term, st.Term)
		}
		acting = i
		if c.stats.lastActing != m.id {
			if c.stats.lastActing != None {
				c.stats.handoffs++
			}
			c.stats.lastActing = m.id
		}
		if !*flagEndOnly {
			c.checkJustified(m)
		}
	}
	if leaders > 1 {
		c.stats.twoLeaders++
	}
}

// checkJustified: an acting leader holds, by the network's own record,
// fresh acknowledgements of its term from a majority, or a fresh death
// confirmation of every master that has not acknowledged.
func (c *cluster) checkJustified(m *member) {
	lease := int64(c.cfg.LeaseTicks)
	fresh, covered := 1, true
	for j := range c.ms {
		if j == m.idx {
			continue
		}
		seq, ok := c.acks[ackKey{leader: m.idx, acker: j, term: m.state.Term}]
		switch {
		case ok && seq+lease > m.clock:
			fresh++
		case m.dead[j] != unset && m.dead[j]+lease > m.clock:
		default:
			covered = false
		}
	}
	if fresh < len(c.ms)/2+1 && covered {
		c.stats.actingOnDeaths++
	}
	if fresh < len(c.ms)/2+1 && !covered {
		c.fail("%d acts in term %d with %d fresh acknowledgements of %d and unconfirmed peers", m.id, m.state.Term, fresh, len(c.ms))
	}
}

// agreed reports the leader and term every live master agrees on, with that
// leader acting; ok is false if there is no such agreement.
func (c *cluster) agreed() (leader ID, term Term, ok bool) {
	first := true
	for _, m := range c.ms {
		if m.node == nil {
			continue
		}
		if first {
			leader, term, first = m.state.Leader, m.state.Term, false
		}
		if m.state.Leader != leader || m.state.Term != term || leader == None {
			return None, 0, false
		}
	}
	if first {
		return None, 0, false
	}
	l := c.ms[c.index(leader)]
	if l.node == nil || !l.state.Acting {
		return None, 0, false
	}
	return leader, term, true
}

// converge runs until every live master agrees on one acting leader and
// stays so for stable steps. It returns the steps until agreement began.
func (c *cluster) converge(limit, stable int) (ticks int, leader ID, term Term, err error) {
	since := -1
	for s := 0; s <= limit+stable; s++ {
		if l, t, ok := c.agreed(); ok {
			if since < 0 || l != leader || t != term {
				since, leader, term = s, l, t
			}
			if s-since >= stable {
				return since, leader, term, nil
			}
		} else {
			since = -1
		}
		if since < 0 && s >= limit {
			break
		}
		if err := c.run(1); err != nil {
			return 0, None, 0, err
		}
	}
	return 0, None, 0, fmt.Errorf("step %d: no agreement within %d steps: %s", c.step, limit, c.describe())
}

func (c *cluster) describe() string {
	var b strings.Builder
	for _, m := range c.ms {
		if m.node == nil {
			fmt.Fprintf(&b, "[%d down persisted=%d] ", m.id, m.persisted)
			continue
		}
		fmt.Fprintf(&b, "[%d %s leader=%d term=%d acting=%v] ", m.id, m.state.Role, m.state.Leader, m.state.Term, m.state.Acting)
	}
	return b.String()
}

// owner is Config.Owner, computed the same way, without sorting each time.
func (c *cluster) owner(t Term) ID {
	if t == 0 {
		return None
	}
	return c.ids[t%Term(len(c.ids))]
}
