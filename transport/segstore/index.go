package segstore

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/wololo/wololo/transport"
)

// The index is the store's content in memory, minus the bytes of outbox
// entries and state-log entries (only where they lie on disk), plus the
// accounting of which segment holds how much live data. It does no I/O:
// the same apply functions build it from the records replayed at Open and
// from the records the store appends, so both always agree.

// pos is a position in the log: a segment and an offset in it.
type pos struct {
	seg uint64
	off int64
}

func (p pos) less(q pos) bool { return p.seg < q.seg || p.seg == q.seg && p.off < q.off }

// at is where a record lies: its segment, the offset of its frame and its
// length (frame and payload).
type at struct {
	seg uint64
	off int64
	len int64
}

func (a at) end() pos { return pos{a.seg, a.off + a.len} }

// extent returns the segment range of payload bytes [off, off+n).
func (a at) extent(off, n int) extent {
	return extent{rec: a.off, recLen: a.len, off: a.off + frameLen + int64(off), n: int64(n)}
}

// segStat is the accounting of one segment.
type segStat struct {
	size      int64 // bytes of records, written or on their way
	liveItems int64
	liveBytes int64
	// lastKill is the end of the newest record that killed an item of the
	// segment: once liveItems is 0 the segment may go when the log is
	// durable up to lastKill (else a crash could lose the killer and keep
	// nothing of what it killed, or the other way round).
	lastKill pos
}

// item is anything live in the store: it lives in one segment and counts
// size bytes there. A killed item is dead for good; a value that is
// replaced or copied forward is a new item.
type item struct {
	seg  uint64
	size int64
	dead bool
}

// extent is where an item's bytes lie: within the record at rec (recLen
// bytes with its frame), the n bytes at segment offset off.
type extent struct {
	rec, recLen int64
	off, n      int64
}

type valItem struct {
	item
	v uint64
}

type recItem struct {
	item
	v []byte
}

type entryItem struct {
	item
	ext     extent // the rows, when hasRows
	seq     uint64
	eof     bool
	hasRows bool
}

type stateItem struct {
	item
	ext extent
	n   uint64
}

// reservedSize is what a reserved mark counts: it rides in an outbox
// entry's bytes but outlives the entry.
const reservedSize = 16

type jobState struct {
	marker     *item // the job exists: the newest commit (or its copy)
	watermarks map[transport.ChannelID]*valItem
	reserved   map[transport.ChannelID]*valItem
	acked      map[transport.ChannelID]*valItem
	records    map[string]*recItem
	outbox     map[transport.ChannelID][]*entryItem // sorted by seq
	state      []*stateItem                         // sorted by n
	next       uint64                               // the next state-log index
}

type index struct {
	segs        map[uint64]*segStat
	jobs        map[string]*jobState
	tombstones  map[string]*item
	incarnation *valItem
}

func newIndex() *index {
	return &index{segs: map[uint64]*segStat{}, jobs: map[string]*jobState{}, tombstones: map[string]*item{}}
}

func (ix *index) seg(n uint64) *segStat {
	s := ix.segs[n]
	if s == nil {
		s = &segStat{}
		ix.segs[n] = s
	}
	return s
}

func (ix *index) job(id string) *jobState {
	j := ix.jobs[id]
	if j == nil {
		j = &jobState{
			watermarks: map[transport.ChannelID]*valItem{},
			reserved:   map[transport.ChannelID]*valItem{},
			acked:      map[transport.ChannelID]*valItem{},
			records:    map[string]*recItem{},
			outbox:     map[transport.ChannelID][]*entryItem{},
		}
		ix.jobs[id] = j
	}
	return j
}

// add makes it live in segment a.seg.
func (ix *index) add(it *item, a at, size int64) {
	it.seg, it.size = a.seg, size
	s := ix.seg(a.seg)
	s.liveItems++
	s.liveBytes += size
}

// kill makes it dead, by the record that ends at by. Nil is a no-op.
func (ix *index) kill(it *item, by pos) {
	if it == nil || it.dead {
		return
	}
	it.dead = true
	s := ix.segs[it.seg]
	s.liveItems--
	s.liveBytes -= it.size
	if s.lastKill.less(by) {
		s.lastKill = by
	}
}

// apply applies a record that lies at a (replay and append alike);
// payload is the record's payload (for a commit being appended, its body
// is enough).
func (ix *index) apply(r *record, a at, payload []byte) {
	ix.seg(a.seg).size += a.len
	switch r.kind {
	case kindCommit:
		ix.applyCommit(r.commit, a)
	case kindTrim:
		ix.applyTrim(r.trimCh, r.trimTo, a)
	case kindAck:
		ix.raiseAcked(ix.job(r.trimCh.Job), r.trimCh, r.trimTo, a)
	case kindDrop:
		ix.applyDrop(r.job, a)
	case kindIncarnation:
		ix.putIncarnation(r.inc, a, a.len)
	case kindCopy:
		for i := range r.items {
			ix.applyItem(&r.items[i], a, payload)
		}
	}
}

// applyCommit applies a commit; record values are copied.
func (ix *index) applyCommit(c *commitRec, a at) {
	by := a.end()
	j := ix.job(c.job)
	// The marker counts the record's bytes that no part accounts for.
	marker := a.len
	for _, op := range c.inputs {
		marker -= int64(op.size)
		ix.putVal(j.watermarks, op.ch, op.v, a, int64(op.size), false)
	}
	for _, op := range c.outputs {
		marker -= int64(op.size)
		e := &entryItem{seq: op.seq, eof: op.eof, hasRows: op.hasRows}
		if op.hasRows {
			e.ext = a.extent(op.rowsOff, op.rowsLen)
		}
		ix.putEntry(j, op.ch, e, a, int64(op.size))
		if r := j.reserved[op.ch]; r == nil || op.seq > r.v {
			ix.putVal(j.reserved, op.ch, op.seq, a, reservedSize, false)
		}
	}
	for _, op := range c.records {
		marker -= int64(op.size)
		ix.putRecord(j, op.name, bytes.Clone(op.value), a, int64(op.size))
	}
	if c.reset {
		i := 0
		for i < len(j.state) && j.state[i].n < c.n {
			ix.kill(&j.state[i].item, by)
			i++
		}
		j.state = slices.Delete(j.state, 0, i)
	}
	j.next = max(j.next, c.n)
	if c.hasState {
		marker -= int64(c.stateSz)
		ix.putState(j, &stateItem{ext: a.extent(c.stateOff, c.stateLen), n: c.n}, a, int64(c.stateSz))
	}
	ix.kill(j.marker, by)
	j.marker = &item{}
	ix.add(j.marker, a, max(marker, 1))
}

// applyTrim applies a trim. The store writes one only for a job that
// exists; on replay the job may have its marker in a later record (a copy
// made by compaction), so the trim creates the job. An ack likewise.
func (ix *index) applyTrim(ch transport.ChannelID, seq uint64, a at) {
	by := a.end()
	j := ix.job(ch.Job)
	q := j.outbox[ch]
	i := 0
	for i < len(q) && q[i].seq <= seq {
		ix.kill(&q[i].item, by)
		i++
	}
	if i == len(q) {
		delete(j.outbox, ch)
	} else if i > 0 {
		j.outbox[ch] = slices.Delete(q, 0, i)
	}
	ix.raiseAcked(j, ch, seq, a)
}

// raiseAcked makes seq the channel's acked mark if it is higher, the
// record at a (a trim or an ack, nothing else) its item. An ack applies
// it alone: the entries at or below the mark stay live items, in the
// outbox, copied by compaction like any other; image leaves them out.
func (ix *index) raiseAcked(j *jobState, ch transport.ChannelID, seq uint64, a at) {
	if old := j.acked[ch]; old == nil || seq > old.v {
		ix.putVal(j.acked, ch, seq, a, a.len, false)
	}
}

func (ix *index) applyDrop(job string, a at) {
	by := a.end()
	if j := ix.jobs[job]; j != nil {
		ix.killJob(j, by)
		delete(ix.jobs, job)
	}
	ix.kill(ix.tombstones[job], by)
	t := &item{}
	ix.add(t, a, a.len)
	ix.tombstones[job] = t
}

func (ix *index) killJob(j *jobState, by pos) {
	ix.kill(j.marker, by)
	for _, m := range []map[transport.ChannelID]*valItem{j.watermarks, j.reserved, j.acked} {
		for _, v := range m {
			ix.kill(&v.item, by)
		}
	}
	for _, r := range j.records {
		ix.kill(&r.item, by)
	}
	for _, q := range j.outbox {
		for _, e := range q {
			ix.kill(&e.item, by)
		}
	}
	for _, s := range j.state {
		ix.kill(&s.item, by)
	}
}

// applyItem applies one item of a copy record: a value put again, which
// replaces the item it was copied from.
func (ix *index) applyItem(it *copyItem, a at, payload []byte) {
	size := int64(it.size)
	switch it.tag {
	case tagJob:
		j := ix.job(it.job)
		ix.kill(j.marker, a.end())
		j.marker = &item{}
		ix.add(j.marker, a, size)
	case tagWatermark:
		ix.putVal(ix.job(it.job).watermarks, it.ch, it.v, a, size, false)
	case tagReserved:
		ix.putVal(ix.job(it.job).reserved, it.ch, it.v, a, size, true)
	case tagAcked:
		ix.putVal(ix.job(it.job).acked, it.ch, it.v, a, size, true)
	case tagRecord:
		v := bytes.Clone(payload[it.dataOff : it.dataOff+it.dataLen])
		ix.putRecord(ix.job(it.job), it.name, v, a, size)
	case tagEntry:
		e := &entryItem{seq: it.v, eof: it.eof, hasRows: it.hasRows}
		if it.hasRows {
			e.ext = a.extent(it.dataOff, it.dataLen)
		}
		ix.putEntry(ix.job(it.job), it.ch, e, a, size)
	case tagState:
		j := ix.job(it.job)
		ix.putState(j, &stateItem{ext: a.extent(it.dataOff, it.dataLen), n: it.v}, a, size)
	case tagTombstone:
		ix.kill(ix.tombstones[it.job], a.end())
		t := &item{}
		ix.add(t, a, size)
		ix.tombstones[it.job] = t
	case tagIncarnation:
		ix.putIncarnation(it.v, a, size)
	}
}

// putVal replaces m[ch]; with atLeast (the maxima: reserved, acked) only
// by a value at least as high, else the new value is dead on arrival.
func (ix *index) putVal(m map[transport.ChannelID]*valItem, ch transport.ChannelID, v uint64, a at, size int64, atLeast bool) {
	old := m[ch]
	if atLeast && old != nil && v < old.v {
		return
	}
	if old != nil {
		ix.kill(&old.item, a.end())
	}
	n := &valItem{v: v}
	ix.add(&n.item, a, size)
	m[ch] = n
}

func (ix *index) putRecord(j *jobState, name string, v []byte, a at, size int64) {
	if old := j.records[name]; old != nil {
		ix.kill(&old.item, a.end())
	}
	r := &recItem{v: v}
	ix.add(&r.item, a, size)
	j.records[name] = r
}

func (ix *index) putIncarnation(v uint64, a at, size int64) {
	if ix.incarnation != nil {
		if v < ix.incarnation.v {
			return
		}
		ix.kill(&ix.incarnation.item, a.end())
	}
	ix.incarnation = &valItem{v: v}
	ix.add(&ix.incarnation.item, a, size)
}

// putEntry inserts e in seq order; an entry of the same seq is replaced.
func (ix *index) putEntry(j *jobState, ch transport.ChannelID, e *entryItem, a at, size int64) {
	ix.add(&e.item, a, size)
	q := j.outbox[ch]
	if n := len(q); n == 0 || q[n-1].seq < e.seq {
		j.outbox[ch] = append(q, e)
		return
	}
	i, found := searchSeq(q, e.seq)
	if found {
		ix.kill(&q[i].item, a.end())
		q[i] = e
		return
	}
	j.outbox[ch] = slices.Insert(q, i, e)
}

// searchSeq returns where seq is or would be in q, a channel's entries
// (sorted by seq, each seq once), and whether it is there.
func searchSeq(q []*entryItem, seq uint64) (int, bool) {
	return slices.BinarySearchFunc(q, seq, func(x *entryItem, seq uint64) int { return cmp.Compare(x.seq, seq) })
}

// putState inserts s in index order; an entry of the same index is
// replaced.
func (ix *index) putState(j *jobState, s *stateItem, a at, size int64) {
	ix.add(&s.item, a, size)
	j.next = max(j.next, s.n+1)
	q := j.state
	if n := len(q); n == 0 || q[n-1].n < s.n {
		j.state = append(q, s)
		return
	}
	i, found := slices.BinarySearchFunc(q, s.n, func(x *stateItem, n uint64) int { return cmp.Compare(x.n, n) })
	if found {
		ix.kill(&q[i].item, a.end())
		q[i] = s
		return
	}
	j.state = slices.Insert(q, i, s)
}

// trimmable reports whether a Trim or an Acknowledge of ch does
// anything: MemStore ignores them for a job it does not hold.
func (ix *index) trimmable(ch transport.ChannelID) bool { return ix.jobs[ch.Job] != nil }

// stateAfter returns where the job's first state entry of index n or
// more lies, and its index; false when it has none.
func (ix *index) stateAfter(job string, n uint64) (*stateItem, bool) {
	j := ix.jobs[job]
	if j == nil {
		return nil, false
	}
	i, _ := slices.BinarySearchFunc(j.state, n, func(x *stateItem, n uint64) int { return cmp.Compare(x.n, n) })
	if i == len(j.state) {
		return nil, false
	}
	return j.state[i], true
}

// entryFrom returns the channel's first untrimmed entry of seq from or
// more; false when it has none.
func (ix *index) entryFrom(ch transport.ChannelID, from uint64) (*entryItem, bool) {
	j := ix.jobs[ch.Job]
	if j == nil {
		return nil, false
	}
	q := j.outbox[ch]
	i, _ := searchSeq(q, from)
	if i == len(q) {
		return nil, false
	}
	return q[i], true
}

// nextState returns the job's next state-log index.
func (ix *index) nextState(job string) uint64 {
	if j := ix.jobs[job]; j != nil {
		return j.next
	}
	return 0
}

// read is a piece of the image that Load reads from disk.
type read struct {
	seg   uint64
	ext   extent
	entry *transport.Entry // rows go here
}

// image returns the image of everything but the bytes of entries, and
// where to read those, the state logs (read by ReadState) and the entries
// at or below their channel's acked mark (read by ReadOutbox).
func (ix *index) image() (*transport.Image, []read) {
	img := &transport.Image{Jobs: map[string]*transport.JobImage{}}
	var reads []read
	for id, j := range ix.jobs {
		ji := &transport.JobImage{
			Watermarks: map[transport.ChannelID]uint64{},
			Reserved:   map[transport.ChannelID]uint64{},
			Acked:      map[transport.ChannelID]uint64{},
			Outbox:     map[transport.ChannelID][]transport.Entry{},
			Records:    map[string][]byte{},
		}
		for ch, v := range j.watermarks {
			ji.Watermarks[ch] = v.v
		}
		for ch, v := range j.reserved {
			ji.Reserved[ch] = v.v
		}
		for ch, v := range j.acked {
			ji.Acked[ch] = v.v
		}
		for name, r := range j.records {
			ji.Records[name] = bytes.Clone(r.v)
		}
		for ch, q := range j.outbox {
			if m := j.acked[ch]; m != nil {
				i, found := searchSeq(q, m.v)
				if found {
					i++
				}
				q = q[i:]
			}
			if len(q) == 0 {
				continue
			}
			es := make([]transport.Entry, len(q))
			for i, e := range q {
				es[i] = transport.Entry{Channel: ch, Seq: e.seq, EOF: e.eof}
				if e.hasRows {
					reads = append(reads, read{seg: e.seg, ext: e.ext, entry: &es[i]})
				}
			}
			ji.Outbox[ch] = es
		}
		img.Jobs[id] = ji
	}
	for id := range ix.tombstones {
		img.Dropped = append(img.Dropped, id)
	}
	slices.Sort(img.Dropped)
	return img, reads
}

// totals sums the accounting of the segments for which keep is true.
func (ix *index) totals(keep func(uint64) bool) (size, live int64) {
	for n, s := range ix.segs {
		if keep(n) {
			size += s.size
			live += s.liveBytes
		}
	}
	return size, live
}
