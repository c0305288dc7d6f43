package durable

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// Options configure a Store.
type Options struct {
	// Log receives Pebble's messages (WAL replay, background errors). Nil
	// discards them.
	Log hclog.Logger
	// NoSync commits without waiting for the WAL to reach stable storage.
	// For benchmarks only: a Commit is then not durable when it returns.
	NoSync bool
	// OnSync, if set, is told how long every WAL sync took (for the
	// process's metrics). It must be quick and must not call the store.
	OnSync func(time.Duration)
}

// Pebble tuning; see "Tuning" in doc.go.
const (
	memTableSize       = 32 << 20
	memTableStopWrites = 2
	blockCacheSize     = 8 << 20
	maxOpenFiles       = 256
)

// ErrClosed is returned by every method called after Close.
var ErrClosed = errors.New("durable: store is closed")

// ErrFailed is returned by every write after one failed (see Store).
var ErrFailed = errors.New("durable: an earlier write failed; the store takes no more writes until the process restarts")

// Store is a transport.Store on a Pebble database.
type Store struct {
	db     *pebble.DB
	dir    string
	log    hclog.Logger
	noSync bool

	commits atomic.Int64
	bytes   atomic.Int64
	syncs   atomic.Int64

	// life is held shared by every call and exclusively by Close, so that
	// Close waits for calls in flight and no call reaches a closed DB
	// (Pebble panics on that).
	life   sync.RWMutex
	closed bool

	// failed is the first failed write (a WAL write or sync that failed:
	// disk full, I/O error). Pebble's commit pipeline does not come back
	// from one: the next write into it panics, and a flush rotating the
	// WAL panics too. So from then on every write is refused with
	// ErrFailed before it reaches Pebble, Close does not flush, and the
	// process is to restart from what the WAL holds, as after a crash.
	// wedged: a Pebble call panicked anyway (a write racing the failure)
	// and may have left its commit pipeline locked; Close then leaves the
	// database alone (the process is exiting; the OS releases it).
	failMu sync.Mutex
	failed error
	wedged atomic.Bool

	// mu orders the writes: whatever a write derives from earlier writes
	// (a job's state-log index, reserved and acked maxima, whether the job
	// exists) is read and the batch applied under mu, so that the order of
	// Pebble's sequence numbers is the order of those derivations. The WAL
	// sync is waited for outside mu, so concurrent commits share syncs.
	mu   sync.Mutex
	jobs map[string]*jobCache
}

// jobCache is what the store knows of a job's keys without reading them;
// filled lazily from the database, dropped with the job.
type jobCache struct {
	exists    bool
	nextState uint64 // index of the job's next state-log key
	reserved  map[transport.ChannelID]uint64
	acked     map[transport.ChannelID]uint64
}

var _ transport.Store = (*Store)(nil)

// Open opens (creating if needed) the store in dir.
func Open(dir string, opts Options) (*Store, error) { return open(dir, opts, vfs.Default) }

// open opens the store on a file system (tests inject faults through it).
func open(dir string, opts Options, fs vfs.FS) (*Store, error) {
	log := opts.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	s := &Store{dir: dir, log: log, noSync: opts.NoSync, jobs: map[string]*jobCache{}}
	// The store holds every job's data: only its user may read it.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("durable: open %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("durable: open %s: %w", dir, err)
	}
	plog := log.Named("pebble")
	po := &pebble.Options{
		FS:                          syncCountingFS{FS: fs, syncs: &s.syncs, onSync: opts.OnSync},
		Logger:                      pebbleLogger{plog},
		EventListener:               eventListener(plog),
		MemTableSize:                memTableSize,
		MemTableStopWritesThreshold: memTableStopWrites,
		CacheSize:                   blockCacheSize,
		MaxOpenFiles:                maxOpenFiles,
		// The newest format of v2.1.7; at least FormatWALSyncChunks is
		// needed for WAL replay to tell corruption from a torn tail.
		FormatMajorVersion: pebble.FormatValueSeparation,
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("durable: open %s: %w", dir, err)
	}
	s.db = db
	return s, nil
}

// IsCorruption tells whether an error of Open or another call is due to
// corrupt data (e.g. a WAL record that fails its checksum and is followed
// by valid ones), as opposed to an I/O or usage error.
func IsCorruption(err error) bool { return pebble.IsCorruptionError(err) }

// Dir returns the directory the store lives in.
func (s *Store) Dir() string { return s.dir }

func (s *Store) enter() error {
	s.life.RLock()
	if s.closed {
		s.life.RUnlock()
		return ErrClosed
	}
	return nil
}

func (s *Store) leave() { s.life.RUnlock() }

// enterWrite is enter for a write: it also refuses every write after one
// failed.
func (s *Store) enterWrite() error {
	if err := s.enter(); err != nil {
		return err
	}
	if err := s.failure(); err != nil {
		s.leave()
		return fmt.Errorf("%w (the first: %v)", ErrFailed, err)
	}
	return nil
}

// failure is the first failed write, if any.
func (s *Store) failure() error {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	return s.failed
}

// fail records a failed write: the first one is kept and logged.
func (s *Store) fail(err error) {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	if s.failed == nil {
		s.failed = err
		s.log.Error("write failed; the store refuses every write from now on", "dir", s.dir, "error", err)
	}
}

// get reads a key; a missing key is (nil, false, nil).
func (s *Store) get(key []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := append([]byte(nil), v...)
	return out, true, closer.Close()
}

func (s *Store) getU64(key []byte) (uint64, error) {
	v, ok, err := s.get(key)
	if err != nil || !ok {
		return 0, err
	}
	return parseU64(v)
}

// jobLocked returns the job's cache, reading it on first use: whether the
// job marker exists and the index after its last state-log key.
func (s *Store) jobLocked(job string) (*jobCache, error) {
	if j := s.jobs[job]; j != nil {
		return j, nil
	}
	j := &jobCache{reserved: map[transport.ChannelID]uint64{}, acked: map[transport.ChannelID]uint64{}}
	_, ok, err := s.get(jobPrefix(job))
	if err != nil {
		return nil, err
	}
	j.exists = ok
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: stateKey(job, 0), UpperBound: stateKey(job, math.MaxUint64)})
	if err != nil {
		return nil, err
	}
	if it.Last() {
		p, err := parseJobKey(it.Key())
		if err != nil {
			it.Close()
			return nil, err
		}
		j.nextState = p.n + 1
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	s.jobs[job] = j
	return j, nil
}

func (s *Store) reservedLocked(job string, j *jobCache, ch transport.ChannelID) (uint64, error) {
	if v, ok := j.reserved[ch]; ok {
		return v, nil
	}
	v, err := s.getU64(channelKey(job, kindReserved, ch))
	if err != nil {
		return 0, err
	}
	j.reserved[ch] = v
	return v, nil
}

func (s *Store) ackedLocked(j *jobCache, ch transport.ChannelID) (uint64, error) {
	if v, ok := j.acked[ch]; ok {
		return v, nil
	}
	v, err := s.getU64(channelKey(ch.Job, kindAcked, ch))
	if err != nil {
		return 0, err
	}
	j.acked[ch] = v
	return v, nil
}

// applyLocked applies b under s.mu and returns the function that waits for it
// to be durable (synced if sync), to be called after s.mu is released. A
// failure of either, or a panic of Pebble's, fails the store (fail).
func (s *Store) applyLocked(b *pebble.Batch, sync bool) (wait func() error, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.wedged.Store(true)
			wait, err = nil, fmt.Errorf("pebble panicked applying a batch: %v", p)
		}
		if err != nil {
			s.fail(err)
		}
	}()
	if !sync {
		return func() error { return nil }, s.db.Apply(b, pebble.NoSync)
	}
	if err := s.db.ApplyNoSyncWait(b, pebble.Sync); err != nil {
		return nil, err
	}
	return func() error {
		if err := b.SyncWait(); err != nil {
			s.fail(err)
			return err
		}
		return nil
	}, nil
}

// Commit writes c as one synced Pebble batch.
func (s *Store) Commit(c *transport.Commit) error {
	if err := s.commit(c); err != nil {
		return fmt.Errorf("durable: commit job %q: %w", c.Job, err)
	}
	return nil
}

func (s *Store) commit(c *transport.Commit) error {
	if err := checkJob(c.Job); err != nil {
		return err
	}
	for ch := range c.Inputs {
		if err := checkChannel(ch); err != nil {
			return err
		}
	}
	for _, e := range c.Outputs {
		if err := checkChannel(e.Channel); err != nil {
			return err
		}
	}
	if err := s.enterWrite(); err != nil {
		return err
	}
	defer s.leave()

	// Everything that does not depend on earlier writes is put in the
	// batch before taking mu. The batch is sized up front and the outputs
	// are encoded straight into it: no copy of a large batch but the
	// one in the batch.
	type output struct {
		key  []byte
		msg  *wololov1.Batch
		size int
	}
	const perKey = 16 // kind byte, two varint lengths, slack
	outs := make([]output, len(c.Outputs))
	size := 64 + len(c.State) + 4*len(c.Job)
	top := map[transport.ChannelID]uint64{}
	for i, e := range c.Outputs {
		o := output{key: outboxKey(c.Job, e.Channel, e.Seq), msg: &wololov1.Batch{Seq: e.Seq, Eof: e.EOF, Rows: e.Rows}}
		o.size = proto.Size(o.msg)
		outs[i] = o
		size += perKey + len(o.key) + o.size
		top[e.Channel] = max(top[e.Channel], e.Seq)
	}
	for ch := range c.Inputs {
		size += perKey + len(channelKey(c.Job, kindWatermark, ch)) + 8
	}
	for ch := range top { // the reserved marks, added under mu
		size += perKey + len(channelKey(c.Job, kindReserved, ch)) + 8
	}
	for name, v := range c.Records {
		size += perKey + len(recordKey(c.Job, name)) + len(v)
	}
	b := s.db.NewBatchWithSize(size)
	defer b.Close()
	for ch, wm := range c.Inputs {
		if err := b.Set(channelKey(c.Job, kindWatermark, ch), u64(wm), nil); err != nil {
			return err
		}
	}
	for i, o := range outs {
		op := b.SetDeferred(len(o.key), o.size)
		copy(op.Key, o.key)
		enc, err := proto.MarshalOptions{}.MarshalAppend(op.Value[:0], o.msg)
		if err != nil {
			return fmt.Errorf("encode %s #%d: %w", c.Outputs[i].Channel, o.msg.Seq, err)
		}
		if len(enc) != o.size || (o.size > 0 && &enc[0] != &op.Value[0]) {
			return fmt.Errorf("encode %s #%d: %d bytes, not in the %d reserved", c.Outputs[i].Channel, o.msg.Seq, len(enc), o.size)
		}
		if err := op.Finish(); err != nil {
			return err
		}
	}
	for name, v := range c.Records {
		if err := b.Set(recordKey(c.Job, name), v, nil); err != nil {
			return err
		}
	}

	s.mu.Lock()
	j, err := s.jobLocked(c.Job)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	wait, reserved, err := s.commitLocked(b, c, j, top)
	if err == nil {
		j.exists = true
		for ch, v := range reserved {
			j.reserved[ch] = v
		}
		if c.State != nil {
			j.nextState++
		}
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if err := wait(); err != nil {
		return err
	}
	s.commits.Add(1)
	s.bytes.Add(int64(b.Len()))
	return nil
}

// commitLocked completes and applies the batch; it returns the new
// reserved marks, for the cache once the batch is applied.
func (s *Store) commitLocked(b *pebble.Batch, c *transport.Commit, j *jobCache, top map[transport.ChannelID]uint64) (func() error, map[transport.ChannelID]uint64, error) {
	if !j.exists {
		if err := b.Set(jobPrefix(c.Job), nil, nil); err != nil {
			return nil, nil, err
		}
	}
	reserved := map[transport.ChannelID]uint64{}
	for ch, seq := range top {
		old, err := s.reservedLocked(c.Job, j, ch)
		if err != nil {
			return nil, nil, err
		}
		if seq > old {
			reserved[ch] = seq
			if err := b.Set(channelKey(c.Job, kindReserved, ch), u64(seq), nil); err != nil {
				return nil, nil, err
			}
		}
	}
	if c.ResetState && j.nextState > 0 {
		if err := b.DeleteRange(stateKey(c.Job, 0), stateKey(c.Job, j.nextState), nil); err != nil {
			return nil, nil, err
		}
	}
	if c.State != nil {
		if err := b.Set(stateKey(c.Job, j.nextState), c.State, nil); err != nil {
			return nil, nil, err
		}
	}
	wait, err := s.applyLocked(b, !s.noSync)
	return wait, reserved, err
}

// Trim deletes the channel's outbox entries up to seq and records the
// acked mark, without waiting for a sync.
func (s *Store) Trim(ch transport.ChannelID, seq uint64) error {
	if err := s.mark(ch, seq, true); err != nil {
		return fmt.Errorf("durable: trim %s to %d: %w", ch, seq, err)
	}
	return nil
}

// Acknowledge records the acked mark and keeps the channel's entries,
// without waiting for a sync: Load skips the entries at or below the
// mark, ReadOutbox reads them.
func (s *Store) Acknowledge(ch transport.ChannelID, seq uint64) error {
	if err := s.mark(ch, seq, false); err != nil {
		return fmt.Errorf("durable: acknowledge %s to %d: %w", ch, seq, err)
	}
	return nil
}

// mark raises the channel's acked mark to seq, deleting its entries up
// to it when trim is set (Trim) and keeping them when not (Acknowledge).
func (s *Store) mark(ch transport.ChannelID, seq uint64, trim bool) error {
	if err := checkChannel(ch); err != nil {
		return err
	}
	if err := s.enterWrite(); err != nil {
		return err
	}
	defer s.leave()
	b := s.db.NewBatch()
	defer b.Close()
	if trim {
		if err := b.DeleteRange(outboxKey(ch.Job, ch, 0), outboxEnd(ch.Job, ch, seq), nil); err != nil {
			return err
		}
	}
	return s.applyAcked(b, ch, seq)
}

// applyAcked completes b (a Trim's or an Acknowledge's) with the
// channel's acked mark raised to seq and applies it, without sync; it
// applies nothing for a job the store does not hold, as MemStore.
func (s *Store) applyAcked(b *pebble.Batch, ch transport.ChannelID, seq uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, err := s.jobLocked(ch.Job)
	if err != nil {
		return err
	}
	if !j.exists {
		return nil
	}
	acked, err := s.ackedLocked(j, ch)
	if err != nil {
		return err
	}
	acked = max(acked, seq)
	if err := b.Set(channelKey(ch.Job, kindAcked, ch), u64(acked), nil); err != nil {
		return err
	}
	if _, err := s.applyLocked(b, false); err != nil {
		return err
	}
	j.acked[ch] = acked
	return nil
}

// DropJob deletes the job's keys with one range deletion and writes its
// tombstone, synced.
func (s *Store) DropJob(job string) error {
	if err := s.dropJob(job); err != nil {
		return fmt.Errorf("durable: drop job %q: %w", job, err)
	}
	return nil
}

func (s *Store) dropJob(job string) error {
	if err := checkJob(job); err != nil {
		return err
	}
	if err := s.enterWrite(); err != nil {
		return err
	}
	defer s.leave()
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(jobPrefix(job), jobEnd(job), nil); err != nil {
		return err
	}
	if err := b.Set(tombstoneKey(job), nil, nil); err != nil {
		return err
	}
	s.mu.Lock()
	wait, err := s.applyLocked(b, !s.noSync)
	if err == nil {
		delete(s.jobs, job)
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if err := wait(); err != nil {
		return err
	}
	// Give the disk back now rather than at some later compaction: a
	// dropped job's data is dead weight.
	go s.compact(job, jobPrefix(job), jobEnd(job))
	return nil
}

// compact compacts job's key range in the background; it gives up quietly
// if the store closes first.
func (s *Store) compact(job string, start, end []byte) {
	if err := s.enterWrite(); err != nil {
		return
	}
	defer s.leave()
	if err := s.db.Compact(context.Background(), start, end, false); err != nil {
		s.log.Warn("compact dropped job range", "job", job, "error", err)
	}
}

// NextIncarnation reads the last number, writes the next one (one above,
// or atLeast if higher: transport.NextIncarnation), synced, and returns it.
func (s *Store) NextIncarnation(atLeast uint64) (uint64, error) {
	n, err := s.nextIncarnation(atLeast)
	if err != nil {
		return 0, fmt.Errorf("durable: next incarnation: %w", err)
	}
	return n, nil
}

func (s *Store) nextIncarnation(atLeast uint64) (uint64, error) {
	if err := s.enterWrite(); err != nil {
		return 0, err
	}
	defer s.leave()
	b := s.db.NewBatch()
	defer b.Close()
	s.mu.Lock()
	last, err := s.getU64(incarnationKey)
	if err != nil {
		s.mu.Unlock()
		return 0, err
	}
	n, err := transport.NextIncarnation(last, atLeast)
	if err != nil {
		s.mu.Unlock()
		return 0, err
	}
	if err := b.Set(incarnationKey, u64(n), nil); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	// Always synced, even with NoSync: the number must not be handed out
	// twice.
	wait, err := s.applyLocked(b, true)
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if err := wait(); err != nil {
		return 0, err
	}
	return n, nil
}

// Load scans the whole store (one consistent iterator) and builds the
// image.
func (s *Store) Load() (*transport.Image, error) {
	img, err := s.load()
	if err != nil {
		return nil, fmt.Errorf("durable: load %s: %w", s.dir, err)
	}
	return img, nil
}

func (s *Store) load() (*transport.Image, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	img := &transport.Image{Jobs: map[string]*transport.JobImage{}}
	it, err := s.db.NewIter(nil)
	if err != nil {
		return nil, err
	}
	err = loadIter(it, img)
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return img, nil
}

// ReadState hands each the job's state entries as an iterator over its
// state keys reads them, block by block, each entry copied out of the
// iterator's memory (valid only until it moves) to be the caller's.
func (s *Store) ReadState(job string, each func([]byte) error) error {
	if err := s.enter(); err != nil {
		return fmt.Errorf("durable: read state log of job %s in %s: %w", job, s.dir, err)
	}
	defer s.leave()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: stateKey(job, 0), UpperBound: stateKey(job, math.MaxUint64)})
	if err != nil {
		return fmt.Errorf("durable: read state log of job %s in %s: %w", job, s.dir, err)
	}
	err = readStateIter(it, each)
	if cerr := it.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("durable: read state log of job %s in %s: %w", job, s.dir, cerr)
	}
	return err
}

// ReadOutbox hands each the channel's entries from from on as an
// iterator over the channel's outbox keys reads them, each decoded out of
// the iterator's memory (proto.Unmarshal copies the rows) to be the
// caller's.
func (s *Store) ReadOutbox(ch transport.ChannelID, from uint64, each func(transport.Entry) error) error {
	wrap := func(err error) error {
		return fmt.Errorf("durable: read outbox of %s from %d in %s: %w", ch, from, s.dir, err)
	}
	if checkChannel(ch) != nil {
		return nil // no write takes such a channel: the store holds none of it
	}
	if err := s.enter(); err != nil {
		return wrap(err)
	}
	defer s.leave()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: outboxKey(ch.Job, ch, from), UpperBound: outboxEnd(ch.Job, ch, math.MaxUint64)})
	if err != nil {
		return wrap(err)
	}
	err = readOutboxIter(it, ch, each)
	if cerr := it.Close(); err == nil && cerr != nil {
		err = wrap(cerr)
	}
	return err
}

// readOutboxIter hands each the entries of ch that it iterates over; an
// error of each is returned as is, the iterator's and the decoder's
// wrapped.
func readOutboxIter(it *pebble.Iterator, ch transport.ChannelID, each func(transport.Entry) error) error {
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("durable: read outbox entry %q: %w", it.Key(), err)
		}
		k := it.Key()
		e, err := decodeEntry(ch, binary.BigEndian.Uint64(k[len(k)-8:]), v)
		if err != nil {
			return fmt.Errorf("durable: outbox entry %q: %w", k, err)
		}
		if err := each(e); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("durable: read outbox of %s: %w", ch, err)
	}
	return nil
}

// readStateIter hands each a copy of every value of it; an error of each
// is returned as is, the iterator's wrapped.
func readStateIter(it *pebble.Iterator, each func([]byte) error) error {
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("durable: read state entry %q: %w", it.Key(), err)
		}
		if err := each(bytes.Clone(v)); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("durable: read state log: %w", err)
	}
	return nil
}

// loadIter reads the image from it. A job's acked marks ("a") sort
// before its outbox entries ("o"), so a channel's mark is known when its
// entries come: those at or below it are skipped with one seek, unread.
func loadIter(it *pebble.Iterator, img *transport.Image) error {
	l := loader{img: img}
	for ok := it.First(); ok; {
		skipTo, err := l.key(it)
		if err != nil {
			return err
		}
		if skipTo != nil {
			ok = it.SeekGE(skipTo)
		} else {
			ok = it.Next()
		}
	}
	return it.Error()
}

// loader builds an image from the keys in order.
type loader struct {
	img    *transport.Image
	cur    *transport.JobImage
	curJob string
}

// key loads the iterator's key. It returns where to seek when the keys
// before that are to be skipped (the entries of a channel at or below its
// acked mark, kept by Acknowledge or committed at or below the mark:
// ReadOutbox's), else nil.
func (l *loader) key(it *pebble.Iterator) ([]byte, error) {
	k := it.Key()
	switch {
	case len(k) == 2 && k[0] == spaceMeta && k[1] == metaIncarnation:
	case len(k) >= 2 && k[0] == spaceMeta && k[1] == metaTombstone:
		l.img.Dropped = append(l.img.Dropped, string(k[2:])) // sorted by key order
	case len(k) >= 1 && k[0] == spaceJob:
		p, err := parseJobKey(k)
		if err != nil {
			return nil, err
		}
		if p.kind == 0 {
			l.cur, l.curJob = newJobImage(), p.job
			l.img.Jobs[p.job] = l.cur
			return nil, nil
		}
		if l.cur == nil || l.curJob != p.job {
			return nil, fmt.Errorf("key %q of job %q without its job marker", k, p.job)
		}
		if acked := l.cur.Acked[p.ch]; p.kind == kindOutbox && p.n <= acked {
			return outboxEnd(p.job, p.ch, acked), nil
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, err
		}
		if err := loadJobKey(l.cur, p, v); err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
	default:
		return nil, fmt.Errorf("unknown key %q", k)
	}
	return nil, nil
}

func loadJobKey(j *transport.JobImage, p jobKey, v []byte) error {
	switch p.kind {
	case kindWatermark, kindReserved, kindAcked:
		n, err := parseU64(v)
		if err != nil {
			return err
		}
		switch p.kind {
		case kindWatermark:
			j.Watermarks[p.ch] = n
		case kindReserved:
			j.Reserved[p.ch] = n
		default:
			j.Acked[p.ch] = n
		}
	case kindOutbox:
		e, err := decodeEntry(p.ch, p.n, v)
		if err != nil {
			return err
		}
		j.Outbox[p.ch] = append(j.Outbox[p.ch], e)
	case kindRecord:
		j.Records[p.name] = append([]byte{}, v...)
	case kindState: // ReadState's
	}
	return nil
}

// decodeEntry decodes the value of ch's outbox key of seq (a Batch,
// whose rows proto.Unmarshal copies: the caller's), checking that it
// holds that seq.
func decodeEntry(ch transport.ChannelID, seq uint64, v []byte) (transport.Entry, error) {
	var b wololov1.Batch
	if err := proto.Unmarshal(v, &b); err != nil {
		return transport.Entry{}, fmt.Errorf("decode outbox entry: %w", err)
	}
	if b.Seq != seq {
		return transport.Entry{}, fmt.Errorf("outbox entry holds seq %d", b.Seq)
	}
	return transport.Entry{Channel: ch, Seq: b.Seq, EOF: b.Eof, Rows: b.Rows}, nil
}

func newJobImage() *transport.JobImage {
	return &transport.JobImage{
		Watermarks: map[transport.ChannelID]uint64{},
		Reserved:   map[transport.ChannelID]uint64{},
		Acked:      map[transport.ChannelID]uint64{},
		Outbox:     map[transport.ChannelID][]transport.Entry{},
		Records:    map[string][]byte{},
	}
}

// Stats returns the counters since Open. Syncs counts the WAL syncs Pebble
// issued; under concurrent commits one sync covers several commits.
func (s *Store) Stats() transport.StoreStats {
	return transport.StoreStats{Commits: s.commits.Load(), Bytes: s.bytes.Load(), Syncs: s.syncs.Load()}
}

// Close flushes the memtable (so that the next Open replays no WAL) and
// closes the database. Calls after Close return ErrClosed. After a failed
// write it does not flush (Pebble panics or waits forever flushing onto a
// disk that failed it); the next Open replays the WAL instead. Close never
// panics.
func (s *Store) Close() (err error) {
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.wedged.Load() {
		return fmt.Errorf("durable: close %s: left open, Pebble is wedged since a failed write (%v); the process must exit", s.dir, s.failure())
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("durable: close %s: pebble panicked: %v", s.dir, p)
		}
	}()
	var ferr error
	if s.failure() == nil {
		ferr = s.db.Flush()
	}
	cerr := s.db.Close()
	if err := errors.Join(ferr, cerr); err != nil {
		return fmt.Errorf("durable: close %s: %w", s.dir, err)
	}
	return nil
}
