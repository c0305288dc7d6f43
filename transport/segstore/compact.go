package segstore

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/wololo/wololo/transport"
)

// The janitor is the store's one background goroutine: after every
// written group (and once at Open) it deletes the oldest segments that
// hold nothing live and compacts when the policy of doc.go says so; after
// IdleAfter without a write it may compact the current segment too.
func (s *Store) janitor() {
	defer close(s.janitorDone)
	var idle <-chan time.Time
	var timer *time.Timer
	if s.opts.IdleAfter > 0 {
		timer = time.NewTimer(s.opts.IdleAfter)
		defer timer.Stop()
		idle = timer.C
	}
	for {
		select {
		case <-s.quit:
			return
		case <-s.kick:
			s.maintain(false)
			if timer != nil {
				timer.Reset(s.opts.IdleAfter)
			}
		case done := <-s.compactReq:
			s.maintain(true)
			close(done)
		case <-idle:
			s.mu.Lock()
			quiet := time.Since(s.lastWrite)
			s.mu.Unlock()
			if quiet < s.opts.IdleAfter {
				timer.Reset(s.opts.IdleAfter - quiet)
				continue
			}
			s.maintain(true)
		}
	}
}

// Compact does now what the store does after IdleAfter without writes:
// it closes the current segment if the store's garbage is worth it,
// copies the live items of the old segments forward and deletes them. It
// returns once done (or once Close began).
func (s *Store) Compact() error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	done := make(chan struct{})
	select {
	case s.compactReq <- done:
	case <-s.quit:
		return ErrClosed
	}
	select {
	case <-done:
	case <-s.quit:
		return ErrClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return fmt.Errorf("segstore: compact: %w", s.failed)
	}
	return nil
}

func (s *Store) stopping() bool {
	select {
	case <-s.quit:
		return true
	default:
		return false
	}
}

func (s *Store) maintain(idle bool) {
	if err := s.deleteDead(); err != nil {
		s.log.Error("deleting a dead segment", "error", err)
		return
	}
	plan := s.plan(idle)
	if len(plan) == 0 || s.stopping() {
		return
	}
	if err := s.compact(plan); err != nil {
		s.log.Error("compaction", "error", err)
		return
	}
	if err := s.deleteDead(); err != nil {
		s.log.Error("deleting a dead segment", "error", err)
	}
}

// deleteDead deletes the oldest segments while they hold nothing live,
// once what killed their items is durable, oldest first, syncing the
// directory after each: a segment shadows only older ones, so the
// segments on disk are always a suffix of the log that replays to the
// same content.
func (s *Store) deleteDead() error {
	for !s.stopping() {
		s.mu.Lock()
		if s.failed != nil || len(s.order) < 2 {
			s.mu.Unlock()
			return nil
		}
		n := s.order[0]
		st := s.ix.segs[n]
		if st.liveItems > 0 {
			s.mu.Unlock()
			return nil
		}
		if s.durable.less(st.lastKill) {
			s.admitLocked()
			if err := s.syncLocked(); err != nil {
				s.mu.Unlock()
				return err
			}
		}
		s.mu.Unlock()

		s.deleteMu.Lock()
		err := s.fs.Remove(s.path(n))
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		if err == nil {
			err = s.fs.SyncDir(s.dir)
		}
		if err != nil {
			s.deleteMu.Unlock()
			return err
		}
		s.mu.Lock()
		f := s.files[n]
		delete(s.files, n)
		delete(s.ix.segs, n)
		if s.order[0] != n {
			panic("segstore: segments deleted by two goroutines")
		}
		s.order = s.order[1:]
		s.mu.Unlock()
		f.Close()
		s.deleteMu.Unlock()
		s.deletions.Add(1)
		s.log.Debug("deleted a dead segment", "segment", segName(n))
	}
	return nil
}

// plan returns the segments to compact, oldest first, or nil. The old
// segments (all but the current one) are compacted when their garbage is
// at least one segment and more than their live bytes; when idle, the
// current segment is closed and counted as old if that brings the store's
// garbage to idleGarbage (or one segment, if less) and more than its live
// bytes. The segments compacted are the prefix of the old ones that
// frees the most: garbage minus live bytes copied.
func (s *Store) plan(idle bool) []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return nil
	}
	s.admitLocked() // plan may close the current segment
	isOld := func(n uint64) bool { return n != s.cur }
	size, live := s.ix.totals(isOld)
	due := size-live >= s.opts.SegmentSize && 2*live < size
	if !due && idle {
		all, allLive := s.ix.totals(func(uint64) bool { return true })
		if all-allLive >= min(idleGarbage, s.opts.SegmentSize) && 2*allLive < all && s.curOff > s.curStart {
			s.rotateLocked()
			due = true
		}
	}
	if !due {
		return nil
	}
	var best, gain int64
	k := 0
	for i, n := range s.order[:len(s.order)-1] {
		st := s.ix.segs[n]
		gain += st.size - 2*st.liveBytes
		if gain > best {
			best, k = gain, i+1
		}
	}
	return slices.Clone(s.order[:k])
}

// bigRef is an outbox entry with rows or a state entry to copy forward.
type bigRef struct {
	job   string
	ch    transport.ChannelID
	entry *entryItem
	state *stateItem
	seg   uint64
	ext   extent
}

func (r *bigRef) dead() bool {
	if r.entry != nil {
		return r.entry.dead
	}
	return r.state.dead
}

// compact copies the live items of segments plan (a prefix of the
// order) to the end of the log, in copy records of about copyChunk bytes:
// entries and state entries are read back (each record once, verified),
// small values are taken from memory. Each copy record is a set of puts
// of current values, so copies can be split and repeated freely.
// Afterwards the segments hold nothing live; deleteDead removes them.
func (s *Store) compact(plan []uint64) error {
	last := plan[len(plan)-1]
	s.mu.Lock()
	// The last records of a segment just closed may still be queued:
	// what was queued before now must be written before it is read back
	// (what is queued later goes to the current segment).
	if err := s.drainLocked(); err != nil {
		s.mu.Unlock()
		return err
	}
	var refs []bigRef
	files := map[uint64]File{}
	for id, j := range s.ix.jobs {
		for ch, q := range j.outbox {
			for _, e := range q {
				if e.seg <= last && e.hasRows {
					refs = append(refs, bigRef{job: id, ch: ch, entry: e, seg: e.seg, ext: e.ext})
				}
			}
		}
		for _, st := range j.state {
			if st.seg <= last {
				refs = append(refs, bigRef{job: id, state: st, seg: st.seg, ext: st.ext})
			}
		}
	}
	for _, n := range plan {
		files[n] = s.files[n]
	}
	s.mu.Unlock()
	slices.SortFunc(refs, func(a, b bigRef) int {
		if c := cmp.Compare(a.seg, b.seg); c != 0 {
			return c
		}
		return cmp.Compare(a.ext.off, b.ext.off)
	})
	s.compactions.Add(1)
	s.log.Debug("compacting", "segments", len(plan), "through", segName(last), "items_to_read", len(refs))

	enc := newCopyEncoder()
	var batch []*bigRef
	rd := extentReader{files: files}
	for i := range refs {
		if s.stopping() {
			return nil
		}
		r := &refs[i]
		data, err := rd.read(r.seg, r.ext)
		if err != nil {
			return err
		}
		if r.entry != nil {
			enc.add(copyItem{tag: tagEntry, job: r.job, ch: r.ch, v: r.entry.seq, eof: r.entry.eof, hasRows: true}, data)
		} else {
			enc.add(copyItem{tag: tagState, job: r.job, v: r.state.n}, data)
		}
		batch = append(batch, r)
		if len(enc.b) >= copyChunk {
			if err := s.appendCopy(enc, batch, 0); err != nil {
				return err
			}
			enc, batch = newCopyEncoder(), nil
		}
	}
	return s.appendCopy(enc, batch, last)
}

// appendCopy appends a copy record of the items of enc still live (those
// of batch that died meanwhile are left out) and, when through is not 0,
// of every small value held in segments up to through, then waits until
// it is durable.
func (s *Store) appendCopy(enc *copyEncoder, batch []*bigRef, through uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admitLocked()
	if s.failed != nil {
		return s.failed
	}
	if slices.ContainsFunc(batch, (*bigRef).dead) {
		live := newCopyEncoder()
		for i, it := range enc.items {
			if !batch[i].dead() {
				live.add(it, enc.b[it.dataOff:it.dataOff+it.dataLen])
			}
		}
		enc = live
	}
	if through != 0 {
		s.addSmallLocked(enc, through)
	}
	if len(enc.items) == 0 {
		return nil
	}
	p := appendTrailer(enc.b, 0)
	size := int64(frameLen + len(p))
	s.placeLocked(size)
	putTrailer(p, s.syncedOff)
	a := s.appendLocked(size, frameRecord(p))
	s.ix.apply(&record{kind: kindCopy, items: enc.items}, a, p)
	s.copied.Add(size)
	return s.syncLocked()
}

// addSmallLocked adds to enc every small live value held in segments up
// to through: job markers, watermarks, reserved and acked marks, records,
// entries without rows, tombstones and the incarnation.
func (s *Store) addSmallLocked(enc *copyEncoder, through uint64) {
	old := func(it *item) bool { return it != nil && !it.dead && it.seg <= through }
	for id, j := range s.ix.jobs {
		if old(j.marker) {
			enc.add(copyItem{tag: tagJob, job: id}, nil)
		}
		for tag, m := range map[byte]map[transport.ChannelID]*valItem{tagWatermark: j.watermarks, tagReserved: j.reserved, tagAcked: j.acked} {
			for ch, v := range m {
				if old(&v.item) {
					enc.add(copyItem{tag: tag, job: id, ch: ch, v: v.v}, nil)
				}
			}
		}
		for name, r := range j.records {
			if old(&r.item) {
				enc.add(copyItem{tag: tagRecord, job: id, name: name}, r.v)
			}
		}
		for ch, q := range j.outbox {
			for _, e := range q {
				if old(&e.item) && !e.hasRows {
					enc.add(copyItem{tag: tagEntry, job: id, ch: ch, v: e.seq, eof: e.eof}, nil)
				}
			}
		}
	}
	for id, t := range s.ix.tombstones {
		if old(t) {
			enc.add(copyItem{tag: tagTombstone, job: id}, nil)
		}
	}
	if inc := s.ix.incarnation; inc != nil && old(&inc.item) {
		enc.add(copyItem{tag: tagIncarnation, v: inc.v}, nil)
	}
}
