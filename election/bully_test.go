package election

import (
	"errors"
	"slices"
	"testing"
)

var three = []ID{1, 2, 3}

func newNode(t *testing.T, self ID, peers []ID, persisted Term) *Node {
	t.Helper()
	n, err := New(DefaultConfig(self, peers), persisted)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// ticks calls Tick k times and returns every message sent and the last
// output.
func ticks(n *Node, k int) (sent []Message, last Output) {
	for range k {
		last = n.Tick()
		sent = append(sent, last.Send...)
	}
	return sent, last
}

// leaderOfThree is master 3 of {1, 2, 3} after it listened, found nobody
// and took term 2 (the first term it owns).
func leaderOfThree(t *testing.T) *Node {
	t.Helper()
	n := newNode(t, 3, three, 0)
	sent, o := ticks(n, n.cfg.ListenTicks)
	if o.Role != RoleLeader || o.Term != 2 || o.Persist == nil || *o.Persist != 2 {
		t.Fatalf("after listening alone: %+v persist=%v", o.State, o.Persist)
	}
	if o.Acting {
		t.Fatal("acts before any COORDINATOR was acknowledged")
	}
	want := []Message{
		{Kind: KindCoordinator, From: 3, To: 1, Term: 2, Seq: 12},
		{Kind: KindCoordinator, From: 3, To: 2, Term: 2, Seq: 12},
	}
	if !slices.Equal(sent, want) {
		t.Fatalf("sent %v, want %v", sent, want)
	}
	return n
}

func hasMessage(sent []Message, want Message) bool { return slices.Contains(sent, want) }

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig(2, three)
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"no peers", func(c *Config) { c.Peers = nil }},
		{"self not a peer", func(c *Config) { c.Self = 4 }},
		{"zero id", func(c *Config) { c.Peers = []ID{0, 1, 2} }},
		{"duplicate id", func(c *Config) { c.Peers = []ID{1, 2, 2} }},
		{"no heartbeat", func(c *Config) { c.HeartbeatEvery = 0 }},
		{"lease not above heartbeat", func(c *Config) { c.LeaseTicks = c.HeartbeatEvery }},
		{"leader timeout not above lease", func(c *Config) { c.LeaderTimeout = c.LeaseTicks }},
		{"listen shorter than leader timeout", func(c *Config) { c.ListenTicks = c.LeaderTimeout - 1 }},
		{"no election timeout", func(c *Config) { c.ElectionTimeout = 0 }},
		{"no coordinator timeout", func(c *Config) { c.CoordinatorTimeout = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			c.Peers = slices.Clone(ok.Peers)
			tc.edit(&c)
			if err := c.Validate(); !errors.Is(err, ErrConfig) {
				t.Fatalf("Validate() = %v, want ErrConfig", err)
			}
			if _, err := New(c, 0); !errors.Is(err, ErrConfig) {
				t.Fatalf("New() = %v, want ErrConfig", err)
			}
		})
	}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
}

// Terms never collide: each master owns every len(Peers)-th term, and
// claims the next one it owns above everything it has seen.
func TestTermsAreOwned(t *testing.T) {
	for size := 1; size <= 7; size++ {
		peers := make([]ID, size)
		for i := range peers {
			peers[i] = ID(10 * (size - i)) // unsorted on purpose
		}
		for _, self := range peers {
			n := newNode(t, self, peers, 0)
			for after := Term(0); after < 40; after++ {
				next, ok := n.nextTerm(after)
				if !ok || next <= after || next > after+Term(size) || n.cfg.Owner(next) != self {
					t.Fatalf("size %d self %d: nextTerm(%d) = %d, owner %d", size, self, after, next, n.cfg.Owner(next))
				}
			}
		}
	}
	if _, ok := newNode(t, 1, three, 0).nextTerm(^Term(0) - 1); ok {
		t.Fatal("a term past 2^64 was claimed")
	}
}

// A COORDINATOR must be acknowledged (by a majority, the leader included)
// before the new leader acts, and a lease runs out without acknowledgements.
func TestCoordinatorAckBeforeActing(t *testing.T) {
	n := leaderOfThree(t)
	for _, tc := range []struct {
		name string
		m    Message
	}{
		{"older term", Message{Kind: KindCoordinatorAck, From: 1, To: 3, Term: 1, Seq: 12}},
		{"a tick not yet sent", Message{Kind: KindCoordinatorAck, From: 1, To: 3, Term: 2, Seq: 13}},
		{"addressed to another", Message{Kind: KindCoordinatorAck, From: 1, To: 2, Term: 2, Seq: 12}},
		{"unknown sender", Message{Kind: KindCoordinatorAck, From: 9, To: 3, Term: 2, Seq: 12}},
		{"from itself", Message{Kind: KindCoordinatorAck, From: 3, To: 3, Term: 2, Seq: 12}},
	} {
		if o := n.Receive(tc.m); o.Acting {
			t.Fatalf("acts on an acknowledgement of %s", tc.name)
		}
	}
	o := n.Receive(Message{Kind: KindCoordinatorAck, From: 1, To: 3, Term: 2, Seq: 12})
	if !o.Acting {
		t.Fatalf("a majority acknowledged but it does not act: %+v", o.State)
	}
	// The lease counts from when the COORDINATOR was sent (tick 12).
	_, o = ticks(n, n.cfg.LeaseTicks-1)
	if !o.Acting {
		t.Fatal("lease ended early")
	}
	if o = n.Tick(); o.Acting {
		t.Fatal("acts past its lease without fresh acknowledgements")
	}
	// A delayed acknowledgement of an old heartbeat does not revive it.
	if o = n.Receive(Message{Kind: KindHeartbeatAck, From: 2, To: 3, Term: 2, Seq: 12}); o.Acting {
		t.Fatal("a stale acknowledgement renewed the lease")
	}
	if o = n.Receive(Message{Kind: KindHeartbeatAck, From: 2, To: 3, Term: 2, Seq: 20}); !o.Acting {
		t.Fatal("a fresh acknowledgement did not renew the lease")
	}
}

// A leader steps down the moment it learns of a higher term, and stops
// acting before it acknowledges the new leader.
func TestHigherTermStepsDown(t *testing.T) {
	for _, tc := range []struct {
		name    string
		m       Message
		wantAck *Message
	}{
		{
			name:    "coordinator of a higher term",
			m:       Message{Kind: KindCoordinator, From: 1, To: 3, Term: 3, Seq: 7},
			wantAck: &Message{Kind: KindCoordinatorAck, From: 3, To: 1, Term: 3, Seq: 7},
		},
		{
			name:    "heartbeat of a higher term",
			m:       Message{Kind: KindHeartbeat, From: 1, To: 3, Term: 3, Seq: 7},
			wantAck: &Message{Kind: KindHeartbeatAck, From: 3, To: 1, Term: 3, Seq: 7},
		},
		{name: "refusal carrying a higher term", m: Message{Kind: KindHeartbeatAck, From: 2, To: 3, Term: 4, Seq: 14}},
		{name: "election from a master in a higher term", m: Message{Kind: KindElection, From: 1, To: 3, Term: 4, Seq: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := leaderOfThree(t)
			if o := n.Receive(Message{Kind: KindCoordinatorAck, From: 2, To: 3, Term: 2, Seq: 12}); !o.Acting {
				t.Fatal("not acting")
			}
			o := n.Receive(tc.m)
			if o.Acting || o.Role == RoleLeader {
				t.Fatalf("still leading after %s: %+v", tc.name, o.State)
			}
			if tc.wantAck != nil {
				if o.Persist == nil || *o.Persist != tc.wantAck.Term || !hasMessage(o.Send, *tc.wantAck) || o.Leader != tc.m.From {
					t.Fatalf("did not follow the new leader: %+v persist=%v send=%v", o.State, o.Persist, o.Send)
				}
			}
		})
	}
}

// A lone survivor acts only while every master it cannot reach is
// confirmed dead, and each confirmation lasts a lease.
func TestLoneSurvivorNeedsConfirmedDeaths(t *testing.T) {
	n := leaderOfThree(t)
	if o := n.ConfirmDead(1); o.Acting {
		t.Fatal("acts with master 2 unreachable and unconfirmed")
	}
	if o := n.ConfirmDead(2); !o.Acting {
		t.Fatal("both others confirmed dead, yet it does not act")
	}
	if o := n.ConfirmDead(3); !o.Acting {
		t.Fatal("confirming itself dead changed something")
	}
	_, o := ticks(n, n.cfg.LeaseTicks)
	if o.Acting {
		t.Fatal("acts on confirmations older than a lease")
	}
	n.ConfirmDead(1)
	if o = n.ConfirmDead(2); !o.Acting {
		t.Fatal("renewed confirmations, yet it does not act")
	}
	// Master 2 talks: it is alive after all (restarted), so its old
	// confirmation no longer counts.
	if o = n.Receive(Message{Kind: KindElection, From: 2, To: 3, Term: 0, Seq: 1}); o.Acting {
		t.Fatal("acts with master 2 alive and not acknowledging")
	}
}

// A follower acknowledges no other term while it is promised to its leader
// (LeaderTimeout after its last acknowledgement), and no one calls an
// election while the leader's heartbeats arrive.
func TestPromiseHoldsBackNewTerm(t *testing.T) {
	n := newNode(t, 1, three, 0)
	o := n.Receive(Message{Kind: KindCoordinator, From: 2, To: 1, Term: 1, Seq: 5})
	if o.Leader != 2 || o.Persist == nil || *o.Persist != 1 || !hasMessage(o.Send, Message{Kind: KindCoordinatorAck, From: 1, To: 2, Term: 1, Seq: 5}) {
		t.Fatalf("did not follow 2: %+v %v", o.State, o.Send)
	}
	// Master 3 (which lost 2) claims term 2. Master 1 hears 2 too: it keeps
	// following 2 and stays silent to 3, for as long as 2's heartbeats come.
	var lastAck int64
	for i := range 3 * n.cfg.LeaderTimeout {
		n.Tick()
		if i%2 == 0 {
			o = n.Receive(Message{Kind: KindHeartbeat, From: 2, To: 1, Term: 1, Seq: uint64(6 + i)})
			lastAck = n.now
		}
		o = n.Receive(Message{Kind: KindHeartbeat, From: 3, To: 1, Term: 2, Seq: uint64(i)})
		if o.Leader != 2 || o.Term != 1 || o.Role != RoleFollower || len(o.Send) > 0 || o.Persist != nil {
			t.Fatalf("tick %d: switched while promised to 2: %+v persist=%v send=%v", i, o.State, o.Persist, o.Send)
		}
	}
	// 2 falls silent: at the very tick the promise runs out, the newest of
	// 3's heartbeats that it held back is accepted (its Seq echoed), without
	// waiting for the next one.
	for i := range n.cfg.LeaderTimeout {
		held := uint64(100 + i - 1)
		if i == 0 {
			held = uint64(3*n.cfg.LeaderTimeout - 1)
		}
		ot := n.Tick()
		o = n.Receive(Message{Kind: KindHeartbeat, From: 3, To: 1, Term: 2, Seq: uint64(100 + i)})
		switched := ot.Persist != nil
		if want := n.now == lastAck+int64(n.cfg.LeaderTimeout); switched != want || o.Persist != nil {
			t.Fatalf("%d ticks after the last acknowledgement to 2: switched=%v: %+v", n.now-lastAck, switched, ot.State)
		}
		if switched && (ot.Leader != 3 || *ot.Persist != 2 || !slices.Equal(ot.Send, []Message{{Kind: KindHeartbeatAck, From: 1, To: 3, Term: 2, Seq: held}})) {
			t.Fatalf("did not follow 3 after the promise ran out: %+v send=%v", ot.State, ot.Send)
		}
	}
}

// A follower whose promised leader the runtime confirms dead acknowledges
// the newer leader it held back at once, and one with no newer leader in
// sight calls its election at once, not at the next tick.
func TestConfirmDeadActsAtOnce(t *testing.T) {
	following := func(t *testing.T, self ID) *Node {
		n := newNode(t, self, three, 0)
		ticks(n, n.cfg.ListenTicks)
		n.Receive(Message{Kind: KindCoordinator, From: 3, To: self, Term: 2, Seq: 1})
		return n
	}
	t.Run("held leader", func(t *testing.T) {
		n := following(t, 1)
		coord := Message{Kind: KindCoordinator, From: 2, To: 1, Term: 4, Seq: 7}
		if o := n.Receive(coord); o.Persist != nil || len(o.Send) > 0 || o.Leader != 3 {
			t.Fatalf("accepted term 4 while promised to 3: %+v %v", o.State, o.Send)
		}
		o := n.ConfirmDead(3)
		want := []Message{{Kind: KindCoordinatorAck, From: 1, To: 2, Term: 4, Seq: 7}}
		if o.Leader != 2 || o.Persist == nil || *o.Persist != 4 || !slices.Equal(o.Send, want) {
			t.Fatalf("confirmed dead: %+v persist=%v send=%v, want to follow 2 with %v", o.State, o.Persist, o.Send, want)
		}
	})
	t.Run("no leader", func(t *testing.T) {
		n := following(t, 2)
		o := n.ConfirmDead(3)
		if o.Role != RoleLeader || o.Persist == nil || *o.Persist != 4 {
			t.Fatalf("confirmed dead, nobody higher alive: %+v persist=%v, want to claim term 4 at once", o.State, o.Persist)
		}
	})
}

// A master that restarts keeps the promise it may have made just before:
// its own leader's term at once, any newer one only after LeaderTimeout.
func TestRestartKeepsPromise(t *testing.T) {
	n := newNode(t, 1, three, 1) // acknowledged term 1 (master 2's) before it stopped
	o := n.Receive(Message{Kind: KindHeartbeat, From: 3, To: 1, Term: 2, Seq: 50})
	if o.Persist != nil || len(o.Send) > 0 {
		t.Fatalf("acknowledged a newer term right after a restart: %v", o.Send)
	}
	o = n.Receive(Message{Kind: KindHeartbeat, From: 2, To: 1, Term: 1, Seq: 50})
	if o.Leader != 2 || len(o.Send) != 1 {
		t.Fatalf("did not rejoin its own term's leader: %+v %v", o.State, o.Send)
	}
	fresh := newNode(t, 1, three, 1)
	ticks(fresh, fresh.cfg.LeaderTimeout)
	if o = fresh.Receive(Message{Kind: KindHeartbeat, From: 3, To: 1, Term: 2, Seq: 60}); o.Leader != 3 || o.Persist == nil {
		t.Fatalf("did not follow the newer term after LeaderTimeout: %+v", o.State)
	}
	// A master that never acknowledged anything has nothing to keep, nor
	// has one whose persisted term is its own (a killed leader): it
	// acknowledges its successor at once.
	for _, tc := range []struct {
		name      string
		persisted Term
	}{
		{"first start", 0},
		{"own term", 3}, // term 3 is master 1's
	} {
		n := newNode(t, 1, three, tc.persisted)
		o := n.Receive(Message{Kind: KindHeartbeat, From: 3, To: 1, Term: 5, Seq: 60})
		if o.Leader != 3 || o.Persist == nil || *o.Persist != 5 || len(o.Send) != 1 || o.Send[0].Kind != KindHeartbeatAck || o.Send[0].Term != 5 {
			t.Fatalf("%s: held back: %+v persist=%v send=%v", tc.name, o.State, o.Persist, o.Send)
		}
	}
}

// How a master answers an ELECTION from a lower id.
func TestElectionAnswers(t *testing.T) {
	election := Message{Kind: KindElection, From: 1, To: 3, Term: 0, Seq: 4}
	alive := Message{Kind: KindAlive, From: 3, To: 1, Term: 0, Seq: 4}

	// Listening: say nothing (it cannot take over before it has listened;
	// an ALIVE would hold the caller for CoordinatorTimeout), and do not
	// call an election yet.
	n := newNode(t, 3, three, 0)
	if o := n.Receive(election); len(o.Send) > 0 || o.Role != RoleFollower {
		t.Fatalf("listening: %+v %v", o.State, o.Send)
	}
	// Following a healthy leader: answer only.
	n = newNode(t, 3, three, 0)
	n.Receive(Message{Kind: KindCoordinator, From: 2, To: 3, Term: 1, Seq: 1})
	for i := range 2 * n.cfg.ListenTicks {
		n.Tick()
		n.Receive(Message{Kind: KindHeartbeat, From: 2, To: 3, Term: 1, Seq: uint64(2 + i)})
	}
	alive.Term = 1
	if o := n.Receive(election); !slices.Equal(o.Send, []Message{alive}) || o.Role != RoleFollower || o.Leader != 2 {
		t.Fatalf("following: %+v %v", o.State, o.Send)
	}
	// Leading: answer and announce itself again.
	n = leaderOfThree(t)
	o := n.Receive(election)
	alive.Term = 2
	if len(o.Send) != 2 || o.Send[0] != alive || o.Send[1].Kind != KindCoordinator || o.Send[1].Term != 2 {
		t.Fatalf("leading: %v", o.Send)
	}
	// An election from a higher id is not for us.
	if o := n.Receive(Message{Kind: KindElection, From: 3, To: 2, Term: 0, Seq: 1}); len(o.Send) > 0 {
		t.Fatalf("answered a misaddressed election: %v", o.Send)
	}
}

// A candidate that heard no ALIVE bullies a lower id that claimed a term
// meanwhile; one that heard ALIVE accepts whoever leads.
func TestCandidateBullies(t *testing.T) {
	n := newNode(t, 2, three, 0)
	sent, o := ticks(n, n.cfg.ListenTicks)
	if o.Role != RoleCandidate || !slices.Equal(sent, []Message{{Kind: KindElection, From: 2, To: 3, Term: 0, Seq: 1}}) {
		t.Fatalf("did not call an election: %+v %v", o.State, sent)
	}
	if o = n.Receive(Message{Kind: KindCoordinator, From: 1, To: 2, Term: 3, Seq: 1}); o.Role != RoleCandidate || len(o.Send) > 0 {
		t.Fatalf("joined a lower id while electing: %+v %v", o.State, o.Send)
	}
	_, o = ticks(n, n.cfg.ElectionTimeout)
	if o.Role != RoleLeader || o.Term != 4 {
		t.Fatalf("no ALIVE came, yet it did not take a term above 3: %+v", o.State)
	}

	n = newNode(t, 2, three, 0)
	ticks(n, n.cfg.ListenTicks)
	n.Receive(Message{Kind: KindAlive, From: 3, To: 2, Term: 0, Seq: 1})
	if o = n.Receive(Message{Kind: KindCoordinator, From: 1, To: 2, Term: 3, Seq: 1}); o.Role != RoleFollower || o.Leader != 1 {
		t.Fatalf("3 answered, so 3 decides; yet 2 did not follow 1: %+v", o.State)
	}

	// A COORDINATOR that names a term its sender does not own is ignored.
	n = newNode(t, 2, three, 0)
	if o = n.Receive(Message{Kind: KindCoordinator, From: 1, To: 2, Term: 2, Seq: 1}); o.Leader != None || len(o.Send) > 0 {
		t.Fatalf("followed 1 in term 2, which is 3's: %+v", o.State)
	}
}

// The cluster-level transitions, through the simulated network (with its
// invariants checked after every event).
func TestScenarios(t *testing.T) {
	cfg := DefaultConfig(0, nil)
	agree := func(t *testing.T, c *cluster, wantLeader ID) Term {
		t.Helper()
		_, leader, term, err := c.converge(100, 2*cfg.LeaderTimeout)
		if err != nil {
			t.Fatal(err)
		}
		if wantLeader != None && leader != wantLeader {
			t.Fatalf("%d leads, want %d: %s", leader, wantLeader, c.describe())
		}
		return term
	}

	t.Run("leader dies, highest live takes over", func(t *testing.T) {
		for _, confirm := range []float64{0, 1} {
			c := newCluster(1, cfg, []ID{1, 2, 3, 4, 5})
			c.confirmP = confirm
			agree(t, c, 5)
			c.crash(c.index(5))
			agree(t, c, 4)
			c.crash(c.index(4))
			agree(t, c, 3)
		}
	})

	t.Run("returning higher id listens and does not depose", func(t *testing.T) {
		c := newCluster(2, cfg, three)
		agree(t, c, 3)
		c.crash(c.index(3))
		term := agree(t, c, 2)
		c.start(c.index(3))
		for range 5 * cfg.ListenTicks {
			if err := c.run(1); err != nil {
				t.Fatal(err)
			}
			if st := c.ms[c.index(2)].state; st.Role != RoleLeader || st.Term != term || !st.Acting {
				t.Fatalf("2 was deposed: %s", c.describe())
			}
		}
		if got := agree(t, c, 2); got != term {
			t.Fatalf("term changed from %d to %d", term, got)
		}
	})

	t.Run("minority side of a partition never acts", func(t *testing.T) {
		c := newCluster(3, cfg, []ID{1, 2, 3, 4, 5})
		agree(t, c, 5)
		c.partition([]ID{4, 5}, []ID{1, 2, 3})
		for s := range 10 * cfg.LeaderTimeout {
			if err := c.run(1); err != nil {
				t.Fatal(err)
			}
			for _, id := range []ID{4, 5} {
				if c.ms[c.index(id)].state.Acting && s > cfg.LeaseTicks {
					t.Fatalf("step %d: %d acts in the minority", s, id)
				}
			}
		}
		if st := c.ms[c.index(3)].state; st.Role != RoleLeader || !st.Acting {
			t.Fatalf("the majority side has no acting leader: %s", c.describe())
		}
		if st := c.ms[c.index(5)].state; st.Role != RoleLeader {
			t.Fatalf("5 should still lead (idle) its own term: %s", c.describe())
		}
		c.heal()
		agree(t, c, 3) // the majority's leader has the higher term
	})

	t.Run("lone survivor acts only on confirmed deaths", func(t *testing.T) {
		c := newCluster(4, cfg, three)
		agree(t, c, 3)
		c.crash(c.index(1))
		c.crash(c.index(2))
		if err := c.run(cfg.LeaseTicks + 1); err != nil {
			t.Fatal(err)
		}
		for range 50 {
			if err := c.run(1); err != nil {
				t.Fatal(err)
			}
			if c.ms[c.index(3)].state.Acting {
				t.Fatal("acts with no majority and no confirmations")
			}
		}
		c.confirmP = 1
		if err := c.run(2); err != nil {
			t.Fatal(err)
		}
		if !c.ms[c.index(3)].state.Acting {
			t.Fatal("does not act with both others confirmed dead")
		}
		// The survivor restarts one of them (as a leader would): the
		// confirmations stop, and it acts again once the returned master
		// has listened and acknowledged.
		c.confirmP = 0
		c.start(c.index(2))
		agree(t, c, 3)
	})
}
