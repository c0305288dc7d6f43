package election

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ID names a master. IDs are positive; the highest live id wins an election.
type ID int

// None is the zero ID: no leader.
const None ID = 0

// Term numbers a leadership. It only grows, and every master persists the
// highest term it has acknowledged or claimed. Terms never collide: term t
// can only be claimed by the master at index t mod len(Peers) of the sorted
// peer list (Config.Owner), and a master never claims the same term twice.
type Term uint64

// Kind is a message type.
type Kind uint8

// The messages of the Bully algorithm, plus the acknowledgements that make
// the handoff and the lease safe.
const (
	KindUnspecified Kind = iota
	// KindElection: a master that found no leader asks every higher id
	// whether it is alive. Seq is the election round.
	KindElection
	// KindAlive answers an Election from a lower id: "I am alive and
	// higher, wait for a COORDINATOR". Seq echoes the round.
	KindAlive
	// KindCoordinator: a leader announces its term (when it takes over, and
	// again to a lower id that calls an election). Seq is the leader's tick.
	KindCoordinator
	// KindCoordinatorAck accepts a Coordinator when Term equals it; a reply
	// carrying any other term is a refusal (a higher one deposes the leader).
	KindCoordinatorAck
	// KindHeartbeat: the leader's keepalive, every HeartbeatEvery ticks; to
	// a master that missed the Coordinator it doubles as one. Seq is the
	// leader's tick.
	KindHeartbeat
	// KindHeartbeatAck answers a Heartbeat, like KindCoordinatorAck.
	KindHeartbeatAck
)

var kindNames = [...]string{"unspecified", "election", "alive", "coordinator", "coordinator-ack", "heartbeat", "heartbeat-ack"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Role is a master's place in the election.
type Role uint8

const (
	// RoleFollower: listening for, or following, a leader.
	RoleFollower Role = iota
	// RoleCandidate: running an election (waiting for ALIVE, or, after one,
	// for the COORDINATOR of a higher id).
	RoleCandidate
	// RoleLeader: claimed a term. It may act only while Acting.
	RoleLeader
)

func (r Role) String() string {
	switch r {
	case RoleFollower:
		return "follower"
	case RoleCandidate:
		return "candidate"
	case RoleLeader:
		return "leader"
	}
	return fmt.Sprintf("role(%d)", r)
}

// Message is one election message between two masters.
type Message struct {
	Kind     Kind
	From, To ID
	// Term is the sender's term: the highest it has acknowledged or claimed.
	Term Term
	// Seq is the election round (Election, Alive) or the leader's tick when
	// it sent the Coordinator or Heartbeat, echoed by the acknowledgement.
	Seq uint64
}

func (m Message) String() string {
	return fmt.Sprintf("%s %d->%d term=%d seq=%d", m.Kind, m.From, m.To, m.Term, m.Seq)
}

// State is what a master is in the election, after the last call.
type State struct {
	Role Role
	// Leader is the master this one follows (whose term it acknowledged and
	// heard within LeaderTimeout), itself when it leads, or None.
	Leader ID
	// Term is the highest term this master has acknowledged or claimed.
	Term Term
	// Acting says the leader may restart processes now: it holds a lease
	// from a majority, or every master it cannot reach is confirmed dead.
	Acting bool
}

// Output is what a call asks of the adapter, in this order: write Persist
// durably (if set), apply State (stop acting if Acting went false), then
// send Send.
type Output struct {
	Send []Message
	// Persist is the term to write durably before any of Send goes out.
	Persist *Term
	State
}

// Config sets a master's identity and timing. Timeouts are in ticks; the
// adapter decides how long a tick is. Every master must use the same Peers
// and timing.
type Config struct {
	Self ID
	// Peers lists every master, Self included.
	Peers []ID
	// HeartbeatEvery: a leader sends heartbeats this often.
	HeartbeatEvery int
	// LeaseTicks: a leader acts for this long after sending a heartbeat
	// that a majority acknowledged, and honours a ConfirmDead for this long.
	LeaseTicks int
	// LeaderTimeout: a follower that hears no leader for this long calls an
	// election; a master that acknowledged a leader acknowledges no other
	// term until this long after its last acknowledgement.
	LeaderTimeout int
	// ListenTicks: a master that starts listens this long for a current
	// leader before it may call an election.
	ListenTicks int
	// ElectionTimeout: a candidate that hears no ALIVE from a higher id for
	// this long takes over. More than a round trip.
	ElectionTimeout int
	// CoordinatorTimeout: a candidate that heard ALIVE waits this long for a
	// COORDINATOR before it calls the election again.
	CoordinatorTimeout int
}

// DefaultConfig is Config with timing that suits a tick of about 100 ms:
// heartbeats every 200 ms, a leader deemed dead after 1 s.
func DefaultConfig(self ID, peers []ID) Config {
	return Config{
		Self:               self,
		Peers:              peers,
		HeartbeatEvery:     2,
		LeaseTicks:         8,
		LeaderTimeout:      10,
		ListenTicks:        12,
		ElectionTimeout:    3,
		CoordinatorTimeout: 10,
	}
}

// ErrConfig is wrapped by every Validate error.
var ErrConfig = errors.New("invalid election config")

// Validate checks ids and the timing relations the safety argument needs:
// 0 < HeartbeatEvery < LeaseTicks < LeaderTimeout <= ListenTicks.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	if len(c.Peers) == 0 {
		return bad("Peers is empty")
	}
	seen := map[ID]bool{}
	for _, p := range c.Peers {
		if p <= 0 {
			return bad("Peers: id %d is not positive", p)
		}
		if seen[p] {
			return bad("Peers: id %d twice", p)
		}
		seen[p] = true
	}
	if !seen[c.Self] {
		return bad("Self %d is not in Peers", c.Self)
	}
	switch {
	case c.HeartbeatEvery <= 0:
		return bad("HeartbeatEvery %d must be positive", c.HeartbeatEvery)
	case c.LeaseTicks <= c.HeartbeatEvery:
		return bad("LeaseTicks %d must exceed HeartbeatEvery %d", c.LeaseTicks, c.HeartbeatEvery)
	case c.LeaderTimeout <= c.LeaseTicks:
		return bad("LeaderTimeout %d must exceed LeaseTicks %d", c.LeaderTimeout, c.LeaseTicks)
	case c.ListenTicks < c.LeaderTimeout:
		return bad("ListenTicks %d must be at least LeaderTimeout %d", c.ListenTicks, c.LeaderTimeout)
	case c.ElectionTimeout <= 0:
		return bad("ElectionTimeout %d must be positive", c.ElectionTimeout)
	case c.CoordinatorTimeout <= 0:
		return bad("CoordinatorTimeout %d must be positive", c.CoordinatorTimeout)
	}
	return nil
}

// Owner is the only master that may claim term t (None for term 0).
func (c Config) Owner(t Term) ID {
	if t == 0 || len(c.Peers) == 0 {
		return None
	}
	peers := slices.Sorted(slices.Values(c.Peers))
	return peers[t%Term(len(peers))]
}

// never is a tick long before any other.
const never = math.MinInt64 / 4

// Node is one master's election state machine. It is not safe for
// concurrent use: the adapter calls it from one goroutine.
type Node struct {
	cfg    Config
	peers  []ID // sorted
	self   int  // index of cfg.Self in peers
	quorum int  // a majority of peers

	now     int64 // ticks since New
	term    Term  // persisted: highest acknowledged or claimed
	maxSeen Term  // highest term in any message (not persisted)
	role    Role
	leader  ID

	listenUntil  int64 // no election before this
	lastContact  int64 // last Coordinator/Heartbeat of a term >= ours
	contactFrom  ID
	promiseUntil int64   // no acknowledgement of another term before this
	held         Message // newest higher-term leader held back by the promise

	round    uint64 // election round
	awaiting bool   // got ALIVE, waiting for COORDINATOR
	deadline int64  // candidate's next decision

	leaderSince int64
	lastBeat    int64
	ackSeq      []int64 // per peer: newest Seq acknowledged in our term
	deadUntil   []int64 // per peer: confirmed dead until
	acting      bool

	send    []Message
	persist bool
}

// New returns a master's state machine, starting as a follower that
// listens. persisted is the term last written through Output.Persist
// (0 on the very first start).
func New(cfg Config, persisted Term) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	peers := slices.Sorted(slices.Values(cfg.Peers))
	n := &Node{
		cfg:         cfg,
		peers:       peers,
		self:        slices.Index(peers, cfg.Self),
		quorum:      len(peers)/2 + 1,
		term:        persisted,
		maxSeen:     persisted,
		listenUntil: int64(cfg.ListenTicks),
		lastContact: never,
		ackSeq:      make([]int64, len(peers)),
		deadUntil:   make([]int64, len(peers)),
	}
	for i := range n.deadUntil {
		n.ackSeq[i] = -1
		n.deadUntil[i] = never
	}
	// We may have acknowledged a leader just before we stopped: keep that
	// promise as if we had acknowledged it now. A master that never
	// acknowledged anything promised nothing, and neither did one whose
	// persisted term is its own: it accepts no other leader of that term
	// (only its owner may lead it), and to accept a higher one it would
	// have persisted that first. So a leader that is killed and restarted
	// acknowledges its successor at once, instead of holding every failover
	// that needs its vote for LeaderTimeout.
	if persisted > 0 && n.owner(persisted) != cfg.Self {
		n.promiseUntil = int64(cfg.LeaderTimeout)
	}
	return n, nil
}

// State is the master's current state.
func (n *Node) State() State {
	return State{Role: n.role, Leader: n.leader, Term: n.term, Acting: n.acting}
}

// Tick advances logical time by one tick.
func (n *Node) Tick() Output {
	n.now++
	n.acceptHeld()
	switch n.role {
	case RoleFollower:
		if n.leaderLost() {
			n.startElection()
		}
	case RoleCandidate:
		if n.now >= n.deadline {
			if n.awaiting {
				n.startElection()
			} else {
				n.becomeLeader()
			}
		}
	case RoleLeader:
		if n.now-n.lastBeat >= int64(n.cfg.HeartbeatEvery) {
			n.broadcast(KindHeartbeat)
		}
	}
	return n.output()
}

// Receive handles one message from another master. Messages not addressed
// to this master, from an unknown one or of an unknown kind are ignored.
func (n *Node) Receive(m Message) Output {
	from := n.index(m.From)
	if m.To != n.cfg.Self || from < 0 || from == n.self || m.Kind == KindUnspecified || m.Kind > KindHeartbeatAck {
		return n.output()
	}
	if (m.Kind == KindCoordinator || m.Kind == KindHeartbeat) && n.deadUntil[from] > n.now {
		// Sent before the death the runtime confirmed, and delivered since:
		// a restarted master listens longer than a confirmation lasts
		// before it can lead. Following it would only renew a promise to
		// a dead leader.
		return n.output()
	}
	n.deadUntil[from] = never // it talks, so it is not (or no longer) dead
	n.maxSeen = max(n.maxSeen, m.Term)
	if n.role == RoleLeader && m.Term > n.term {
		n.stepDown()
	}
	switch m.Kind {
	case KindElection:
		n.onElection(m)
	case KindAlive:
		if n.role == RoleCandidate && !n.awaiting && m.Seq == n.round && m.From > n.cfg.Self {
			n.awaiting = true
			n.deadline = n.now + int64(n.cfg.CoordinatorTimeout)
		}
	case KindCoordinator, KindHeartbeat:
		n.onLeader(m)
	case KindCoordinatorAck, KindHeartbeatAck:
		// Only acknowledgements of our own term, of a tick we really sent in
		// it, count toward the lease.
		if n.role == RoleLeader && m.Term == n.term && m.Seq <= uint64(n.now) && int64(m.Seq) >= n.leaderSince {
			n.ackSeq[from] = max(n.ackSeq[from], int64(m.Seq))
		}
	}
	return n.output()
}

// ConfirmDead tells the master that the runtime has just seen master id's
// process (or container) exited: fail-stop, not merely unreachable. Call it
// again on every check while it stays dead; each call counts for LeaseTicks.
// A leader that cannot reach a majority acts only while every master it
// cannot reach is confirmed dead. A follower whose leader is confirmed dead
// calls an election at once instead of waiting for LeaderTimeout.
func (n *Node) ConfirmDead(id ID) Output {
	i := n.index(id)
	if i < 0 || i == n.self {
		return n.output()
	}
	n.deadUntil[i] = n.now + int64(n.cfg.LeaseTicks)
	if n.role != RoleLeader {
		// The leader we promised is dead: it cannot act, and when it comes
		// back it is a new process that listens first. The promise is void.
		if n.owner(n.term) == id {
			n.promiseUntil = min(n.promiseUntil, n.now)
		}
		if n.contactFrom == id {
			n.lastContact, n.contactFrom = never, None
		}
		if n.leader == id {
			n.leader = None
		}
		// A newer leader we held back for the promise is accepted now;
		// otherwise, with no leader left, the election starts at once
		// rather than at the next tick.
		n.acceptHeld()
		if n.role == RoleFollower && n.leaderLost() {
			n.startElection()
		}
	}
	return n.output()
}

// acceptHeld acknowledges the newest COORDINATOR or HEARTBEAT of a higher
// term that the promise held back, once the promise is over: as if the
// network had delivered it again now.
func (n *Node) acceptHeld() {
	if n.held.Kind == KindUnspecified || n.now < n.promiseUntil {
		return
	}
	m := n.held
	n.held = Message{}
	if m.Term > n.term {
		n.onLeader(m)
	}
}

func (n *Node) onElection(m Message) {
	if m.From > n.cfg.Self {
		return // elections only go up
	}
	if n.role == RoleFollower && n.now < n.listenUntil {
		// Listening after a start: we cannot take over before it ends, so
		// an ALIVE would only hold the caller for CoordinatorTimeout. Say
		// nothing: it takes over after ElectionTimeout, and we follow it.
		return
	}
	n.emit(KindAlive, m.From, m.Seq)
	switch n.role {
	case RoleLeader:
		// The caller lost us: announce ourselves again.
		n.emit(KindCoordinator, m.From, uint64(n.now))
	case RoleFollower:
		// Bully: a lower id found no leader; take over if we have none
		// either. While we listen, or hear a leader, we only answer.
		if n.leaderLost() {
			n.startElection()
		}
	}
}

// onLeader handles a Coordinator or Heartbeat: the sender leads m.Term.
func (n *Node) onLeader(m Message) {
	if n.owner(m.Term) != m.From {
		return // nobody else may lead that term
	}
	ack := KindHeartbeatAck
	if m.Kind == KindCoordinator {
		ack = KindCoordinatorAck
	}
	switch {
	case m.Term < n.term:
		// A stale leader: our term, in the reply, makes it step down.
		n.emit(ack, m.From, m.Seq)
	case m.Term == n.term:
		// The leader we acknowledged (terms are unique), maybe back after
		// we had given up on it: follow it again.
		n.follow(m.From)
		n.emit(ack, m.From, m.Seq)
	default:
		// A newer leadership. A candidate that heard no higher id is about
		// to take over and bullies a lower one instead of joining it.
		if n.role == RoleCandidate && !n.awaiting && m.From < n.cfg.Self {
			return
		}
		n.lastContact, n.contactFrom = n.now, m.From
		if n.now < n.promiseUntil {
			// Still promised to the current leader: accept the new one only
			// once that promise has run out (its lease has then too), or is
			// void (acceptHeld), without waiting for its next heartbeat.
			if m.Term >= n.held.Term {
				n.held = m
			}
			return
		}
		n.held = Message{}
		n.term = m.Term
		n.persist = true
		n.follow(m.From)
		n.emit(ack, m.From, m.Seq)
	}
}

func (n *Node) follow(id ID) {
	n.role = RoleFollower
	n.leader = id
	n.awaiting = false
	n.lastContact, n.contactFrom = n.now, id
	n.promiseUntil = n.now + int64(n.cfg.LeaderTimeout)
}

// leaderLost: a follower past its listening period that has heard no leader
// for LeaderTimeout.
func (n *Node) leaderLost() bool {
	return n.now >= n.listenUntil && n.now >= n.lastContact+int64(n.cfg.LeaderTimeout)
}

func (n *Node) startElection() {
	n.role = RoleCandidate
	n.leader = None
	n.round++
	n.awaiting = false
	asked := false
	for i := n.self + 1; i < len(n.peers); i++ {
		if n.deadUntil[i] > n.now {
			continue // confirmed dead: no use waiting for its ALIVE
		}
		n.emit(KindElection, n.peers[i], n.round)
		asked = true
	}
	if !asked {
		n.becomeLeader()
		return
	}
	n.deadline = n.now + int64(n.cfg.ElectionTimeout)
}

func (n *Node) becomeLeader() {
	if n.now < n.promiseUntil {
		// Cannot happen through a lost leader (the promise ends before
		// LeaderTimeout does), but never break it: wait.
		n.role, n.awaiting, n.deadline = RoleCandidate, false, n.promiseUntil
		return
	}
	t, ok := n.nextTerm(max(n.term, n.maxSeen))
	if !ok {
		// Terms ran out (only a forged message gets near 2^64): stay out.
		n.role, n.awaiting, n.deadline = RoleCandidate, false, n.now+int64(n.cfg.ElectionTimeout)
		return
	}
	n.term, n.maxSeen = t, t
	n.persist = true
	n.role = RoleLeader
	n.leader = n.cfg.Self
	n.leaderSince = n.now
	for i := range n.ackSeq {
		n.ackSeq[i] = -1
	}
	n.broadcast(KindCoordinator)
}

func (n *Node) stepDown() {
	n.role = RoleFollower
	n.leader = None
	n.acting = false
	// Give the newer leader a full LeaderTimeout to reach us.
	n.lastContact, n.contactFrom = n.now, None
}

func (n *Node) broadcast(k Kind) {
	n.lastBeat = n.now
	for i, p := range n.peers {
		if i != n.self {
			n.emit(k, p, uint64(n.now))
		}
	}
}

func (n *Node) emit(k Kind, to ID, seq uint64) {
	n.send = append(n.send, Message{Kind: k, From: n.cfg.Self, To: to, Term: n.term, Seq: seq})
}

// mayAct: a leader with fresh acknowledgements from a majority (itself
// included), or whose every unacknowledging peer is confirmed dead.
func (n *Node) mayAct() bool {
	if n.role != RoleLeader {
		return false
	}
	fresh, covered := 1, true
	for i := range n.peers {
		switch {
		case i == n.self:
		case n.ackSeq[i] >= 0 && n.ackSeq[i]+int64(n.cfg.LeaseTicks) > n.now:
			fresh++
		case n.deadUntil[i] > n.now:
		default:
			covered = false
		}
	}
	return fresh >= n.quorum || covered
}

func (n *Node) output() Output {
	n.acting = n.mayAct()
	o := Output{Send: n.send, State: n.State()}
	if n.persist {
		t := n.term
		o.Persist = &t
	}
	n.send, n.persist = nil, false
	return o
}

func (n *Node) index(id ID) int {
	i, ok := slices.BinarySearch(n.peers, id)
	if !ok {
		return -1
	}
	return i
}

func (n *Node) owner(t Term) ID {
	if t == 0 {
		return None
	}
	return n.peers[t%Term(len(n.peers))]
}

// nextTerm is the smallest term above after that this master owns; false
// if there is none below 2^64.
func (n *Node) nextTerm(after Term) (Term, bool) {
	size := Term(len(n.peers))
	if after > math.MaxUint64-size {
		return 0, false
	}
	t := after + 1
	return t + (Term(n.self)+size-t%size)%size, true
}
