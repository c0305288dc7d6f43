// Package transport is Wololo's channel protocol: exactly-once delivery of
// numbered batches from one sender instance to one receiver instance over
// a gRPC bidirectional stream, without a broker.
//
// A channel is one job, one logical stream, one sender, one receiver
// (ChannelID). The rules (docs/architecture.md, "Crashes: what survives a SIGKILL"):
//
//   - The sender numbers its batches 1, 2, 3, ... and keeps every batch in its
//     Outbox until the receiver acknowledges it; the last batch carries EOF.
//   - The receiver applies batch n only if n is its watermark plus one; a
//     duplicate (n at or below the watermark) is acknowledged and dropped.
//     Applying is one Store.Commit: new watermark, operator state change and
//     the batches it emits, together. Only after Commit returns is n
//     acknowledged.
//   - Nothing follows an EOF. The commit that applies a channel's EOF marks
//     the channel ended (Step.Ended, an EndedRecord beside the watermark);
//     the Inbox keeps it, and Committer.Restore gives it back after a
//     restart. A number past the watermark of an ended channel, a row
//     batch or a second EOF, is refused (ErrAfterEOF, FAILED_PRECONDITION)
//     before anything of it is journaled or acknowledged; a resend at or
//     below the watermark is still a duplicate. A sender numbers nothing
//     after its EOF, so only a forger meets the refusal, and the argument
//     above is unchanged: the ended mark moves only with a durable commit.
//   - A receiver takes streams only of jobs the gateway introduced to it
//     (IntroduceJob: durable at the receiver before the gateway sends any
//     batch of the job; see services/roles/gateway for why that ordering leaves
//     no window). Any other job is refused (ErrUnknownJob, NOT_FOUND with
//     the ErrorInfo reason JOB_NOT_INTRODUCED) before anything is created
//     for it, so an instance key alone creates no job anywhere. A sender
//     of a job meets that refusal only when its receiver lost its
//     store, and reports it as lost state (below); a refusal for a limit
//     (ErrTooManyJobs, RESOURCE_EXHAUSTED) fails the job the same way, since
//     no retry would get it through.
//   - On (re)connect the receiver answers Open with Hello{watermark} and the
//     sender resends everything above it. gRPC keeps one stream in order, so
//     a watermark per channel is all the receiver needs.
//   - Every process has an incarnation that grows with each start, on its
//     store and across stores (see Incarnations below). A starting sender
//     Announces it to every receiver before it resends anything; a receiver
//     refuses streams from an incarnation older than the newest it has seen
//     of that sender and ends the ones already open, so a paused zombie
//     that wakes up learns at once that it was replaced (Sender.Serve
//     returns) and stops. The other way round, Hello carries the receiver's
//     incarnation and a link refuses an older receiver than one it has
//     talked to, and ends its stream when the receiver's address changes
//     (it was replaced elsewhere).
//   - A store wiped or replaced under a running job is detected, not waited
//     for. Both ends keep their numbers durably, so on every Hello the
//     sender can tell (Outbox.CheckHello): a receiver watermark below the
//     highest sequence number it acknowledged means the receiver lost
//     applied batches, which the sender has trimmed and cannot resend (it
//     would otherwise send N+1.. into a "sequence gap" forever); one above
//     the last number the sender handed out means the sender lost batches
//     it sent (numbering again from 1, its batches would be dropped as
//     duplicates). Either is ErrStateLost: the link ends and reports it
//     (Sender.OnFailed), and the process tells the gateway (StageService
//     FailJob, taken by Server.OnFailJob), which fails the job with the
//     reason its client sees, marked as lost state (JobFailure.StateLost:
//     a client attached to the job submits it again, under a new job id).
//     A link whose channel is complete has ended,
//     so a receiver's new incarnation (Announce) gets a check link on each
//     such channel: one Hello, then it ends if there is nothing to send.
//     This is the smallest change that covers it: Hello already carries
//     the receiver's watermark and the sender already keeps acked and
//     reserved, so detection needs no new frame; only the report to the
//     gateway needed a call. A receiver could not tell alone: a gap is
//     normal while an older stream's batches are still queued. Incarnation
//     fencing comes first, so a zombie's stale watermark is refused before
//     it is checked.
//   - A lost receiver can be sent its channels again where the sender
//     kept them. An Outbox records the acknowledgements of a job it
//     retains (Retain: the gateway's batch jobs, where it keeps their
//     input) with Store.Acknowledge instead of Trim: the batches stay on
//     disk, out of memory and of Load, until the job is released
//     (Release).
//     Sender.Rewind then sends a receiver's channels of a job again from
//     batch 1, read back from the store a few at a time, each from where
//     the receiver's Hello says, and the batches committed while the
//     receiver catches up are read back too (they take no room: what
//     feeds the channel does not wait); a link that reported the loss
//     goes on if its channel was rewound while the report was taken. The
//     other way round, a receiver may vouch for a sender rebuilt from
//     nothing that numbers the same batches again from 1 (its Server
//     asks VouchFor's function, and sets Hello.sender_rebuilt): the sender
//     takes a watermark above what it numbered as acknowledged instead of
//     finding its own state lost.
//     Both are mechanisms; when they are exact is the caller's to decide
//     (services/roles/gateway/rebuild.go, "A lost shard alone").
//   - A job a client has finished with is dropped everywhere (DropJob): the
//     Store keeps a tombstone, and a late stream of the job is refused with
//     ErrJobDropped, on which the sender drops the channel too.
//   - The Outbox is bounded: the stage runtime waits for room before it
//     applies more input, which pushes back all the way to the upload.
//
// # Incarnations
//
// An incarnation is a start of an instance, numbered so that a later start
// has a higher number than every earlier one, whatever store it runs on: a
// process takes NextIncarnation(ClockIncarnation(now)) from its store, one
// above the last number the store handed out or its start's Unix time in
// milliseconds, whichever is higher. The store keeps the number it handed
// out (durably, before the process uses it), so on one store numbers
// increase even when the clock goes back; and a start on an empty store (a
// wiped disk, a new volume), which counting alone would number 1 again,
// still comes out above the starts before it on other stores, since those
// were at most their own, earlier, clock (or a few counts above it).
//
// That is what makes a wiped process visible. Its neighbours see its
// announcement as a newer incarnation: a receiver's fence takes it, and a
// Sender starts a check link on every channel to it (SeeReceiver), so a
// channel acknowledged whole, EOF included, which has no link running, is
// checked as well and its loss reported (ErrStateLost), instead of the job
// waiting for a process that no sender would ever talk to again. Numbered
// from 1, the announcement was no news to them (or was refused as older).
//
// Fencing is unchanged: a number below the newest known of an instance is
// refused (ErrStaleIncarnation). A paused zombie keeps the number it
// started with, which is below its replacement's; so it is refused as a
// sender, and its acknowledgements as a receiver no longer count. Nor does
// exactly-once rest on the numbers being right: watermarks and the outbox
// (CheckHello) decide what is applied and what was lost; incarnations only
// fence zombies and trigger the checks.
//
// A claim is bounded as well, before it is recorded (IncarnationCeiling):
// at most IncarnationClockMargin (an hour) ahead of the checking process's
// own clock, whatever the claims taken before it. The counted numbers of
// old, a step of up to 2^20 above the newest known, refused every
// clock-based number (milliseconds since 1970 are far more than 2^20 above
// a counted 5); the clock takes them, while stopping a forged or buggy
// claim from locking an instance out for good: a claim at the ceiling
// fences the real instance only until its clock passes the claim, since
// its next start is floored by that clock, so for the margin at most. For
// a while the bound was the higher of the clock term and that step above
// the newest known, so that a store that counted past its clock could
// still start; but then each claim taken raised the next one's bound, and
// eleven announcements made with one instance's key fenced it for 3.9
// hours. The bound is now the clock's alone. (Only the instance's own
// certificate may make a claim at all, with RequireIdentity.) A server
// bounds senders' claims (Open, Announce) this way, a Sender its
// receivers' (Hello); the server logs the first claim ahead of its clock
// of each instance, not every one.
//
// A fence is visible, not only logged: a Server lists the senders whose
// last claim it refused as older than the newest it saw (Server.Fenced,
// which a process shows in its Status: GetResponse.fenced), whether a
// zombie or the real instance after a forged claim above it, until a
// claim at the newest is taken again.
//
// What this costs: clocks must agree within the margin (a peer whose clock
// runs more than an hour ahead is refused, ErrInvalid, until they agree);
// a store whose numbers ran more than the margin ahead of its peers'
// clocks (its clock was that far ahead, then set back) is refused until
// their clocks pass its last number; and a start on an empty store whose
// clock reads earlier than the start it replaces is refused as older (a
// clock stepped back across a disk swap): the process stops as replaced,
// and its supervisor's next starts are refused the same way until its
// clock passes the older number. All are refusals, never a zombie let in.
// And a process of a build from before the clock rule bounds claims by the
// step alone, so it refuses clock-based numbers: a cluster is upgraded
// whole, not one process at a time.
//
// Other designs were weighed. A random start id beside the counter would
// show a sender that its receiver restarted, but not which of two starts
// is the newer, so it could not fence a zombie. Starting above the newest
// number the peers know (asking them first) needs every peer reachable
// before a process may start, and a peer that restarted itself has
// forgotten (the fence is kept in memory). The clock needs neither, and a
// wrong clock costs a refusal, never safety.
//
// Durability is the Store's: Commit is atomic and synced before the batch
// is acknowledged; Load gives a restarted process its watermarks and
// outbox back, and ReadState each job's state log, an entry at a time, so
// that a replay holds one entry of a log however long (transport/segstore, the processes' default, and
// transport/durable, on Pebble, are the implementations; MemStore is the
// in-memory model they are all tested against in storetest).
// A process runs on its store through a FailStop: the first failed write
// (a full disk, an I/O error) is kept, every later one is refused, and the
// process stops, to be restarted from what the store holds.
//
// The exactly-once step is one type, Committer: it numbers a step's output
// batches, commits them with the input watermarks and the state change,
// then advances the Inbox, publishes to the Sender and acknowledges; when the
// commit fails it gives the numbers back and acknowledges nothing. The
// gateway's upload and every stage runtime go through it, and neither
// touches the Outbox's numbering.
//
// Who speaks is checked before what is said, but not here: this package
// neither dials nor reads certificates. A Sender reaches its receivers
// through Conns (services/wire/rpc.Pool in a process: every connection TLS,
// the peer verified under the instance's name), and a Server with
// RequireIdentity takes a stream's or an announcement's sender only from
// the instance whose certificate it is, an IntroduceJob or a DropJob only
// from the gateway, the certificate read by the Identify it is given
// (services/wire/rpc.PeerInstance); SetPeers then limits a sender to the
// topology's neighbours. Without credentials (--insecure) claims are taken
// as made.
//
// Job names are not made here. The gateway makes and checks job ids
// (services/base/jobid) where it creates jobs and looks them up; every
// entry point here (Exchange, IntroduceJob, DropJob, FailJob) only checks
// that the name it is given is safe as a store key and a log field
// (ValidJob: 1 to MaxJobLen ASCII letters, digits, '-' or '_') before
// anything is created for it. That is exactly the set of job ids (the
// gateway's tests pin that the two agree), so a receiver takes every id
// the gateway makes and refuses what it never could have made; and a
// receiver takes streams only of jobs the gateway introduced.
//
// Warnings that repeat are rate-limited (internal/ratelog): a link that
// keeps failing logs its "stream to receiver broken" WARN once per channel
// a minute, and a Server refusing a fenced sender's opens once per sender
// a minute, each line after the first with the count it left out
// ("suppressed"), instead of one every two seconds per channel or one per
// call. The errors that end a link or fail a job are logged once each,
// as they happen.
//
// The logic that decides (Outbox numbering and trimming, Inbox watermarks) is
// plain data structures; Sender and Server are the thin gRPC adapters around
// them, each a Serve(ctx) unit (their goroutines run under
// internal/lifetime). This package knows nothing about rows, operators or
// queries: a batch is opaque bytes and a row count (Output), which its
// producer (the stage emitter, the gateway's ingest: stage.Encode) encodes
// once, sized to fit; from there on (the Committer, the store, the Sender,
// the receiver's journal) it is those bytes, never encoded again.
package transport
