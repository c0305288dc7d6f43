// Package durable is the durable transport.Store: a process's watermarks,
// outbox, records and state log kept in a Pebble database in one directory,
// so that a stage, worker or gateway process that is killed and restarted
// goes on exactly where its last acknowledged commit left it.
//
// It implements transport.Store with the semantics of transport.MemStore,
// the model: for the same sequence of calls Load returns the same Image
// (checked by the conformance suite in transport/storetest). It knows
// nothing of operators, rows or queries: an outbox entry's rows are opaque
// bytes (a RowBatch's encoding), stored in the proto encoding of a
// wololov1.Batch{Seq, Eof, Rows}, and records and state-log entries are
// opaque bytes. It must not grow knowledge of the stage runtime or of any
// row format; whatever a caller needs to find again goes in a record.
//
// # Pebble version
//
// github.com/cockroachdb/pebble/v2 (v2.1.7), not v1.1.x. Both commit at
// the same fsync-bound rate (a scratch benchmark of one 1 KiB batch per
// synced commit, from one goroutine and from eight, measured them level
// when v2 was chosen). The reason is recovery: v1 (by its replayWAL code) and v2 at an old format major
// version end replay of the newest WAL silently at the first bad record,
// so a corrupt record in the middle of it drops every acknowledged commit
// after it without an error; v2 at
// FormatWALSyncChunks or newer writes synced offsets into the WAL, reads
// ahead on a bad record, and fails Open with a corruption error when later
// records prove it was not the tail (measured by TestWALTailCorruption:
// with the old format it "succeeds" with commits 1..37 of 60). v2 is also
// the maintained line. The format is set explicitly
// (FormatValueSeparation, the newest of v2.1.7): the default,
// FormatMinSupported, lacks WAL sync chunks and measured about three
// times slower for single synced commits.
//
// # Commits
//
// A Commit is one Pebble batch: the inbox watermarks, every output entry
// as one key, each output channel's reserved mark, the records, the state
// log entry (and, for ResetState, a DeleteRange of the job's earlier log).
// It is applied with pebble.Sync and Commit returns once the WAL holds it
// on stable storage. The batch is applied (DB.ApplyNoSyncWait) under a
// mutex that also orders what the batch derives from earlier commits (the
// job's next state-log index, the reserved maxima, whether the job exists);
// the fsync is waited for outside it, so concurrent commits share WAL
// syncs: Pebble's commit pipeline syncs once for every batch queued while
// the previous sync ran. Stats.Syncs counts the WAL syncs actually issued
// (the file system under Pebble is wrapped to count them). ApplyNoSyncWait
// is marked experimental by Pebble (CockroachDB uses it); if it goes away,
// holding the mutex per job across Batch.Commit is the fallback.
//
// Trim is a DeleteRange of the channel's entries up to seq plus the acked
// mark, applied without sync: a lost trim only causes a resend.
// Acknowledge is the acked mark alone, applied the same way: the entries
// stay, Load skips those at or below the mark (one seek past them, their
// values unread), and ReadOutbox reads them with an iterator over the
// channel's outbox keys from the seq asked for. DropJob is a DeleteRange
// of all the job's keys plus a tombstone, synced.
// NextIncarnation reads the last number handed out and writes the next,
// one above it or the floor passed (the start's clock) if higher, synced
// (also under Options.NoSync).
//
// # Key layout
//
// One byte selects the keyspace. The small meta keyspace:
//
//	"m" "i"                  last incarnation handed out, uint64 big-endian
//	"m" "t" job              tombstone of a dropped job (empty value)
//
// and the job keyspace, every key prefixed with "j" job 0x00:
//
//	"j" job 0x00             job marker: the job exists (empty value)
//	"j" job 0x00 "a" ch      acked mark of an output channel (uint64)
//	"j" job 0x00 "c" name    record
//	"j" job 0x00 "o" ch seq  outbox entry: wololov1.Batch{Seq, Eof, Rows}
//	"j" job 0x00 "r" ch      reserved: the highest seq ever committed (uint64)
//	"j" job 0x00 "s" n       state-log entry n
//	"j" job 0x00 "w" ch      inbox watermark of an input channel (uint64)
//
// where ch is Job 0x00 Stream 0x00 Sender 0x00 Receiver 0x00 and seq and n
// are uint64 big-endian, so a channel's entries sort in seq order and the
// state log in commit order. Job ids and channel components must not
// contain NUL (calls that pass one fail): then "j" job 0x00 prefixes the
// keys of that job only and [ "j" job 0x00, "j" job 0x01 ) is exactly the
// job, one DeleteRange. The state-log index n counts up per job and never
// goes back (a reset deletes [0, n) and writes n); it is recovered on the
// first commit of a job after Open by seeking to the job's last state key.
// Rows are never split into keys: one entry is one key however large.
//
// Load scans the database with one iterator (a consistent snapshot) and
// rebuilds the Image; entries come back in seq order. Unlike MemStore, an
// entry committed twice under the same channel and seq is kept once (the
// later), and entries committed out of seq order are returned in seq
// order; the runtime does neither.
//
// # Tuning
//
// MemTableSize 32 MiB with MemTableStopWritesThreshold 2: at most 64 MiB
// of memtables (one filling, one flushing); a stage commits well below the
// rate at which a 32 MiB flush would stall it. The block cache is 8 MiB:
// the store is written far more than read (reads are Load at start-up and
// one lookup per job and channel after that, answered from in-memory
// caches later), so a cache buys little. MaxOpenFiles 256. Everything else
// is Pebble's default (L0 and compaction settings, Snappy compression, WAL
// recycling). The store's own memory is therefore about 100 MiB at most;
// the large-commit benchmark reports the whole process's peak RSS
// (peak-RSS-MB) committing 1 MiB batches back to back.
//
// # Crash and corruption behaviour
//
// TestCrashAtomicity SIGKILLs a child process committing from three
// goroutines at random moments, five times over one directory: after each
// kill every commit the child saw return is there and no commit is half
// there. TestWALTailCorruption writes 60 commits (about 6 KiB each, the
// newest WAL holding the last 23) in a child that exits without Close, then
// damages a copy of the newest WAL and reopens. Observed with v2.1.7:
//
//   - Truncating the WAL anywhere (1 byte to all of it) is taken as a torn
//     tail: Open succeeds with the commits before the cut, each whole (1..59
//     for a cut inside the last record, 1..37 when the file is emptied).
//     Pebble cannot tell a torn write from lost synced data, so commits that
//     were acknowledged are silently gone; only an "stopped reading at
//     offset" line at Info on the log says where replay ended.
//   - A flipped byte in the last record is the same: that commit is dropped,
//     Open succeeds with 1..59.
//   - A flipped byte in a record followed by valid ones (in the first record
//     or half-way) fails Open with "pebble: error when replaying WAL:
//     pebble/record: invalid chunk", marked as corruption (IsCorruption
//     reports it). The store does not open; nothing is half applied.
//
// No case panicked or exposed part of a commit.
//
// # Write failures
//
// Pebble's commit pipeline does not come back from a failed WAL write or
// sync (a full disk, an I/O error): the next write panics inside it, and
// so does the flush Close used to do. So the first write that fails
// (Commit, Trim, Acknowledge, DropJob, NextIncarnation) fails the store:
// it is logged and kept, every later write returns ErrFailed naming it
// without reaching Pebble, and Close skips the flush and closes the
// database (or, if a write racing the failure made Pebble panic, which
// may leave its pipeline locked, leaves it alone: the process is exiting). A panic of Pebble's in
// a write or in Close becomes an error. The process restarts from what
// the WAL holds, as after a crash. TestFullDiskFailsLoudlyAndNeverPanics
// fills the disk under four committing goroutines: one commit fails with
// ENOSPC, the rest with ErrFailed, Close returns, nothing panics, and once
// the disk has room the store opens with every commit that returned nil.
//
// # Commit rates
//
// BenchmarkStore (transport/storetest, the same for every Store) measures
// synced small commits from one goroutine and from eight (group commit),
// unsynced ones for reference, 1 MiB commits and a Load of 10k entries.
// The synced rates are bound by the disk's flush latency and vary with the
// machine's neighbours. The figures are in BENCHMARKS.md
// (Micro-benchmarks), measured by `make bench`, beside the segment store's.
package durable
