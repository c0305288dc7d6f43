// Package driver runs the election state machine of package election in a
// real process: it is the thin adapter that the election's package doc
// describes. An Elector
//
//   - counts ticks from the monotonic clock and feeds every one that has
//     passed to the Node before it answers Acting or State (a master that
//     was paused catches up first, so it never acts on a lease that ran out
//     while it slept);
//   - hands the Node the messages other masters sent (Receive) and the
//     deaths the runtime saw (ConfirmDead);
//   - carries out each Output in the order the election requires: Save the
//     term through a TermStore, then take the new State (logging every
//     change: "election state", "acting started", "acting stopped", the
//     last with stopped-at, the moment its tick was due, when a tick ended
//     acting), then queue the messages;
//   - sends them through Config.Send from one goroutine per peer, each
//     with a small bounded queue, so a dead or slow peer delays no one and
//     an overflow is dropped (the algorithm repeats what matters);
//   - stops, and makes Serve return the error, when a term cannot be saved.
//
// Its lifecycle is Serve(ctx) error: it runs until ctx ends.
//
//	e, err := driver.New(driver.Config{Election: cfg, Terms: store, Send: send, Log: log})
//	go e.Serve(ctx)
//	e.Receive(msg)      // from the transport
//	e.ConfirmDead(id)   // from the runtime
//	if e.Acting() { ... restart something ... }
//
// What it may not touch: it imports only package election, the standard
// library and hclog. No gRPC, no protobuf, no files, no runtime: the term
// goes through the TermStore it is given (services/roles/master has the
// fsync'ing file; MemTermStore is for tests), messages through the Send
// function (services/roles/master maps them to ElectionService/Deliver), and
// who is dead is told to it. A test in this package checks the imports.
//
// Why it is not in package election: election is a pure, deterministic
// state machine, which is what lets its simulation run thousands of seeded
// schedules and check every invariant after every event. Goroutines, a
// clock and I/O would end that. Why it is not in services/roles/master: it is
// the same for any transport and any store, and on its own it can be
// tested with an in-memory network and a fake clock (driver_test.go):
// three Electors elect, persist, fail over, and a paused leader stops
// acting at the very next question.
package driver
