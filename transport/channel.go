package transport

import (
	"errors"
	"fmt"
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
	// ErrUnknownJob: the receiver was never told of the job (the gateway
	// introduces every job to every instance before it sends a batch of it:
	// StageService.IntroduceJob), so it keeps nothing of it and refuses the
	// stream. A sender of the graph meets it only when the receiver's store
	// lost the job: the job cannot complete, and fails.
	ErrUnknownJob = errors.New("job not introduced")
	// ErrTooManyJobs: the receiver holds as many jobs as it may. The job
	// cannot run there: it fails with this reason.
	ErrTooManyJobs = errors.New("too many jobs")
	// ErrAfterEOF: a batch numbered past the watermark of a channel whose
	// EOF is applied: nothing follows an EOF, so it is refused and nothing
	// of it is journaled (a resend at or below the watermark is still a
	// duplicate, acknowledged and dropped).
	ErrAfterEOF = errors.New("batch after end of channel")
	// ErrStateLost: one end of a channel lost batches the other end holds
	// as delivered (a store wiped or replaced under a running job): the
	// receiver's watermark is below what it acknowledged, or above what the
	// sender ever numbered. No resend can repair it; the job fails, as
	// lost (JobFailure.StateLost), which its attached client runs again.
	// A receiver that does not know a job its sender holds
	// (ErrUnknownJob) lost it the same way: the sender reports that
	// wrapped in ErrStateLost.
	ErrStateLost = errors.New("channel state lost")
	// ErrBadPlan: the plan a job was introduced with cannot run here (it
	// does not decode, breaks the plan's invariants, or the instance runs
	// no planned jobs). The job cannot run: it fails with this reason.
	ErrBadPlan = errors.New("job plan refused")
)

// LostError is an ErrStateLost that names the instance that lost the
// state: the receiver whose watermark fell below what it acknowledged, or
// who no longer knows the job; the sender who numbered less than its
// receiver applied. The gateway decides from it which instance a rebuild
// is for (services/roles/gateway/rebuild.go). Its text is the error's it
// wraps.
type LostError struct {
	Instance string
	err      error
}

func (e *LostError) Error() string { return e.err.Error() }
func (e *LostError) Unwrap() error { return e.err }

// lost is err (an ErrStateLost) naming instance as the one that lost it.
func lost(instance string, err error) error { return &LostError{Instance: instance, err: err} }

// LostInstance is the instance an ErrStateLost names (LostError), "" if
// none.
func LostInstance(err error) string {
	var le *LostError
	if errors.As(err, &le) {
		return le.Instance
	}
	return ""
}

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

// EndedRecord is the record key under which a receiver's commit marks
// channel ch ended (its EOF applied): the Committer writes it for every
// channel in Step.Ended, and Committer.Restore gives it back to the Inbox.
// The key is the one the stage runtime wrote when it kept this record
// itself, so that stores written then are read the same.
func EndedRecord(ch ChannelID) string { return "stage/eof/" + ch.Stream + "/" + ch.Sender }

// Entry is one numbered batch of a channel: an outbox entry, and what
// Commit persists.
type Entry struct {
	Channel ChannelID
	Seq     uint64
	EOF     bool
	// Rows are the batch's rows as their producer encoded them (opaque
	// here), nil for an EOF without rows. The producer encodes them once;
	// the store writes these bytes and the Sender sends them, so a batch
	// is never encoded again.
	Rows []byte
	// Count is the rows in the batch, as its producer counted them, for
	// the counters of Status and the metrics; 0 in entries loaded from a
	// store.
	Count int
}

// Verdict is what a receiver does with an arriving batch.
type Verdict int

// The verdicts.
const (
	Apply     Verdict = iota // seq is watermark+1: apply it
	Duplicate                // seq at or below the watermark: acknowledge, drop
	Gap                      // seq beyond watermark+1: refuse, reset the stream
	Ended                    // seq beyond the watermark of an ended channel: refuse (ErrAfterEOF)
)

// Check decides what to do with batch seq given the channel's watermark
// and whether its EOF is applied (ended).
func Check(watermark, seq uint64, ended bool) Verdict {
	switch {
	case seq <= watermark:
		return Duplicate
	case ended:
		return Ended
	case seq == watermark+1:
		return Apply
	default:
		return Gap
	}
}
