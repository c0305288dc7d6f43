// Package election decides which master leads, and when that leader may
// act (restart processes), with the Bully algorithm made safe under
// partitions. It is a pure, deterministic state machine: no goroutines,
// clocks, sockets, randomness, logging or I/O. An adapter beside it owns the
// ticker, the gRPC messages, the durable term and the runtime; it feeds the
// Node three kinds of input and carries out what each call returns:
//
//	n, err := election.New(cfg, persistedTerm)
//	out := n.Tick()             // every tick (say 100 ms)
//	out := n.Receive(msg)       // every election message from another master
//	out := n.ConfirmDead(id)    // the runtime saw master id's process exited
//
// Every Output is carried out in this order: write Output.Persist durably
// (if set), then apply Output.State (if Acting went false, stop restarting
// now), then send Output.Send. Acting is the only thing the supervisor asks:
// it restarts nothing unless the last Output said Acting, and it logs every
// restart with the Term.
//
// # Messages
//
//	ELECTION        a master that lost its leader asks every higher id; Seq = round
//	ALIVE           a higher id answers: "I'm here, wait for a COORDINATOR"
//	COORDINATOR     a leader announces its term; Seq = the leader's tick
//	HEARTBEAT       a leader's keepalive every HeartbeatEvery; doubles as COORDINATOR
//	*_ACK           the answer to either; it accepts when its Term equals the
//	                leader's, refuses otherwise (a higher Term deposes the leader)
//
// Every message carries its sender's term.
//
// # Rules
//
//  1. Listen first. A master that starts (or restarts) listens ListenTicks
//     before it may call an election. If a leader's heartbeats arrive it
//     follows that leader, even a lower id: a returning high id does not
//     depose a healthy leader. And no master calls an election while
//     heartbeats of a term at least its own arrive.
//  2. Bully. A follower that hears no leader for LeaderTimeout (or whose
//     leader the runtime confirms dead) sends ELECTION to every higher id not
//     confirmed dead. An ALIVE makes it wait CoordinatorTimeout for a
//     COORDINATOR, then start over; no ALIVE within ElectionTimeout (or no
//     higher id to ask) and it claims a term. A master that gets an ELECTION
//     from a lower id answers ALIVE, and calls its own election if it has
//     no leader either; while it listens it does not answer (it cannot
//     take over before the listening ends, and an ALIVE would hold the
//     caller for CoordinatorTimeout), so the caller takes over after
//     ElectionTimeout and the listener follows it. A follower whose
//     leader the runtime confirms dead calls its election at once, not at
//     the next tick. A candidate that heard no ALIVE ignores a lower id's
//     newer COORDINATOR: it is about to claim a higher term itself. So when
//     an election happens, after a leader failure, the highest live id wins;
//     a returning higher id does not force one.
//  3. Terms. Term t belongs to the master at index t mod len(Peers) of the
//     sorted peers; a claim is the next term it owns above every term it has
//     seen, persisted before its COORDINATOR goes out. Each master persists
//     one number: the highest term it has acknowledged or claimed. Terms only
//     grow, and two masters never claim the same term.
//  4. Acknowledging is voting and promising. A master acknowledges a leader's
//     COORDINATOR or HEARTBEAT of its own term at once (the term names one
//     leader). It acknowledges a higher term only after its promise to its
//     current leader has run out, that is LeaderTimeout after its last
//     acknowledgement, or as soon as the runtime confirms that leader dead;
//     then it persists the new term before the acknowledgement goes out,
//     and acknowledges at that moment the newest such leader message it
//     held back, without waiting for the next heartbeat. A COORDINATOR or
//     HEARTBEAT from a master confirmed dead less than LeaseTicks ago is
//     dropped: it was sent before the death (a restarted master listens
//     longer than that before it can lead), and following it would renew
//     a promise to a dead leader. A lower term gets a refusal carrying its own term. A restart renews the
//     promise (the master may have acknowledged just before it stopped),
//     unless it never acknowledged anything (persisted term 0) or its
//     persisted term is its own: no other master leads that term, and a
//     higher one it would have persisted before acknowledging it. So a
//     killed leader, restarted, votes for its successor at once.
//  5. Step down. A leader that sees a higher term in any message stops
//     leading and acting at once, before it acknowledges anything.
//  6. Acting. A leader acts only while, counting itself, a majority has
//     acknowledged one of its COORDINATORs or HEARTBEATs sent less than
//     LeaseTicks ago (the lease runs from the send tick, which the
//     acknowledgement echoes, so a slow acknowledgement buys no extra time),
//     or while every master that has not is confirmed dead (each ConfirmDead
//     counts for LeaseTicks; a message from that master cancels it). A new
//     leader therefore acts only once its COORDINATOR is acknowledged, and a
//     lone survivor of fail-stop crashes keeps restarting the others.
//     A leader that loses its majority stays leader, idle, until it hears a
//     higher term or regains acknowledgements.
//
// # Why this is safe
//
// One leader per term: a term is claimed only by its owner, which persists
// it before announcing it and claims only terms above its persisted one.
//
// At most one master acts at any instant. The key fact: an acknowledgement
// by X of a heartbeat that the leader sent at tick s keeps that leader
// acting until s+LeaseTicks at most, and X, having acknowledged at some
// t >= s, acknowledges no other term before t+LeaderTimeout >
// s+LeaseTicks. A restart of X renews the promise (X's persisted term is
// then the leader's, not X's own: X persisted it before acknowledging, and
// persists any later one before acknowledging that); the runtime voids it
// only when the leader it protects is dead, and a dead leader does not act.
// A candidate claims a term only once its own promise has run out. Now
// take two leaders A and B acting at once.
//
//   - Both on a majority: the majorities share a master X. X acknowledged
//     both terms, so it switched from one to the other, which it does only
//     after its promise to the first ran out, by which time that leader's
//     lease from X had ended. (A leader never counts in another's majority
//     either: it acknowledged that other before its claim, at least
//     LeaderTimeout before, and it stops leading before it acknowledges
//     anything after.)
//   - A on confirmed deaths, B on a majority (or on deaths too): every master,
//     B included, has acknowledged A freshly or is confirmed dead to A. B
//     cannot have acknowledged A less than LeaseTicks ago, since it has
//     claimed a term since. B cannot be confirmed dead to A either: B was
//     dead at the confirmation, so it has restarted since, and a restarted
//     master listens ListenTicks >= LeaderTimeout > LeaseTicks before it can
//     lead. So the confirmation has expired.
//
// This is the ancestor system's race closed: there, a master that declared
// itself COORDINATOR started restarting processes at once, while the old
// leader still did. Here the new leader acts only on acknowledgements, which
// come only after the old leader's lease from those masters has ended.
//
// # Timing
//
// All timeouts are in ticks, and every master must use the same values:
//
//	HeartbeatEvery < LeaseTicks < LeaderTimeout <= ListenTicks   (Validate checks)
//	LeaseTicks > HeartbeatEvery + a round trip   (else acting flickers)
//	ElectionTimeout > a round trip + 1 tick      (else a lower id may win)
//	ConfirmDead repeated at least every LeaseTicks while a master stays down
//
// The argument compares one master's ticks with another's, so it assumes
// they run at the same rate; the margin LeaderTimeout-LeaseTicks absorbs
// drift and jitter (safe while LeaseTicks*(1+r) < LeaderTimeout*(1-r) for a
// relative rate error r). A paused process is the real danger: the adapter
// must count ticks from a monotonic clock and catch up every missed tick
// before it trusts Acting, and the supervisor must check Acting right before
// each restart. DefaultConfig at a tick of 100 ms: heartbeats every 200 ms,
// lease 800 ms, leader lost after 1 s, listen 1.2 s, election timeout 300
// ms; the masters tick every 70 ms (services/roles/master.DefaultTick):
// 140, 560, 700, 840 and 210 ms.
//
// # Liveness and its limits
//
// Once the network is healthy and crashes stop, all live masters agree on
// one acting leader within a few LeaderTimeouts; when the leader crashes,
// the highest live id takes over in about LeaderTimeout+ElectionTimeout
// ticks, or ElectionTimeout when the runtime confirms the crash. Two cases
// re-elect although the leader is healthy, because terms must win: a master
// that led an idle term in a minority and rejoins with that term higher
// than the current one (after a partition heals, or when it restarts), and
// an asymmetric link that hides the leader from a higher id. Either costs at
// most about LeaderTimeout without an acting leader. A pre-vote round
// (claim only with a majority's consent) would avoid them; it would also
// stop a lone survivor from claiming, so it is not done.
//
// # Tests
//
// sim_test.go drives thousands of seeded runs through a simulated network
// (loss, duplication, delay and reordering, partitions, one-way link
// failures, crashes and restarts keeping only the persisted term, crashes
// between persisting and sending, death confirmations for really dead
// masters only) and checks after every event: one leader per term across
// all history, at most one acting master, every acting leader justified by
// acknowledgements or confirmations the network really delivered, terms
// persisted before they are sent and never decreasing; then liveness within
// a bound after the heal, the highest live id after a leader crash, and no
// deposition by the returning master. A failing seed prints its trace;
// rerun one with -election.seed=N. bully_test.go holds the table tests;
// FuzzNode feeds one master arbitrary input. golden_test.go runs the
// script testdata/election.txt (start, crashes, restarts, confirmations,
// a partition, forged messages) on a network without chance and compares
// every decision with testdata/election.golden, the readable record of a
// whole sequence (-update rewrites it).
package election
