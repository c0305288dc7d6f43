package transport

import (
	"errors"
	"fmt"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// Errors of the channel protocol.
var (
	// ErrSeqGap: a batch arrived whose sequence number is more than one above
	// the watermark. The stream is reset and the sender resends from Hello.
	ErrSeqGap = errors.New("sequence gap")
	// ErrStaleIncarnation: a stream from an older incarnation of a sender.
	ErrStaleIncarnation = errors.New("stale incarnation")
	// ErrUnknownChannel: the receiver does not take this stream from this sender.
	ErrUnknownChannel = errors.New("unknown channel")
	// ErrJobDropped: the receiver has dropped the job (its client has the
	// results); the sender drops the channel too.
	ErrJobDropped = errors.New("job dropped")
	// ErrTooManyJobs: the receiver holds as many jobs as it may; the
	// sender retries later.
	ErrTooManyJobs = errors.New("too many jobs")
	// ErrStateLost: one end of a channel lost batches the other end holds
	// as delivered (a store wiped or replaced under a running job): the
	// receiver's watermark is below what it acknowledged, or above what the
	// sender ever numbered. No resend can repair it; the job fails.
	ErrStateLost = errors.New("channel state lost")
)

// ChannelID names one channel.
type ChannelID struct {
	Job      string
	Stream   string
	Sender   string
	Receiver string
}

func (c ChannelID) String() string {
	return fmt.Sprintf("%s/%s/%s->%s", c.Job, c.Stream, c.Sender, c.Receiver)
}

// Entry is one numbered batch of a channel: an outbox entry, and what
// Commit persists.
type Entry struct {
	Channel ChannelID
	Seq     uint64
	EOF     bool
	// Rows is the proto encoding of the batch's RowBatch, nil for an EOF
	// without rows. The Committer encodes it once; the store writes these
	// bytes and the Sender sends them, so a batch is never encoded again.
	Rows []byte
	// Count is the rows in the batch, for the counters of Status and the
	// metrics; 0 in entries loaded from a store.
	Count int
}

// Verdict is what a receiver does with an arriving batch.
type Verdict int

// The verdicts.
const (
	Apply     Verdict = iota // seq is watermark+1: apply it
	Duplicate                // seq at or below the watermark: acknowledge, drop
	Gap                      // seq beyond watermark+1: refuse, reset the stream
)

// Check decides what to do with batch seq given the channel's watermark.
func Check(watermark, seq uint64) Verdict {
	switch {
	case seq <= watermark:
		return Duplicate
	case seq == watermark+1:
		return Apply
	default:
		return Gap
	}
}

// RowCount returns the number of rows in a batch: the length of the column
// every row kind has.
func RowCount(rb *wololov1.RowBatch) int {
	switch r := rb.GetRows().(type) {
	case *wololov1.RowBatch_Matches:
		return len(r.Matches.GetToken().GetEnds())
	case *wololov1.RowBatch_Players:
		return len(r.Players.GetMatch().GetEnds())
	case *wololov1.RowBatch_Tokens:
		return len(r.Tokens.GetToken().GetEnds())
	case *wololov1.RowBatch_Civs:
		return len(r.Civs.GetCiv())
	}
	return 0
}
