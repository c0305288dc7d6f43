package stage

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/batch"
)

// Driver drives one operator through its inputs: it applies their
// batches, drops and counts those the operator rejects, tells the
// operator that a stream has ended once every sender of it has ended it
// (StreamEnder), and says when every input has ended, which is when the
// operator is to finish. The three places that run operators drive them
// through one, so that they agree on what an end is and on what a
// rejected batch does: the runtime (one per job, over the task's
// operator), a chain (one per chained operator, whose inputs have one
// sender each) and the in-memory executor (one per task).
//
// It is not safe for concurrent use: each of them calls it from the one
// goroutine that owns the operator. It does no I/O and says nothing; the
// caller logs what it returns and drops what the operator emitted for a
// batch it rejected (Outputs.Discard).
type Driver struct {
	op Operator
	// senders is, per input stream, how many senders end it; ended holds
	// the senders whose end was noted, per stream.
	senders map[string]int
	ended   map[string]map[string]bool
	open    int // input streams not ended
	// finished: Finish was called, or the operator failed the job
	// (failed); op is gone.
	finished bool
	failed   error
	dropped  int64
	// usage is what the operator spent of its job's budget when it was
	// let go (Spender), for the log.
	usage []any
}

// release lets the operator go, keeping what it spent.
func (d *Driver) release() Operator {
	op := d.op
	if s, ok := op.(Spender); ok {
		d.usage = s.Usage()
	}
	d.finished, d.op = true, nil
	return op
}

// Usage is what the operator spent of its job's budget (Spender), once
// it has been let go (finished, or failed the job); nil otherwise.
func (d *Driver) Usage() []any { return d.usage }

// rejected takes an operator's error: one that fails the job
// (ErrFailsJob) lets the operator go, as Finish does, and is kept
// (Failed); any other drops the batch, counted.
func (d *Driver) rejected(err error) error {
	if errors.Is(err, ErrFailsJob) {
		d.release()
		d.failed = err
		return err
	}
	d.dropped++
	return err
}

// Failed is the error with which the operator failed the job
// (ErrFailsJob), or nil.
func (d *Driver) Failed() error { return d.failed }

// NewDriver returns the driver of op, whose input streams are the keys of
// senders, each ended by as many senders as its value.
func NewDriver(op Operator, senders map[string]int) *Driver {
	return &Driver{op: op, senders: senders, ended: map[string]map[string]bool{}, open: len(senders)}
}

// Apply applies one batch of an input stream to the operator. A batch the
// operator rejects (a malformed batch: columns that disagree, rows of a
// kind the stream does not carry) is dropped and counted, never retried
// and never fatal to the job: Apply returns the operator's error, for the
// caller to log, and the caller drops what the operator emitted for it.
// Nothing is applied once the operator has finished.
func (d *Driver) Apply(stream string, rows *wololov1.RowBatch, out Emitter) error {
	if d.finished {
		return nil
	}
	if err := d.op.Apply(stream, rows, out); err != nil {
		return d.rejected(err)
	}
	return nil
}

// ApplyEncoded is Apply of a batch as it travels (its RowBatch's bytes):
// given to the operator as bytes where it reads them so
// (EncodedApplier), else decoded first. It returns the rows applied. A
// batch that does not decode is dropped and counted as a rejected one
// is.
func (d *Driver) ApplyEncoded(stream string, encoded []byte, out Emitter) (int, error) {
	if d.finished {
		return 0, nil
	}
	if ea, ok := d.op.(EncodedApplier); ok {
		n, err := ea.ApplyEncoded(stream, encoded, out)
		if err != nil {
			return 0, d.rejected(err)
		}
		return n, nil
	}
	rows := &wololov1.RowBatch{}
	if err := proto.Unmarshal(encoded, rows); err != nil {
		d.dropped++
		return 0, fmt.Errorf("batch does not decode: %w", err)
	}
	if err := d.Apply(stream, rows, out); err != nil {
		return 0, err
	}
	return batch.Rows(rows), nil
}

// Dropped is how many batches were dropped: rejected by the operator, or
// not decoded (ApplyEncoded).
func (d *Driver) Dropped() int64 { return d.dropped }

// End notes that sender has ended stream. When that was the stream's last
// sender, the operator hears that the stream has ended (EndStream; its
// error is returned). due reports that every input has now ended: the
// caller finishes the operator next (Finish), after handing on what the
// end emitted if it hands rows on. An end noted already, of a stream the
// operator does not read, or after it finished, does nothing.
func (d *Driver) End(stream, sender string, out Emitter) (due bool, err error) {
	if d.finished || !d.note(stream, sender) {
		return false, nil
	}
	if !d.Ended(stream) {
		return false, nil
	}
	if ender, ok := d.op.(StreamEnder); ok {
		if err = ender.EndStream(stream, out); errors.Is(err, ErrFailsJob) {
			d.rejected(err)
			return false, err
		}
	}
	return d.open == 0, err
}

// note records an end without telling the operator; false if there was
// nothing to record.
func (d *Driver) note(stream, sender string) bool {
	n, reads := d.senders[stream]
	if !reads || d.ended[stream][sender] || len(d.ended[stream]) == n {
		return false
	}
	if d.ended[stream] == nil {
		d.ended[stream] = map[string]bool{}
	}
	d.ended[stream][sender] = true
	if len(d.ended[stream]) == n {
		d.open--
	}
	return true
}

// Restore notes that sender has ended stream without telling the operator:
// an end that the operator's restored state holds already (a recovered
// job's, a restored chain's).
func (d *Driver) Restore(stream, sender string) { d.note(stream, sender) }

// Ended reports whether every sender of stream has ended it.
func (d *Driver) Ended(stream string) bool {
	n, reads := d.senders[stream]
	return reads && len(d.ended[stream]) == n
}

// AllEnded reports whether every input has ended (at once for an operator
// without inputs).
func (d *Driver) AllEnded() bool { return d.open == 0 }

// Finish finishes the operator, whether or not every input has ended (a
// chain finishes what is left when the task's inputs have ended), and
// lets it go: its state is no longer needed. It returns the operator's
// error; a second call does nothing.
func (d *Driver) Finish(out Emitter) error {
	if d.finished {
		return nil
	}
	op := d.release()
	err := op.Finish(out)
	if errors.Is(err, ErrFailsJob) {
		d.failed = err
	}
	return err
}

// Finished reports whether Finish was called.
func (d *Driver) Finished() bool { return d.finished }
