package incr

// SetDropSlack makes the slack of finished groups an aggregate holds
// before it drops them n (finish.go), until the returned func restores it.
func SetDropSlack(n int) (restore func()) {
	was := dropSlack
	dropSlack = n
	return func() { dropSlack = was }
}

// HeldGroups is the groups whose state the engine's aggregates over rows
// that only arrive hold, and the keys of the groups they dropped.
func HeldGroups(e *Engine) (held, dropped int) {
	e.below.walk(func(o op) {
		if a, ok := o.(*aggOp); ok {
			held += a.agg.Groups()
			if a.fin != nil {
				dropped += len(a.fin.doneSlots())
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

// SetFlushChunk makes an aggregate make its groups' rows at an epoch's
// end n at a time (agg.go), until the returned func restores it.
func SetFlushChunk(n int) (restore func()) {
	was := flushChunk
	flushChunk = n
	return func() { flushChunk = was }
}

// SetNewGroupsLag makes an aggregate look at the groups new in an epoch
// for finished ones mid-epoch once n more came after them (agg.go),
// until the returned func restores it.
func SetNewGroupsLag(n int) (restore func()) {
	was := newGroupsLag
	newGroupsLag = n
	return func() { newGroupsLag = was }
}
