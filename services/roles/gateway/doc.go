// Package gateway is the one public endpoint of a Wololo deployment. It
// implements JobService: it creates jobs after checking both files' headers,
// takes each file's upload as raw CSV bytes, parses and validates the rows
// (skipping and counting malformed ones) and hands them to the job's plan
// (plan.go), whose scans and exchanges shard them onto the plan's channels
// through the channel protocol. It is also where the plan ends: its stage
// runtime runs the gateway task's part of the plan (the final aggregates,
// sorts and sinks), whose result files clients fetch with GetResults.
//
// A job is of the four default queries (queries/, results q1.csv..q4.csv)
// when the client gives none, or of the client's own SQL queries
// (CreateJobRequest.queries, queries.go): checked against --max-queries and
// --max-query-bytes, compiled against the job's two headers and planned on
// the deployment's tasks (services/dataflow/sql/sqljob) before the job
// exists, refused with InvalidArgument naming the query, the construct and
// its line:column. Its record keeps the queries and the physical plan, which
// IntroduceJob carries to every process and PlanOf hands to the gateway's
// own stage runtime; its results are NAME.csv of each query. A resume with
// other queries is refused as one with other files is.
//
// A job of queries may have extra tables besides the two files
// (CreateJobRequest.tables, tables.go: any CSV file with a header row,
// table NAME, checked against --max-tables, its header and size counted
// as the files' are, compiled into the queries' catalog), uploaded by
// name (UploadStart.table) into the plan's Source of that table. A job's
// inputs are one list, job.files: the two files at their schema.File
// index, then the tables in order, each with its input (name, table,
// store key "table/NAME", counter label). One list rather than the two
// files and a map of tables: the upload, its records and rejects in the
// store, the reports, the quotas and the resume checks are the same code
// for a file and a table. The job runs once every file and table is in.
//
// A job of tables only (no matches.csv, no match_players.csv: the
// CreateJob's two headers unset) keeps the list as it is: each absent
// file is an input with no columns and no bytes (an empty FileRecord),
// done from the job's creation, that no plan scans (its queries are
// compiled without the file's table, sqljob.Spec.NoFiles, so one that
// reads it is refused) and no upload may name. Rather than a list of
// the inputs a job has, so that the indices of the inputs (the store's
// keys, the retained copies a rebuild replays, a standing job's epochs)
// stay those of every job, and the upload, the resume checks, the quotas
// and the rebuild need no second case: an absent file is the table an
// append leaves out (standing.go), complete and empty. Only the view
// leaves it out of the job's report (tables.go).
//
// An upload is acknowledged by byte offset, and only at record boundaries
// after the rows up to there are committed, so a client whose stream breaks
// resumes by re-sending its file from the last acknowledged offset.
//
// Malformed records are skipped, counted, and the first 1000 of each file
// kept (offset, reason, first 80 bytes: schema.Reject). Each upload commit
// records, with its offset and counts, only the rejects it found
// (rejects/FILE/N), so the list is written once and a commit lost to a
// crash is parsed and written again, never twice. A file more malformed
// than its job's --max-malformed share (schema.MalformedLimit, set per job
// by the client, the gateway's flag otherwise) fails its job at the end of
// its upload, in the commit that ends the file: the share is only known
// there, and a gateway killed around it either parses the end again or
// knows the job failed. The rejects are listed in the job's report once it
// is over, not in every progress report.
//
// A job belongs to the client that created it: Config.Identify names each
// JobService caller (the name of its client certificate; the anonymous ""
// for a gateway run with --insecure). The client knows its job by the name
// it chose or was given; the processes and the store know it by an internal id,
// a fresh random one per job (records written before owners use the name).
// Three reasons for keeping the two apart: two clients may both call a job
// "nightly"; a name can never reach another client's job; and a name used
// again after its job was deleted (and tombstoned in every process) names
// a new job. A job also records each file's size and fingerprint, and a
// resume with other files is refused (sameFiles), never mixed in. lookup is the one place that finds a
// client's job; anyone else's is NotFound with the message of a job that
// does not exist, so a job's existence does not leak either; ListJobs
// lists the caller's own jobs (ownedBy), and nobody else's. The quotas
// per client (unfinished jobs, held jobs, bytes per job, bytes in flight)
// are decided in one pure function (Limits.admission), before anything is
// stored.
//
// Compiling a job's queries takes CPU that grows with them, so CreateJob
// calls (each compiles its queries, the default ones when it gives none) run within
// compile slots (compiles.go): at most --client-max-compiles (2) of one
// client at once, a call past it refused at once (ResourceExhausted naming
// the flag, never queued), and at most --max-compiles (GOMAXPROCS, at
// least 4) of all clients, a call past it waiting for a slot as long as
// its context allows, then refused naming that flag. So one client's
// flood of heavy queries takes at most two cores' worth, and another
// client's CreateJob, a Status or an upload is still answered. (A single
// compile is not bounded in time here; the SQL compiler bounds the
// expressions it takes.) Clients are told apart by Config.Identify: with
// --insecure every caller is the one client "".
//
// Sizes are claims of the client, and every sum of them (the two files of
// a job, a client's bytes in flight, the bytes an upload has received) is
// made with sumSizes, which reports an overflow instead of wrapping: two
// files declared as 2^63-1 bytes each would otherwise add up to -2 and
// pass every quota, and an upload's count would pass its declared size.
// A declared size over a quota is refused at CreateJob.
//
// Finished jobs count against their owner too: a client holds at most
// --client-max-held-jobs (64) jobs, finished ones included, a sixteenth of
// the --max-jobs (1024) a process holds, so that one client cannot fill the
// gateway's table (and then every receiver's) with jobs it never fetches.
// At that limit a new job drops the client's oldest finished job first, as
// DeleteJob would (its answers were there to fetch); if none of its jobs
// is finished the new one is refused. When the gateway is full
// (--max-jobs), a new job drops the oldest finished job of any client, the
// caller's or another's: 16 clients x 64 finished jobs would otherwise
// lock every new client out for the retention (24 h). Only unfinished
// jobs are never dropped; if every job is unfinished the new one is
// refused. Dropping rather than refusing keeps a client that never deletes
// (a script that only reads the answers) working, at the cost of the
// oldest answers.
//
// Answers are bounded too (answers.go). A done job's result files stay in
// the gateway's memory (and in its store, which holds every record's
// value in memory) until the job is deleted or dropped, so a job whose
// answers together pass --max-answer-bytes (256 MiB, one
// --max-held-bytes) fails with a reason naming the flag instead of being
// held, and the commit that records the failure replaces the store's copy
// of them with nothing. A client's done jobs hold at most
// --client-max-answer-bytes (1 GiB) of answers together: when a job's
// answers would pass it, the client's oldest finished jobs are dropped,
// as DeleteJob would, until they fit (never the new job, whose answers
// alone fit, and never another client's). Dropping rather than refusing
// the new answers, for the reasons the held-jobs limit drops: the new job
// is the one the client waits for and has paid its run already, refusing
// it would throw that away and keep answers the client has most likely
// fetched; and a client that never deletes (a script that only reads the
// answers) keeps working. A whole job rather than its answers alone: a
// done job without answers is of no use, and its tombstone frees the
// store's copy too. Each answer's rows are counted once (answersOf):
// when it comes in, with no lock held, or when a restarted gateway
// recovers it, before it serves; so a GetJob copies sixteen numbers at
// most, whatever the answers' size, and never waits behind a count.
//
// What a job stores of its headers is bounded, and the gateway's memory
// does not grow with it: each header row is at most --max-header-bytes
// (64 KiB; a real one is about 100 bytes), a fingerprint 64 bytes, a name
// 64; a job keeps in memory only where the required columns are (a few
// integers), and the names stay in its record in the store. The other way,
// reading headers from the store on demand, would save nothing here: the
// stores (segstore's index, the MemStore) hold every record's value in
// memory anyway. So the bound is the product of the limits: a client's
// headers take at most 64 jobs x 2 x 64 KiB = 8 MiB of the store, all
// clients' at most 1024 x 128 KiB = 128 MiB.
//
// The package is in these parts, each with one concern:
//
//   - introduce.go, the introductions above (Introducer, set by the node).
//   - compiles.go, the compile slots above.
//   - answers.go, the bounds on held answers above.
//   - jobs.go, the job domain: create (headers, id and quotas checked;
//     admission, the quotas as a pure decision; sizes.go, checked sums),
//     lookup (ownership), the upload
//     slots and committed offsets, results, retention; every durable fact a
//     protobuf record (job_record.proto) in the store (but for the few
//     plain ones: a failure's reason and time, deleted.go's). No gRPC.
//   - upload.go, the upload path: parse a chunk (the pure Ingest of
//     services/dataflow/ingest, its records handed to the plan's Source), commit
//     its rows with the new offset through the transport.Committer, then
//     acknowledge the offset. A failed commit uses up no sequence number.
//   - service.go, the JobService adapter; errors.go maps the domain's
//     errors to gRPC codes in one function (toStatus).
//   - rebuild.go, a lost job run again from its retained input: the new
//     run, the replay through the upload path, its recovery.
//   - deleted.go, the latest jobs deleted on purpose, remembered by name
//     in the store across restarts, so that their client hears why
//     (ErrDeleted) rather than that the job is gone (and submits it again).
//   - gateway.go, the Gateway itself: its Config and its lifecycle, Serve,
//     which sweeps abandoned jobs and drops deleted jobs everywhere, and
//     FailJob, which fails a job an instance found lost (a store wiped
//     under it: see transport): the reason is recorded and shown to the
//     client, uploads end, later results are ignored. Only the
//     topology's instances may fail a job (every one runs every job);
//     any other reporter is refused (PermissionDenied) and changes
//     nothing.
//   - counters.go, Counters: what the gateway counts for /metrics (jobs
//     created and how they ended, upload calls and what they committed),
//     an interface the node fills with services/ops/metrics.Gateway.
//   - cluster.go, ClusterJobs: every job, with its owner, state (named
//     by clusterview.JobStateOf) and upload progress, for the operators'
//     view of the deployment (services/ops/clusterview) and the job-state
//     gauge of /metrics; it is not client activity.
//
// Introductions. Every process keeps state only for jobs the gateway has
// introduced to it (StageService.IntroduceJob, durable there), so that an
// instance's key alone cannot make a process hold jobs that never were
// (each would take one of its --max-jobs until every real job stalled).
// The first upload of a job, before it commits anything, introduces the
// job to every other process and waits until each has recorded it
// (introduce.go); the other uploads of the job wait for that one. Why no
// legitimate stream can arrive before its job's introduction: the upload
// is a job's only source, so every batch of a job anywhere follows a
// commit of its upload (a process emits for a job only after applying a
// batch of it), which follows the introduction everywhere. Restarts
// change nothing: introductions are durable at the processes; a gateway
// that restarts before it finished introducing a job had sent nothing of
// it, and its first upload after the restart introduces the job again
// (an introduction is idempotent). The gateway is also a receiver, of the
// results: its job table, durable from CreateJob on, is its introduction
// (stage.Config.Known is Knows), so it takes results only of jobs it
// holds. A stream of a job never introduced is therefore refused outright
// (NOT_FOUND), not asked to retry: no ordering makes a legitimate one
// early, and a retryable refusal would only give a forger's streams a
// place to wait. A process that refuses an introduction for a limit
// (--max-jobs), because it has dropped the job or because it cannot run
// its plan fails the job with that reason, which its client sees,
// instead of the job waiting forever (or listed uploading for ever), and
// the job is dropped at every other process (those that took the
// introduction before another refused it keep nothing of it); the
// gateway keeps the failed job for its client, as any failed one. A sender whose
// stream is refused for a limit fails it (transport.Sender.OnFailed).
// CreateJob checks a job's plan as the processes do (checkPlanRuns)
// before the job exists, so a plan is refused there, with nothing
// stored, not at the first upload. What a process holds of a job it does not
// admit (state written before introductions existed; at the gateway, a
// job the table no longer has) is reaped when it recovers and by the
// stage runtime's periodic sweep. A store written before introductions
// existed has none, so the jobs in flight when a deployment is upgraded
// are reaped: upgrade with none running.
//
// Rebuilds (rebuild.go): a job that a process finds lost (its store wiped
// or replaced) is run again from the copy of its input the gateway keeps
// (Config.Inputs, inputlog) under a fresh internal id, without its client
// (one still uploading resumes into the new run); rebuild.go holds the
// argument that its answers stay exact. A job is run again at most
// Config.MaxRebuilds times (DefaultMaxRebuilds, 3); one more loss fails it
// as lost too often.
//
// Failure reasons. What a client is shown of a job's failure (Job.message,
// JobSummary.message, an upload's refusal, a rebuild's line) quotes
// processes' error texts, which may quote a peer or the job's input; it is
// cleaned where it enters a job (job.failLocked, with
// transport.CleanReason: one line of printable text, no terminal escape,
// no carriage return), so a reporter cannot write to a client's terminal.
//
// The gateway does not compute any query itself and touches no disk except
// through the transport Store and the directory of retained inputs
// (inputlog).
package gateway
