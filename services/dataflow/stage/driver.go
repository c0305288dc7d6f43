package stage

import "errors"

// Driver drives one operator through its inputs: it applies their
// batches, drops and counts those the operator rejects, tells the
// operator that an input has ended once every sender of it has ended it
// (InputEnder), and says when every input has ended, which is when the
// operator is to finish. The runtime drives each job's operator through
// one, live and in replay, so that both agree on what an end is and on
// what a rejected batch does.
//
// It is not safe for concurrent use: the runtime calls it from the one
// goroutine that owns the operator. It does no I/O and says nothing; the
// caller logs what it returns and drops what the operator emitted for a
// batch it rejected (Outputs.Discard).
type Driver struct {
	op   Operator
	ends *Ends
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

// NewDriver returns the driver of op, whose input k is ended by
// senders[k] senders.
func NewDriver(op Operator, senders []int) *Driver {
	return &Driver{op: op, ends: NewEnds(senders)}
}

// Apply applies one batch of input k, as it travels, to the operator,
// and returns the rows applied. A batch the operator rejects (one that
// does not decode, or whose columns are not the input's) is dropped and
// counted, never retried and never fatal to the job: Apply returns the
// operator's error, for the caller to log, and the caller drops what the
// operator emitted for it. Nothing is applied once the operator has
// finished.
func (d *Driver) Apply(input int, batch []byte, out Emitter) (int, error) {
	if d.finished {
		return 0, nil
	}
	n, err := d.op.Apply(input, batch, out)
	if err != nil {
		return 0, d.rejected(err)
	}
	return n, nil
}

// Dropped is how many batches were dropped: rejected by the operator.
func (d *Driver) Dropped() int64 { return d.dropped }

// End notes that sender (its instance's index) has ended input k. When
// that was the input's last sender, the operator hears that the input
// has ended (InputEnder; its error is returned). due reports that every
// input has now ended: the caller finishes the operator next (Finish).
// An end noted already, of an input the operator does not have, or after
// it finished, does nothing.
func (d *Driver) End(input, sender int, out Emitter) (due bool, err error) {
	if d.finished || !d.ends.Note(input, sender) {
		return false, nil
	}
	if !d.ends.Ended(input) {
		return false, nil
	}
	if ender, ok := d.op.(InputEnder); ok {
		if err = ender.EndInput(input, out); errors.Is(err, ErrFailsJob) {
			d.rejected(err)
			return false, err
		}
	}
	return d.ends.AllEnded(), err
}

// Restore notes that sender has ended input k without telling the
// operator: an end that the operator's restored state holds already (a
// recovered job's).
func (d *Driver) Restore(input, sender int) { d.ends.Note(input, sender) }

// Ended reports whether every sender of input k has ended it.
func (d *Driver) Ended(input int) bool { return d.ends.Ended(input) }

// AllEnded reports whether every input has ended (at once for an operator
// without inputs).
func (d *Driver) AllEnded() bool { return d.ends.AllEnded() }

// Finish finishes the operator, whether or not every input has ended,
// and lets it go: its state is no longer needed. It returns the
// operator's error; a second call does nothing.
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

// Ends counts the ends of an operator's inputs, by input index and
// sending instance: input k has ended once each of its senders has ended
// it. The Driver counts the ends of a job's operator with it, and a
// plan's task (sqlops.Task) those of each operator it chains, so that
// both agree on what an end is.
type Ends struct {
	// senders is, per input, how many senders end it; ended holds the
	// senders whose end was noted, per input.
	senders []int
	ended   []map[int]bool
	open    int // inputs not ended
}

// NewEnds returns the count of inputs of which input k is ended by
// senders[k] senders (none: ended from the start).
func NewEnds(senders []int) *Ends {
	e := &Ends{senders: senders, ended: make([]map[int]bool, len(senders)), open: len(senders)}
	for k, n := range senders {
		if n == 0 {
			e.ended[k] = map[int]bool{}
			e.open--
		}
	}
	return e
}

// Note records that sender has ended input k; false if there was nothing
// to record (an end noted already, of an input or sender there is not).
func (e *Ends) Note(input, sender int) bool {
	if input < 0 || input >= len(e.senders) || sender < 0 || sender >= e.senders[input] || e.ended[input][sender] {
		return false
	}
	if e.ended[input] == nil {
		e.ended[input] = map[int]bool{}
	}
	e.ended[input][sender] = true
	if len(e.ended[input]) == e.senders[input] {
		e.open--
	}
	return true
}

// Ended reports whether every sender of input k has ended it.
func (e *Ends) Ended(input int) bool {
	return input >= 0 && input < len(e.senders) && len(e.ended[input]) == e.senders[input]
}

// AllEnded reports whether every input has ended (at once for no inputs).
func (e *Ends) AllEnded() bool { return e.open == 0 }

// Noted calls f with each end noted, input by input, senders in order.
func (e *Ends) Noted(f func(input, sender int)) {
	for k, ended := range e.ended {
		for s := range e.senders[k] {
			if ended[s] {
				f(k, s)
			}
		}
	}
}

// Count is how many ends were noted.
func (e *Ends) Count() int {
	n := 0
	for _, ended := range e.ended {
		n += len(ended)
	}
	return n
}
