// Package transport is Wololo's channel protocol: exactly-once delivery of
// numbered row batches from one sender instance to one receiver instance over
// a gRPC bidirectional stream, without a broker.
//
// A channel is one job, one logical stream, one sender, one receiver
// (ChannelID). The rules, as in DESIGN.md:
//
//   - The sender numbers its batches 1, 2, 3, ... and keeps every batch in its
//     Outbox until the receiver acknowledges it; the last batch carries EOF.
//   - The receiver applies batch n only if n is its watermark plus one; a
//     duplicate (n at or below the watermark) is acknowledged and dropped.
//     Applying is one Store.Commit: new watermark, operator state change and
//     the batches it emits, together. Only after Commit returns is n
//     acknowledged.
//   - On (re)connect the receiver answers Open with Hello{watermark} and the
//     sender resends everything above it. gRPC keeps one stream in order, so
//     a watermark per channel is all the receiver needs.
//   - Every sender process has an incarnation that grows with each start; a
//     receiver refuses streams from an incarnation older than the newest it
//     has seen of that sender (zombie fencing).
//   - The Outbox is bounded: the stage runtime waits for room before it
//     applies more input, which pushes back all the way to the upload.
//
// The logic that decides (Outbox numbering and trimming, Inbox watermarks) is
// plain data structures; Sender and Server are the thin gRPC adapters around
// them. This package knows nothing about rows, operators or queries: a batch
// is an opaque *wololov1.RowBatch.
package transport
