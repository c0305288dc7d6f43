package transport

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Incarnations: how a process's starts are numbered, and how far a peer
// believes a claimed number (see the package doc, "Incarnations").
const (
	// MaxIncarnationStep is how far above the newest incarnation known of
	// an instance (0 for one not seen yet) a claimed incarnation may be
	// whatever the clocks say (IncarnationCeiling): room for a store that
	// counted past its clock to start again and again. A claim far above
	// would fence every real incarnation to come.
	MaxIncarnationStep = 1 << 20
	// IncarnationClockMargin is how far ahead of the checking process's
	// own clock a claimed incarnation may be (IncarnationCeiling): a
	// peer's clock may run that much ahead of this one's, and a forged or
	// buggy claim up to that bound locks the real instance out for that
	// long (until its clock, which floors its next start's number, passes
	// the claim; each further claim stacked on it through the step term
	// adds MaxIncarnationStep ms).
	IncarnationClockMargin = time.Hour
)

// errIncarnationsExhausted: a store whose last incarnation is the largest
// number there is cannot hand out another.
var errIncarnationsExhausted = errors.New("incarnations exhausted")

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

// IncarnationCeiling is the highest incarnation of an instance a process
// believes at now when the newest it knows of that instance is newest (0
// for one not seen yet): MaxIncarnationStep above newest, or
// IncarnationClockMargin ahead of now, whichever is higher. Real
// incarnations are at most their start's clock (or a small count above the
// newest, on a store whose clock lags), so they pass unless clocks
// disagree by more than the margin; a claim above would fence every real
// incarnation to come, so it is refused (ErrInvalid).
func IncarnationCeiling(newest uint64, now time.Time) uint64 {
	step := newest + MaxIncarnationStep
	if step < newest { // overflow: anything goes above such a newest
		step = math.MaxUint64
	}
	return max(step, ClockIncarnation(now.Add(IncarnationClockMargin)))
}

// checkIncarnation refuses a claimed incarnation of instance that is older
// than newest, the newest known of it (ErrStaleIncarnation: a zombie), or
// above IncarnationCeiling (ErrInvalid). who says whose claim it is in the
// error.
func checkIncarnation(who, instance string, incarnation, newest uint64, now time.Time) error {
	if incarnation < newest {
		return fmt.Errorf("%w: %s %s incarnation %d, newest is %d", ErrStaleIncarnation, who, instance, incarnation, newest)
	}
	if ceiling := IncarnationCeiling(newest, now); incarnation > ceiling {
		return fmt.Errorf("%w: %s %s claims incarnation %d, above %d (the newest known, %d, plus %d, or this process's clock plus %s, in ms)",
			ErrInvalid, who, instance, incarnation, ceiling, newest, MaxIncarnationStep, IncarnationClockMargin)
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
