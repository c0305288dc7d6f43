// Package local is `wololo local`: the whole topology as separate OS
// processes on 127.0.0.1 — one `wololo gateway` and one `wololo worker
// --instance X` per instance, each with its own data directory DIR/X, its
// own log file DIR/X.log and an entry in the peers file DIR/peers.json.
// With Options.Masters the `wololo master` processes run as children too,
// and they alone restart what dies: the runner serves them the
// ProcessService (control.go) and starts a process only when a master asks.
// Without masters the runner restarts a child that dies itself (capped
// exponential backoff, crash-loop detection: services/base/backoff, the same
// as the masters'). The Cluster
// type is its library form, used by `wololo local run`, the crash harness
// (tools/chaos) and tests: it can signal, replace and list the processes.
//
// Child output goes to one append-only log file per instance rather than
// to the runner's terminal: thirteen interleaved streams are unreadable, a
// file outlives the run (the crash harness points at it on failure), and a
// child writes to it directly, so a slow or dead runner never blocks one.
// Each start and exit is marked in the file. With Options.LogJSON (`wololo
// local --log-json`) every child gets --log-json and the marks are JSON
// too, so that every line of the file is one JSON object. Options.Stdout additionally
// copies every line, prefixed with its instance, for `wololo local
// --follow`.
//
// One runner owns a data directory: it holds an flock on DIR/local.lock
// (its pid inside) until it stops, and a second runner on the directory is
// refused at once, naming the holder (lock.go says why an flock). Before
// any child starts, every port the cluster is to listen on is tried, and a
// port in use fails the start naming it; a child that still exits at start
// fails it at once too, with the port its log names. A process counts as
// an instance only when its Status answers with the instance's name and
// the pid of the process this runner started for it: another cluster
// answering on the same port is never taken for its own.
//
// What it may not touch: it talks to its children only through their
// command line, signals, the peers file and the gRPC Status service (to see
// that they are up); it never imports the node, stage, gateway or worker
// packages, so what it runs is exactly what a deployment runs. It writes
// only under its data directory, removes only files it made there (the
// ProcessService socket, after the lock says no other runner can have
// made it), and signals only processes it started.
// It runs a wololo binary built from this tree: every child gets --data and
// --peers.
package local
