// Package segstore is a durable transport.Store on append-only segment
// files: a process's watermarks, outbox, records and state log kept in
// one directory, so that a stage, worker or gateway process that is
// killed and restarted goes on exactly where its last acknowledged commit
// left it.
//
// It is the alternative to transport/durable (Pebble). A commit's payload
// is written once, to a log, and synced once: no memtable, no flush, no
// compaction rewriting it level after level, no preallocated WAL. Entries
// are trimmed soon after they are written, so most segments die whole and
// are deleted without ever being read again; an idle store holds little
// more than its live values.
//
// It implements transport.Store with the semantics of transport.MemStore,
// the model: for the same calls Load returns the same Image and
// ReadOutbox the same entries (the conformance suite in transport/storetest
// runs against it, also with 2 KiB segments that rotate, compact and
// delete all the time). Like the Pebble store, an entry committed twice
// under the same channel and seq is kept once (the later) and entries
// come back in seq order. Unlike it, names are length-prefixed, so job
// ids and channel components may hold NUL bytes, and an output numbered
// 0 sets a reserved mark of 0 as the model does.
//
// # What it may touch
//
// The standard library, proto/, transport/ and internal/directio of this
// module, and go-hclog for its log: nothing of services/. It knows nothing of
// operators, rows or queries: an entry's rows (the encoding of a
// RowBatch, made by the Committer), records and state entries are opaque
// bytes, written as they come; it must not grow knowledge of the stage
// runtime or of a row format. It owns its directory: nothing else may
// write there, and a second Open of the directory fails (an flock on
// LOCK; the kernel drops it when the process dies), and Open refuses a
// directory that holds a Pebble store rather than start an empty store
// beside it. Every file operation goes through Options.FS (fs.go: open and
// create, write, sync, read, truncate, remove, the directory's sync and
// listing, the lock), the operating system's unless a test puts faults
// there; TestOnlyTheFSTouchesTheDisk keeps the os calls in fs.go. It is the store processes open by default (`--store
// segments`); `--store pebble` opens transport/durable instead.
//
// # On disk
//
// The directory (0700) holds LOCK and the segments NNNNNNNN.seg (0600),
// numbered from 1 without gaps, oldest first. Each segment is a sequence
// of records, the first one its header; a segment is closed once the
// next record would take it past Options.SegmentSize (64 MiB; a larger
// record gets a segment of its own). Nothing is preallocated: a file is
// as long as what was written to it. A record is
//
//	length  uint32 LE          bytes of payload
//	crc     uint32 LE          CRC-32C (Castagnoli) of the payload
//	payload kind byte, body, trailer
//
// and every payload ends with the trailer, a uint64 LE: the offset up to
// which the segment was known to be on stable storage when the record was
// made (see "Opening"). In bodies, numbers are uvarints, a string is its
// uvarint length and its bytes, and a channel is written relative to the
// job of its record: its Job component is one 0 byte when it is that job
// (else length+1 and the bytes), then Stream, Sender, Receiver. The kinds:
//
//	1 header       "wololo segstore", format version (1), segment number
//	2 commit       job, flags (1 reset, 2 has state),
//	               inputs:  count, (channel, watermark)...
//	               outputs: count, (channel, seq, flags (1 eof, 2 rows), [rows length, rows])...
//	               records: count, (name, value length, value)...
//	               [state length, state], then n (uvarint), the job's
//	               state-log index before the commit: the index of its state
//	               entry, and where the log starts after a reset
//	3 trim         job, channel, seq
//	4 drop         job (deletes the job, is its tombstone)
//	5 incarnation  the number handed out
//	6 copy         items, each a tag and its fields (compaction's puts):
//	               job marker, watermark, reserved, acked, record, entry,
//	               state entry (with its index), tombstone, incarnation
//	7 ack          job, channel, seq: the layout of a trim, which raises
//	               the acked mark and drops no entry (Acknowledge)
//
// The format version stays 1 with the ack record. A build from before it
// does not misread a store that holds one: the record's checksum is
// valid, so it is no torn tail, and its unknown kind fails Open with an
// error that names the file and the offset (IsCorruption). Once compacted,
// an ack is an acked item and the entries it kept are entry items, which
// such a build reads (its Load then hands back the entries at or below
// the mark, which the Outbox's Restore skips). A version 2 in the header
// would add nothing: a store goes on appending to the last segment it
// opened, so ack records would still land under that segment's version 1
// header, and only a new segment at every Open would change that.
//
// Rows are the bytes the entry holds (a RowBatch's encoding), never split:
// one entry is a few bytes of header and its rows however large.
//
// # Commits
//
// Everything a Commit carries is one record. Its body (rows marshalled
// straight into it, and its checksum) is built outside the store's lock;
// under the lock the store takes the job's state-log index, places the
// record at the end of the current segment, applies it to the index and
// queues it. The first caller to find no write in flight writes every
// queued record (staged in aligned memory and written at once: a large
// group's whole blocks with direct I/O, past the page cache, the rest
// through it; direct.go says why) and calls fdatasync once (syscall.Fdatasync on Linux,
// (*os.File).Sync elsewhere), then wakes every caller whose record it
// carried: commits that arrive while a sync runs share the next one.
// Commit returns once its record is on stable storage. Commit bodies are
// recycled once written (a 1 MiB commit allocates no fresh megabyte).
//
// Trim and Acknowledge queue their record and return; a background
// flush writes it soon without a sync, and the next sync makes it
// durable: a lost trim or ack only causes a resend. DropJob and
// NextIncarnation wait for a sync (a dropped job must stay dropped, a
// number must never be handed out twice);
// Options.NoSync (benchmarks) skips the sync of Commit and DropJob, never
// that of NextIncarnation. A segment is synced whole before the first
// write to the next one, and a new segment's directory entry is synced
// before anything relies on it, so only the last segment can have a torn
// tail. A failed write or sync (or creation of a segment) fails the
// store: every later call returns the error until it is reopened. A
// failed deletion of a dead segment is logged and tried again after the
// next write.
//
// # Index and live bytes
//
// The index (index.go, no I/O) holds the content in memory, except the
// bytes of entries and state entries, for which it holds where they lie.
// The same apply functions build it from the records replayed at Open and
// from the records appended since, so both agree. Each value is an item
// living in one segment: a job's marker (its newest commit), its
// watermarks, reserved and acked marks, records, entries not trimmed
// (acknowledged ones too: Load leaves out the entries at or below their
// channel's acked mark, ReadOutbox reads them), state entries since the
// last reset, the tombstones of dropped jobs, the newest incarnation.
// ReadState and ReadOutbox read their entries one at a time: each is
// looked up in the index under the lock (a compaction may have moved it
// since the one before) and its record read back outside it, its segment
// kept until the read is done. Replacing or deleting a value kills its
// item; each
// segment counts its live items and their encoded bytes, and remembers
// the end of the newest record that killed one of its items.
//
// A segment whose items are all dead is deleted once what killed them is
// durable, but only when it is the oldest: a record can shadow (replace
// or delete) items only of older records, so the segments on disk are
// always a suffix of the log that replays to the same content, and the
// directory is synced after each deletion so that a crash cannot keep an
// older segment while losing the newer one that shadows it. Dead
// segments behind a live one wait for compaction.
//
// # Compaction
//
// A copy record holds puts of current values: items put again, each
// replacing the item it copies. Copies can therefore be split into
// records of any size, repeated, or left half done by a crash: until the
// old segments are deleted, replaying both gives the same content.
// Entries and state entries are read back from their records (each
// checksum verified); small values come from memory. After the copies
// are durable the old segments hold nothing live and are deleted, oldest
// first.
//
// The janitor (one goroutine) runs after every written group. When the
// old segments (all but the current one) hold at least one segment of
// garbage and less live than garbage, it compacts the prefix of them that
// frees the most: the one that maximises garbage minus live bytes copied.
// After Options.IdleAfter (2 s) without a write it also closes the
// current segment and compacts if the whole store holds at least
// min(4 MiB, a segment) of garbage and less live than garbage; Compact
// does the same on demand.
//
// Why: a compaction copies less than it frees (live < garbage), so
// compaction writes at most as many bytes as it reclaims, and a busy store
// takes at most about twice its live bytes plus two segments (the current
// one and one of garbage); the work scales with what is live, not with
// what was written. Waiting for a full segment of garbage keeps a
// compaction from running for a few kilobytes of it. In the common case
// nothing is copied at all: entries are trimmed in commit order, so the
// oldest segments die whole and go. Entries acknowledged instead (the
// gateway's, kept to be sent again) stay live until trimmed or dropped,
// and are copied forward like any other live item. The idle rule is what gets a store
// back to its live bytes (a few kilobytes once a job is trimmed) instead
// of keeping its last, mostly dead segment.
//
// # Opening
//
// Open replays the segments in order. A record that is cut short or fails
// its checksum in the last segment is a torn tail (the process died while
// writing its last group) and the segment is truncated before it (logged
// at Warn) - unless a later record in the segment is valid and its
// trailer says the segment was on stable storage beyond the bad record's
// offset: then the bad record had been durable, it is damage, and Open
// fails. A bad record in any other segment, a segment that does not start
// with its own header, a valid checksum over an unreadable payload, or a
// missing segment number fails Open too, with an error that names the
// file and the offset and for which IsCorruption is true. Open then syncs
// the last segment (what replay read may have been in the page cache
// only) and goes on appending to it.
//
// Tested: TestCrashAtomicity SIGKILLs a child committing from three
// goroutines at random moments, 16 times over one directory, half of the
// rounds with 48 KiB segments (so that kills land in rotations,
// compactions and deletions): every commit the child saw return is
// there, no commit is half there. TestTornTail truncates the last segment
// at every byte offset of its last record: Open drops exactly that
// record. TestCorruption flips bytes in the first and the last segment.
// TestFaults makes one call on the FS fail (a write, short or not, a
// sync, a segment's creation, a directory sync, a removal; once, or from
// then on with ENOSPC) during a random sequence: the store fail-stops or
// retries as said above, and reopened on the real file system it holds a
// prefix of the calls made that includes every one acknowledged durable,
// and goes on matching the model; TestFaultsAtOpen fails each step of
// Open in turn. TestCompactedAckedEntriesKept checks that acknowledged
// entries are copied out of the segments they were committed in and read
// back from the copies, across a reopen.
// FuzzDecode feeds arbitrary bytes (and every kind of record) to the
// decoder and the replay; FuzzCommitRoundTrip checks that what the
// encoder lays out is what the decoder finds.
//
// # Measured
//
// Both stores run the same harness (storetest.Benchmarks: small synced
// commits from one goroutine and from eight, unsynced ones, 1 MiB commits
// from one and from four, a Load of 10k entries, and a whole job's worth
// of 1 MiB batches each trimmed a few commits later), so `make bench`
// measures them side by side in one run; the figures are in BENCHMARKS.md
// (Micro-benchmarks). What they showed when this store replaced Pebble
// on the job path: small synced commits as fast as Pebble's (both are
// bound by fdatasync); 1 MiB commits at several times Pebble's rate and a
// fraction of its CPU and memory (no memtable, flush or compaction: what
// is left on top of the write is the rows' encoding and one CRC pass);
// less disk at the peak of a job, and almost none once it has been idle.
//
// Appending to a file makes fdatasync commit the file's new size too,
// which costs a little against overwriting preallocated blocks; Pebble
// recycles preallocated WAL files for that reason. This store does not
// preallocate, by design, and its small synced commits still run as fast
// as Pebble's.
package segstore
