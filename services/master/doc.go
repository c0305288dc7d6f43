// Package master is the supervising side of a Wololo deployment: the
// masters watch every process of the graph and the leading master restarts
// the ones that died, through a Runtime (OS processes owned by `wololo
// local`, or containers through the Docker Engine API).
//
// The deciding part is pure: a Supervisor is fed observations (is this
// instance's process alive, seen when) and the time, and says which
// instances to restart now, with backoff, and which are crash-looping. The
// Runtime adapters only list, start and signal processes; they decide
// nothing. Which master leads, and whether it may act at all, is the
// election package's business; this package never restarts anything on
// its own initiative.
//
// Detection. A process counts as dead when its runtime says it exited, or
// when it has not been seen alive for Timeout (default 2 s): the masters
// probe every process (gRPC health) rather than have processes report in,
// because a probe needs nothing from a process that is paused or wedged,
// and the runtime's own view (the container or process state) confirms an
// exit at once.
package master
