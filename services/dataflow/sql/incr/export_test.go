package incr

// setKnob sets *knob to n until the returned func restores it.
func setKnob(knob *int, n int) (restore func()) {
	was := *knob
	*knob = n
	return func() { *knob = was }
}

// SetDropSlack makes the slack of finished groups an aggregate holds
// before it drops them n (finish.go), until the returned func restores it.
func SetDropSlack(n int) (restore func()) { return setKnob(&dropSlack, n) }

// HeldGroups is the groups whose state the engine's aggregates over rows
// that only arrive hold, and the keys of the groups they dropped.
func HeldGroups(e *Engine) (held, dropped int) {
	e.below.walk(func(o op) {
		if a, ok := o.(*aggOp); ok {
			held += a.agg.Groups()
			if a.fin != nil {
				dropped += a.fin.Done().Len()
			}
		}
	})
	return held, dropped
}

// SnapshotSize is the engine's operators' estimates of the bytes their
// state takes in a snapshot (the answer's not counted).
func SnapshotSize(e *Engine) int64 {
	var n int64
	e.below.walk(func(o op) { n += snapshotSize(o) })
	return n
}

// SetNewGroupsLag makes an aggregate look at the groups new in an epoch
// for finished ones mid-epoch once n more came after them (agg.go),
// until the returned func restores it.
func SetNewGroupsLag(n int) (restore func()) { return setKnob(&newGroupsLag, n) }

// SetSmallSteps makes an aggregate make its groups' rows chunk at a time
// (agg.go's flushChunk), look at new groups mid-epoch lag after them,
// and drop finished groups with no slack, as it does with millions of
// groups at full scale, until the returned func restores all three.
func SetSmallSteps(chunk, lag int) (restore func()) {
	c, l, s := setKnob(&flushChunk, chunk), SetNewGroupsLag(lag), SetDropSlack(0)
	return func() { c(); l(); s() }
}
