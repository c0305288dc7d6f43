package transport

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// IncarnationClockMargin is how far ahead of the checking process's own
// clock a claimed incarnation may be (IncarnationCeiling): a peer's clock
// may run that much ahead of this one's. It is also the longest a forged
// or buggy claim can lock the real instance out (until its clock, which
// floors its next start's number, passes the claim), however many claims
// are stacked: the bound moves with the checker's clock only, never with
// the claims it took (see the package doc, "Incarnations").
const IncarnationClockMargin = time.Hour

// errIncarnationsExhausted: a store whose last incarnation is the largest
// number there is cannot hand out another.
var errIncarnationsExhausted = errors.New("incarnations exhausted")

// errIncarnationAhead: a claimed incarnation above IncarnationCeiling. It
// is an ErrInvalid (INVALID_ARGUMENT), told apart so that a receiver logs
// it once per instance (Server.fence).
var errIncarnationAhead = fmt.Errorf("%w: incarnation ahead of the clock", ErrInvalid)

// ClockIncarnation is the incarnation floor of a start at t: its Unix time
// in milliseconds (0 before 1970). A process passes it to
// Store.NextIncarnation, so that a start on an empty store (a wiped disk, a
// new volume) still gets a number above those of the starts before it on
// other stores, as long as the clocks ran forward between them.
func ClockIncarnation(t time.Time) uint64 {
	ms := t.UnixMilli()
	if ms < 0 {
		return 0
	}
	return uint64(ms)
}

// NextIncarnation is the number a store hands out after last (0 for a
// store that never handed one out) at a start whose floor is atLeast: one
// above last, or atLeast if that is higher. The stores implement
// Store.NextIncarnation with it, so that numbers keep increasing on one
// store even when the clock goes back.
func NextIncarnation(last, atLeast uint64) (uint64, error) {
	if last == math.MaxUint64 {
		return 0, fmt.Errorf("%w: the last one handed out is %d", errIncarnationsExhausted, last)
	}
	return max(last+1, atLeast), nil
}

// IncarnationCeiling is the highest incarnation of any instance a process
// believes at now: its own clock plus IncarnationClockMargin, as a
// clock-floored number (ClockIncarnation). Real incarnations are at most
// their start's clock (or a count or so above the last one on their
// store, within a millisecond), so they pass unless clocks disagree by
// more than the margin; a claim above would fence every real incarnation
// to come, so it is refused (ErrInvalid). The bound does not depend on the
// newest incarnation known of the instance: one that did (a step above the
// newest) let claims stack, each taken claim raising the next bound, and
// eleven announcements fenced an instance for 3.9 hours.
func IncarnationCeiling(now time.Time) uint64 {
	return ClockIncarnation(now.Add(IncarnationClockMargin))
}

// checkIncarnation refuses a claimed incarnation of instance that is older
// than newest, the newest known of it (ErrStaleIncarnation: a zombie), or
// above IncarnationCeiling (ErrInvalid). who says whose claim it is in the
// error.
func checkIncarnation(who, instance string, incarnation, newest uint64, now time.Time) error {
	if incarnation < newest {
		return fmt.Errorf("%w: %s %s incarnation %d, newest is %d", ErrStaleIncarnation, who, instance, incarnation, newest)
	}
	if ceiling := IncarnationCeiling(now); incarnation > ceiling {
		return fmt.Errorf("%w: %s %s claims incarnation %d, above %d, this process's clock plus %s (clocks that disagree by more, or a forged claim)",
			errIncarnationAhead, who, instance, incarnation, ceiling, IncarnationClockMargin)
	}
	return nil
}

// clockOr is the time a bound on incarnations is taken at: now's, or
// time.Now's when now is nil (a test sets its own).
func clockOr(now func() time.Time) time.Time {
	if now != nil {
		return now()
	}
	return time.Now()
}
