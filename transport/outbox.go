package transport

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Outbox holds, per channel, the batches a process has committed and not yet
// seen acknowledged. It numbers them (for the Committer), makes them visible to the
// channel's sender (Publish, after the commit), trims them on acknowledgement
// (Ack) and tells the stage runtime when a job has room for more (WaitRoom).
type Outbox struct {
	mu    sync.Mutex
	store Store
	jobs  map[string]map[ChannelID]*queue
	// retained are the jobs whose acknowledged batches stay in the store
	// (Store.Acknowledge, not Trim) until they are released, so that a
	// receiver rebuilt from nothing can be sent them again (Rewind).
	retained map[string]bool
	stalls   map[string]*stall // backpressure per job, for metrics
	// caughtUp hears of a rewound receiver once it has acknowledged again
	// what it was behind (NotifyCaughtUp, queue.behind).
	caughtUp func(job, receiver string)
	changed  chan struct{}    // closed and replaced on every change
	now      func() time.Time // the clock the stalls are timed by (tests set theirs)
}

// NotifyCaughtUp has f told, on the goroutine of the acknowledgement that
// did it (a link's: f may block it a while, never on the link itself),
// when a receiver whose channels were rewound (Rewind) has acknowledged
// again every batch they had committed then: it holds what it held
// before it lost its state. A receiver rewound when nothing had been
// committed to it is not told of. A Release leaves the count going: a
// job can end while its acknowledgements are on their way (they come on
// other streams than its results). Call it before Rewind.
func (o *Outbox) NotifyCaughtUp(f func(job, receiver string)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.caughtUp = f
}

// Stall is how often and how long a job's emitters waited for room in the
// outbox (WaitRoom): backpressure, since the process started. A wait
// counts from when it begins, and its time as it passes, so that a stage
// blocked on a receiver that does not acknowledge shows it while it lasts.
type Stall struct {
	Waits  int64
	Waited time.Duration
}

// stall is a job's Stall as of since, and the WaitRoom calls blocked now,
// each adding its time from since on.
type stall struct {
	Stall
	blocked int
	since   time.Time
}

// at is the stall as of now.
func (s *stall) at(now time.Time) Stall {
	st := s.Stall
	st.Waited += time.Duration(s.blocked) * now.Sub(s.since)
	return st
}

// blocking changes the calls blocked now by delta (+1 as a wait begins, -1
// as it ends).
func (s *stall) blocking(now time.Time, delta int) {
	s.Stall = s.at(now)
	s.since = now
	s.blocked += delta
	if delta > 0 {
		s.Waits++
	}
}

type queue struct {
	reserved  uint64 // last sequence number handed out
	acked     uint64 // highest sequence number acknowledged
	entries   []Entry
	eofSeq    uint64 // sequence number of the EOF entry, once published
	connected bool
	// lastErr is why the link's last attempt ended (SetLinkError), until
	// the receiver acknowledges a batch: what a channel that stays
	// unacknowledged is stuck on, for Status.
	lastErr string
	lost    bool // a Hello showed the channel's state lost (CheckHello)
	// resend is, after a Rewind, the last batch to be read back from the
	// store (batches acked+1..resend are there, not in entries): the
	// last one committed, while the receiver catches up.
	resend uint64
	// behind is, after a Rewind, the last batch the channel had committed
	// then, until the receiver acknowledges it again (0: nothing to catch
	// up on); NotifyCaughtUp's.
	behind uint64
	// What this process committed to the channel since it started
	// (Publish; restored entries are not counted again): for Status and
	// metrics, counted once per batch.
	batches, rows, bytes int64
}

// ChannelState describes one outbound channel, for Status.
type ChannelState struct {
	Channel   ChannelID
	LastSeq   uint64
	Acked     uint64
	Depth     int
	Connected bool
	Done      bool
	// LastError is why the link's last attempt failed, when no batch was
	// acknowledged since ("" otherwise).
	LastError string
	// Batches, Rows and Bytes (the encoded rows' size) committed to the
	// channel by this process since it started.
	Batches, Rows, Bytes int64
}

// NewOutbox returns an empty outbox that trims through store.
func NewOutbox(store Store) *Outbox {
	return &Outbox{store: store, jobs: map[string]map[ChannelID]*queue{}, stalls: map[string]*stall{}, retained: map[string]bool{}, changed: make(chan struct{}), now: time.Now}
}

// Retain makes the outbox keep a job's acknowledged batches in the
// store, until the job is released (Release), so that a receiver that
// loses its state can be sent its channels again from the start
// (Rewind). Call it before the job's first acknowledgement: the gateway
// does, for the jobs it could rebuild a lost shard of, when it creates
// them and when it recovers them. What it costs is the disk the batches
// take until their job ends; memory holds only what is not acknowledged,
// as without it.
func (o *Outbox) Retain(job string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.retained[job] = true
}

// Release lets a job's acknowledged batches go (they are trimmed from
// the store now, and from then on on acknowledgement): nothing will ask
// for them again (the job is over). A job that was not retained has
// nothing to let go.
func (o *Outbox) Release(job string) error {
	o.mu.Lock()
	if !o.retained[job] {
		o.mu.Unlock()
		return nil
	}
	delete(o.retained, job)
	trim := map[ChannelID]uint64{}
	for ch, q := range o.jobs[job] {
		q.resend = 0 // behind stays: the receiver's acknowledgements still come (NotifyCaughtUp)
		trim[ch] = q.acked
	}
	o.mu.Unlock()
	for ch, seq := range trim {
		if err := o.store.Trim(ch, seq); err != nil {
			return fmt.Errorf("release outbox %s to %d: %w", ch, seq, err)
		}
	}
	return nil
}

// RetainedChannels lists the channels of the jobs the outbox retains,
// sorted: after a restart they are checked (Sender.Check), since a
// receiver being sent one again when the process stopped (a Rewind, which
// memory alone held) would otherwise wait for it for ever.
func (o *Outbox) RetainedChannels() []ChannelID {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []ChannelID
	for job := range o.retained {
		for ch := range o.jobs[job] {
			out = append(out, ch)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Rewind makes every channel of job to receiver send again from its
// first batch, read back from the store: the receiver lost its state and
// starts from nothing (or from what its Hello says it holds), and the
// channels are no longer marked lost. It needs the outbox to retain the
// job's batches (Retain, not released since) and the store to hold each
// channel's batches from 1 (CanRewind); it returns the channels it
// rewound, whose links the Sender starts again (Sender.Rewind).
func (o *Outbox) Rewind(job, receiver string) ([]ChannelID, error) {
	if err := o.CanRewind(job, receiver); err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []ChannelID
	for ch, q := range o.jobs[job] {
		if ch.Receiver != receiver {
			continue
		}
		// Everything committed so far is read back from the store, the
		// batches not yet acknowledged too: memory holds none of the
		// channel's while the receiver catches up (Publish).
		q.resend = max(q.resend, q.acked)
		if n := len(q.entries); n > 0 {
			q.resend = max(q.resend, q.entries[n-1].Seq)
		}
		q.behind = max(q.behind, q.resend)
		q.entries = nil
		q.acked, q.lost = 0, false
		out = append(out, ch)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	o.notifyLocked()
	return out, nil
}

// behindLocked reports whether a channel of job to receiver has batches
// it was behind at a Rewind still to acknowledge again.
func (o *Outbox) behindLocked(job, receiver string) bool {
	for ch, q := range o.jobs[job] {
		if ch.Receiver == receiver && q.behind != 0 {
			return true
		}
	}
	return false
}

// CanRewind says why job's channels to receiver could not be sent again
// from their first batch (Rewind), nil if they can: the outbox retains
// the job's batches and the store holds each channel's from 1 (a job
// whose batches were trimmed, under a version or a configuration that
// did not retain them, cannot).
func (o *Outbox) CanRewind(job, receiver string) error {
	o.mu.Lock()
	if !o.retained[job] {
		o.mu.Unlock()
		return fmt.Errorf("the outbox does not keep job %s's acknowledged batches", job)
	}
	var check []ChannelID
	for ch, q := range o.jobs[job] {
		if ch.Receiver == receiver && q.reserved > 0 {
			check = append(check, ch)
		}
	}
	o.mu.Unlock()
	for _, ch := range check {
		first := uint64(0)
		err := o.store.ReadOutbox(ch, 1, func(e Entry) error {
			first = e.Seq
			return errStopReading
		})
		if err != nil && !errors.Is(err, errStopReading) {
			return fmt.Errorf("read back %s: %w", ch, err)
		}
		if first != 1 {
			return fmt.Errorf("the store no longer holds the first batch of %s", ch)
		}
	}
	return nil
}

// errStopReading ends a ReadOutbox early.
var errStopReading = errors.New("enough read")

// resendWindow is how many batches read back from the store (after a
// Rewind) a link holds at once.
const resendWindow = 8

// readBack reads the channel's batches after after, up to resend, at most
// resendWindow of them, from the store.
func (o *Outbox) readBack(ch ChannelID, after, resend uint64) ([]Entry, error) {
	var out []Entry
	err := o.store.ReadOutbox(ch, after+1, func(e Entry) error {
		if e.Seq > resend || len(out) == resendWindow {
			return errStopReading
		}
		if want := after + 1 + uint64(len(out)); e.Seq != want {
			return fmt.Errorf("batch %d is missing (found %d)", want, e.Seq)
		}
		e.Channel = ch
		out = append(out, e)
		return nil
	})
	if err != nil && !errors.Is(err, errStopReading) {
		return nil, fmt.Errorf("%w: read back the batches of %s after %d: %w", ErrStateLost, ch, after, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: batch %d of %s is missing from the store", ErrStateLost, after+1, ch)
	}
	return out, nil
}

func (o *Outbox) queueLocked(ch ChannelID) *queue {
	chans := o.jobs[ch.Job]
	if chans == nil {
		chans = map[ChannelID]*queue{}
		o.jobs[ch.Job] = chans
	}
	q := chans[ch]
	if q == nil {
		q = &queue{}
		chans[ch] = q
	}
	return q
}

func (o *Outbox) notifyLocked() {
	close(o.changed)
	o.changed = make(chan struct{})
}

// number gives the entries the next sequence numbers of their channels, in
// order. Only the Committer calls it, and only one step at a time emits on
// a channel.
func (o *Outbox) number(entries []Entry) {
	if len(entries) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := range entries {
		q := o.queueLocked(entries[i].Channel)
		q.reserved++
		entries[i].Seq = q.reserved
	}
}

// giveBack returns the numbers of entries that were never committed, so the
// next step numbers from where the store is. They must be the last numbers
// handed out on their channels: anything else is a broken invariant (two
// emitters on one channel).
func (o *Outbox) giveBack(entries []Entry) {
	if len(entries) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		q := o.jobs[e.Channel.Job][e.Channel]
		if q == nil {
			continue // the channel was dropped meanwhile
		}
		if q.reserved != e.Seq {
			panic(fmt.Sprintf("transport: giving back seq %d of %s, but %d was handed out since", e.Seq, e.Channel, q.reserved))
		}
		q.reserved--
	}
}

// Restore sets a channel's counters after a restart: the last sequence number
// reserved, the highest acknowledged one and the entries still
// unacknowledged. It reports whether the channel still has work (entries to
// send, or its EOF not yet acknowledged).
func (o *Outbox) Restore(ch ChannelID, reserved, acked uint64, pending []Entry) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.queueLocked(ch)
	q.reserved, q.acked = reserved, acked
	q.entries = q.entries[:0]
	for _, e := range pending {
		if e.Seq <= acked {
			continue // the trim was not yet durable
		}
		q.entries = append(q.entries, e)
		if e.EOF {
			q.eofSeq = e.Seq
		}
	}
	o.notifyLocked()
	return len(q.entries) > 0
}

// DropChannel forgets one channel (its receiver dropped the job) and trims
// it from the store.
func (o *Outbox) DropChannel(ch ChannelID) error {
	o.mu.Lock()
	var last uint64
	if chans := o.jobs[ch.Job]; chans != nil {
		if q := chans[ch]; q != nil {
			last = q.reserved
		}
		delete(chans, ch)
		if len(chans) == 0 {
			delete(o.jobs, ch.Job)
			delete(o.stalls, ch.Job)
		}
	}
	o.notifyLocked()
	o.mu.Unlock()
	if last == 0 {
		return nil
	}
	return o.store.Trim(ch, last)
}

// CheckHello checks a receiver's Hello against what the channel has seen:
// the receiver's watermark can be neither below the highest sequence number
// it acknowledged (it lost applied batches: its store was wiped or
// replaced) nor above the last one this sender numbered (this sender lost
// batches it sent: its own store was). Either is ErrStateLost, and the
// channel is marked lost; a process restarted on the same store never
// trips it, since both ends keep those numbers durably. A receiver that
// vouches that this sender was rebuilt (senderRebuilt:
// Hello.sender_rebuilt) may be above what it numbered: the sender
// numbers the same batches again, and those up to the watermark count as
// acknowledged.
func (o *Outbox) CheckHello(ch ChannelID, watermark uint64, senderRebuilt bool) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.queueLocked(ch)
	var err error
	switch {
	case watermark < q.acked:
		err = lost(ch.Receiver, fmt.Errorf("%w: %s is at batch %d of %s from %s but had acknowledged batch %d, so %s lost this job's state (its store wiped or replaced?) and the job cannot complete",
			ErrStateLost, ch.Receiver, watermark, ch.Stream, ch.Sender, q.acked, ch.Receiver))
	case watermark > q.reserved && !senderRebuilt:
		err = lost(ch.Sender, fmt.Errorf("%w: %s has applied batch %d of %s from %s but %s numbered only %d, so %s lost this job's state (its store wiped or replaced?) and the job cannot complete",
			ErrStateLost, ch.Receiver, watermark, ch.Stream, ch.Sender, ch.Sender, q.reserved, ch.Sender))
	}
	if err != nil {
		q.lost = true
	}
	return err
}

// idle reports whether a channel has nothing to send.
func (o *Outbox) idle(ch ChannelID) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.jobs[ch.Job][ch]
	return q == nil || (len(q.entries) == 0 && q.acked >= q.resend)
}

// markLost marks a channel lost (its receiver does not know the job).
func (o *Outbox) markLost(ch ChannelID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queueLocked(ch).lost = true
}

// isLost reports whether a channel is marked lost still: a Rewind clears
// the mark.
func (o *Outbox) isLost(ch ChannelID) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.jobs[ch.Job][ch]
	return q != nil && q.lost
}

// channelsTo lists the channels to a receiver instance that are not lost.
func (o *Outbox) channelsTo(receiver string) []ChannelID {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []ChannelID
	for _, chans := range o.jobs {
		for ch, q := range chans {
			if ch.Receiver == receiver && !q.lost {
				out = append(out, ch)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Publish makes committed entries visible to their channels' senders.
func (o *Outbox) Publish(entries []Entry) {
	if len(entries) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range entries {
		q := o.queueLocked(e.Channel)
		q.batches++
		q.rows += int64(e.Count)
		q.bytes += int64(len(e.Rows))
		q.reserved = max(q.reserved, e.Seq) // numbered by the Committer already, unless a test publishes by hand
		if e.EOF {
			q.eofSeq = e.Seq
		}
		if e.Seq <= q.acked {
			continue // the receiver already has it (it told us in Hello)
		}
		if q.resend > q.acked {
			// The receiver catches up after a Rewind: the batch is read
			// back from the store with the others (it is there: published
			// once committed), and takes no room here, so that what
			// feeds the channel does not wait for the catching up.
			q.resend = max(q.resend, e.Seq)
			continue
		}
		q.entries = append(q.entries, e)
	}
	o.notifyLocked()
}

// Ack records that the receiver has committed everything up to seq, trims
// the outbox and the store, and reports whether the channel is complete
// (its EOF is acknowledged).
func (o *Outbox) Ack(ch ChannelID, seq uint64) (done bool, err error) {
	o.mu.Lock()
	q := o.queueLocked(ch)
	if seq <= q.acked {
		done = q.eofSeq != 0 && q.acked >= q.eofSeq
		o.mu.Unlock()
		return done, nil
	}
	q.acked = seq
	q.lastErr = ""
	i := 0
	for i < len(q.entries) && q.entries[i].Seq <= seq {
		i++
	}
	q.entries = q.entries[i:]
	done = q.eofSeq != 0 && q.acked >= q.eofSeq
	retain := o.retained[ch.Job]
	var told func(job, receiver string)
	if q.behind != 0 && seq >= q.behind {
		q.behind = 0
		if !o.behindLocked(ch.Job, ch.Receiver) {
			told = o.caughtUp
		}
	}
	o.notifyLocked()
	o.mu.Unlock()
	if told != nil {
		told(ch.Job, ch.Receiver)
	}
	if retain {
		if err := o.store.Acknowledge(ch, seq); err != nil {
			return done, fmt.Errorf("acknowledge outbox %s to %d: %w", ch, seq, err)
		}
		return done, nil
	}
	if err := o.store.Trim(ch, seq); err != nil {
		return done, fmt.Errorf("trim outbox %s to %d: %w", ch, seq, err)
	}
	return done, nil
}

// Pending blocks until the channel has entries above after, and returns
// them (the slice must not be modified). After a Rewind the first ones
// are read back from the store, a few at a time. It returns
// errChannelDone once the channel's EOF is acknowledged (by a Hello that
// vouched for a rebuilt sender, say, before the sender numbered it).
func (o *Outbox) Pending(ctx context.Context, ch ChannelID, after uint64) ([]Entry, error) {
	for {
		o.mu.Lock()
		q := o.queueLocked(ch)
		if after < q.resend {
			resend := q.resend
			o.mu.Unlock()
			return o.readBack(ch, after, resend)
		}
		if q.eofSeq != 0 && q.acked >= q.eofSeq {
			o.mu.Unlock()
			return nil, errChannelDone
		}
		i := sort.Search(len(q.entries), func(i int) bool { return q.entries[i].Seq > after })
		if i < len(q.entries) {
			out := q.entries[i:len(q.entries):len(q.entries)]
			o.mu.Unlock()
			return out, nil
		}
		wait := o.changed
		o.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wait:
		}
	}
}

// WaitRoom blocks until each of the given channels holds fewer than limit
// unacknowledged batches. Callers pass the channels they emit on: a
// process that both sends and receives for a job (the gateway) must not
// stall its receiving side on its sending side's backlog.
func (o *Outbox) WaitRoom(ctx context.Context, channels []ChannelID, limit int) error {
	var blocked *stall // this call's job's, once it blocks
	defer func() {
		if blocked != nil {
			o.mu.Lock()
			blocked.blocking(o.now(), -1)
			o.mu.Unlock()
		}
	}()
	for {
		o.mu.Lock()
		full, wait := o.fullLocked(channels, limit), o.changed
		if full && blocked == nil {
			blocked = o.stallLocked(channels[0].Job)
			blocked.blocking(o.now(), +1)
		}
		o.mu.Unlock()
		if !full {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wait:
		}
	}
}

// Waiting is how many WaitRoom calls are blocked for room right now.
func (o *Outbox) Waiting() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, st := range o.stalls {
		n += st.blocked
	}
	return n
}

// stallLocked is a job's stall record, made on first use. A record of a
// job dropped meanwhile is no longer in stalls: what is counted on it is
// forgotten with the job.
func (o *Outbox) stallLocked(job string) *stall {
	st := o.stalls[job]
	if st == nil {
		st = &stall{}
		o.stalls[job] = st
	}
	return st
}

// Stalled is a job's backpressure so far: the waits for room in the
// outbox and their total time.
func (o *Outbox) Stalled(job string) Stall {
	o.mu.Lock()
	defer o.mu.Unlock()
	if st := o.stalls[job]; st != nil {
		return st.at(o.now())
	}
	return Stall{}
}

// Jobs lists the jobs with outbound channels, sorted.
func (o *Outbox) Jobs() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]string, 0, len(o.jobs))
	for job := range o.jobs {
		out = append(out, job)
	}
	sort.Strings(out)
	return out
}

// HasRoom reports whether every channel holds fewer than limit batches
// (WaitRoom would not wait).
func (o *Outbox) HasRoom(channels []ChannelID, limit int) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.fullLocked(channels, limit)
}

func (o *Outbox) fullLocked(channels []ChannelID, limit int) bool {
	for _, ch := range channels {
		if q := o.jobs[ch.Job][ch]; q != nil && len(q.entries) >= limit {
			return true
		}
	}
	return false
}

// SetConnected records whether a channel's stream is up, for Status.
func (o *Outbox) SetConnected(ch ChannelID, up bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queueLocked(ch).connected = up
}

// SetLinkError records why a channel's link's attempt failed (a refused
// connection, a receiver that is not serving, a broken stream), for
// Status; an acknowledgement clears it.
func (o *Outbox) SetLinkError(ch ChannelID, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if q := o.jobs[ch.Job][ch]; q != nil {
		q.lastErr = err.Error()
	}
}

// Channels describes a job's outbound channels, sorted by name.
func (o *Outbox) Channels(job string) []ChannelState {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []ChannelState
	for ch, q := range o.jobs[job] {
		depth := len(q.entries)
		if q.resend > q.acked {
			depth += int(q.resend - q.acked) // to be read back from the store
		}
		out = append(out, ChannelState{
			Channel: ch, LastSeq: q.reserved, Acked: q.acked, Depth: depth,
			Connected: q.connected, Done: q.eofSeq != 0 && q.acked >= q.eofSeq, LastError: q.lastErr,
			Batches: q.batches, Rows: q.rows, Bytes: q.bytes,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Channel.String() < out[j].Channel.String() })
	return out
}

// DropJob forgets a job's channels.
func (o *Outbox) DropJob(job string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.jobs, job)
	delete(o.stalls, job)
	delete(o.retained, job)
	o.notifyLocked()
}
