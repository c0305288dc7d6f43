// Package chaos is Wololo's crash harness, `wololo chaos local`: it starts
// the topology as OS processes (services/roles/local) on a fresh data directory,
// submits one job with the client library, and meanwhile SIGKILLs randomly
// chosen processes at random moments — every kind of process, some while
// the files upload, some after the upload finished while the shards
// finish and the results flush — and lets the local runner restart them.
// It passes only if all four outputs are byte-equal to the reference
// evaluator's answers on the same files, worked out before the job starts.
//
// Some kills also lose their victim's disk (Options.DiskLosses, a tenth of
// the kills by default; local.Cluster.LoseDisk, and for containers
// dockerTarget.LoseDisk, which empties the volume through its directory on
// this machine): a gateway or worker is SIGKILLed and restarted on an
// empty data directory, as a process brought back on a new node would be.
// The gateway then rebuilds a lost shard alone from the batches it kept,
// or runs a job whose input was all in again from the input it kept
// (Job.rebuilds, Report.Replays); otherwise the job is lost
// (Job.state_lost, or gone from a gateway that lost its store), and the
// client submits it again from its files (client.SubmitOptions.Rebuilds,
// one per lost disk at most); the outputs are still compared byte for
// byte. Masters never lose theirs: the harness's masters restart the
// others. Which kills those are comes from a generator of their own, so a
// seed kills the same instances in the same order with or without them.
//
// The job may be one of SQL queries of its own instead of the four default ones
// (Options.Queries; --query NAME=FILE.sql, --sql for the four defaults as
// SQL and the user queries embedded from sql/): then every NAME.csv is
// compared, a default query's (q1..q4 with the text of queries/NAME.sql)
// with the reference, any other with the SQL engine's answer in this
// process on the same files and the topology's tasks (sqlops.Answer, which
// the end-to-end tests use too).
//
// With --standing (Options.Standing, ElectionOptions.Standing; every
// mode) the job is a standing one (docs/standing.md): the input cut into
// epochs at record boundaries (split.go), submitted --standing, appended
// and closed through the client package, the kills during the upload
// spread over the epochs, and every version compared byte for byte with
// the answers over its epochs' rows (standing.go). Such a run loses
// disks too: a worker's lost store makes the gateway run the job again
// from its copies of the epochs; a gateway's takes the copies and the job
// with it, and the harness submits the job again and appends every epoch
// again, as a client would (Report.Rebuilds says so).
//
// The schedule is seeded: the same seed kills the same instances in the
// same order (the moments depend on timing). To make N kills fit in a job
// on a small dataset, the client reaches the gateway through a shaping
// proxy that cuts the upload into small frames and paces it (see shaper);
// the proxy forwards every other call unchanged.
//
// `wololo chaos election` (Election) aims at the masters instead: while a
// job runs it SIGKILLs the leading master (found through the masters'
// Status) again and again, sometimes together with a second master,
// sometimes as soon as the masters agree on it, and times each failover
// from the kill until every master that answers names the same new leader
// and that leader says it leads and acts. Before each kill every master is
// running again (restarted by the new leader). Two sources check the
// election's promises: a poller asks every master's Status every 50 ms and
// records which ids led and acted in each term, and after the run
// CheckMasterLogs reads every master's log — the "acting started" and
// "acting stopped" lines, and the local runner's exit and start markers
// that end an interval when a master dies — and flags two ids acting in
// one term, two ids acting at the same time, or two ids claiming one term.
// It prints p50, p99 and the maximum failover (against a 3 s target that
// does not fail the run) and fails on any violation, a failover that never
// completed, a master that never came back or a wrong job result.
//
// The log check reads structured data only: the masters' hclog JSON lines,
// decoded with encoding/json by message and keys (id, term, role), and the
// runner's start and exit markers. A master logs text unless given
// --log-json; the tool starts its masters with it (local.Options.MasterArgs,
// the gateway and the shards keep text), and the compose file gives it to the
// masters of a Docker deployment, read through `docker logs`. That is the
// smaller change: the flag existed, `wololo local` keeps the text logs
// people read in DIR/<instance>.log, and the check stops depending on
// hclog's text layout, which is meant for eyes, not parsers. Status alone
// would not do: a poll every 50 ms cannot tell when an interval began or
// ended, nor see one shorter than the poll.
//
// `wololo chaos docker` and `wololo chaos swarm` (Docker, Swarm) run the
// same job and schedule against a deployed compose project or a swarm stack
// on this one-node swarm: containers SIGKILLed and one paused through the
// Docker Engine API, found by the deployment's labels (of a swarm stack's
// instance, its running task's container; its log is all its tasks'
// containers' logs), and `chaos election --docker|--swarm` aims at their
// masters. They start nothing: the masters do every restart (on a swarm,
// by forced service updates).
//
// What it may not touch: it signals only processes of the cluster it
// started (through local.Cluster), writes only its own temporary data
// directory and the output directory it is given, and uses the system only
// through its public surfaces (the binary's flags, the client library, the
// JobService). It adds no recovery logic of its own: a run passes because
// the system recovered, or it fails and says where the logs are.
package chaos
