// Package master is the supervising side of a Wololo deployment: the
// masters watch every gateway and shard process and the leading master restarts
// the ones that died, through a Runtime (OS processes owned by `wololo
// local`, containers through the Docker Engine API, or the services of a
// Docker Swarm stack through a manager's service and task API).
//
// The deciding part is pure: a Supervisor is fed observations (is this
// instance's process alive, seen when) and the time, and says which
// instances to restart now, with backoff (services/base/backoff, shared with
// the local runner), and which are crash-looping. The Runtime adapters
// only list, start and signal processes; they decide nothing, and the
// conformance suite in runtimetest checks each against the contract the
// Runtime interface states, on real processes. Which
// master leads, and whether it may act at all, is the election package's
// business; this package never restarts anything on its own initiative.
//
// Detection. A process counts as dead when its runtime says it exited, or
// when it has not been seen alive for Policy.Timeout (1.75 s by default,
// which with the 250 ms rounds detects a silent process within 2 s of its
// last answer; `wololo master --timeout` sets that bound): the masters
// probe every process (gRPC health) rather than have processes report in,
// because a probe needs nothing from a process that is paused or wedged,
// and the runtime's own view (the container or process state) confirms an
// exit at once.
//
// Recovery. A gateway or shard process starting on its store answers its probes
// before it serves: health NOT_SERVING, and the health service
// "wololo.recovering" SERVING (services/wire/rpc), while it loads the
// store and replays its operators' state logs, which may take longer than
// Timeout. The probe asks "" and, when that is not SERVING, the recovering
// name (Answer: Serving, Recovering or NoAnswer). A recovering process is
// alive, not silent, for Policy.RecoveryGrace (a minute by default,
// `wololo master --recovery-grace`) from its first recovering answer; past
// that it is taken as stuck, killed and restarted with the reason
// "recovering for longer than the grace" (ReasonRecoveringTooLong). One
// that stops answering while it recovers is silent as any other, and
// Status shows a recovering process's state as "recovering".
//
// # The master process
//
// `wololo master --id N` (Run, Master) puts the pieces together. Every
// master runs the same three things:
//
//   - an election/driver Elector: the election.Node driven by a ticker
//     that counts ticks from the monotonic clock (a master that was paused
//     catches up every missed tick before it answers Acting), the term
//     persisted before any message that depends on it is sent, and one
//     sender goroutine per other master with a small bounded queue, so a
//     dead peer delays no one. This package gives it its two seams: the
//     term file DATA/term (termfile.go: written atomically and fsynced),
//     and the transport, one-way ElectionService/Deliver calls over a
//     rpc.Pool (master-N resolved by name on every call), with the
//     election's message kinds mapped to the proto's one by one
//     (electionpb.go: an unknown kind is refused, never cast);
//   - a Loop probing every gateway and shard process and every other master; it feeds
//     the election with each master the runtime reports exited
//     (ConfirmDead, every round, so the confirmation never lapses while
//     that master is down), and restarts only while the Elector says
//     Acting, asking again right before each restart;
//   - a gRPC server: ElectionService, Status (the election and every
//     supervised process) and health, so masters probe each other exactly
//     like they probe the gateway and the shards;
//   - with Config.Admin, an admin HTTP listener serving /metrics
//     (metrics.go): the election's state read at scrape time, the restarts
//     it did by process and reason class, and the failovers that made it
//     the acting leader.
//
// Followers probe too, so a new leader starts with fresh observations
// instead of a blank slate; still, a master that starts to act gives every
// process Timeout to answer its own probes before it calls one silent
// (after a partition, or its own restart, it may have seen nothing at
// all), while an exit the runtime reports is restarted at once. The lines "acting started" and "acting
// stopped" (with id and term) mark the intervals in which a master may
// restart anything; the election chaos tool checks them.
package master
