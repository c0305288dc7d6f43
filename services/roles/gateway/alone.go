package gateway

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/transport"
)

// SetSender gives the gateway its process's Sender, which sends a lost
// shard's channels again when the gateway rebuilds it alone. Without it
// (and without retained input) every loss runs the whole job again. Call
// it before serving.
func (g *Gateway) SetSender(s *transport.Sender) { g.sender = s }

// Vouches reports whether the gateway's Hellos on ch vouch for its sender
// (transport.Server.VouchFor): a shard the gateway rebuilt alone, which
// numbers its batches from 1 again.
func (g *Gateway) Vouches(ch transport.ChannelID) bool {
	g.alone.mu.Lock()
	defer g.alone.mu.Unlock()
	_, ok := g.alone.rebuilt[aloneKey{ch.Job, ch.Sender}]
	return ok
}

// alone is what the gateway remembers of the shards it rebuilt alone:
// per job and lost instance, the incarnation of the instance that was
// rebuilt. The gateway's Hellos vouch for those (Vouches), and the other
// channels' reports of the same loss (every channel to the instance finds
// it, each on its own link) rebuild nothing again; a loss of the rebuilt
// instance comes with a newer incarnation (its restart).
type alone struct {
	rebuilding sync.Mutex // one rebuild at a time: they are rare
	mu         sync.Mutex // guards rebuilt, which every Hello reads
	rebuilt    map[aloneKey]rebuiltAt
}

// rebuiltAt is the incarnation of an instance rebuilt alone, and when.
type rebuiltAt struct {
	inc uint64
	at  time.Time
}

// at is the rebuild of a job's instance, and whether there is one.
func (a *alone) at(k aloneKey) (rebuiltAt, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.rebuilt[k]
	return r, ok
}

// set records (r.inc > 0) or forgets (r.inc 0) a job's instance rebuilt.
func (a *alone) set(k aloneKey, r rebuiltAt) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.inc == 0 {
		delete(a.rebuilt, k)
		return
	}
	if a.rebuilt == nil {
		a.rebuilt = map[aloneKey]rebuiltAt{}
	}
	a.rebuilt[k] = r
}

type aloneKey struct{ job, instance string }

// keepBatches has the outbox keep the batches j sends until it is over
// (Outbox.Retain), if a lost shard of it could be rebuilt alone from
// them: the gateway retains input (its disk is there), and j is a batch
// job, not a standing one (its epochs have their own rebuild, and it may
// run for ever) nor a query added to one, nor over already (a restarted
// gateway's: dropKept). js.add calls it, as the job is created and as it
// is recovered, before any of its batches can be acknowledged.
func (js *jobs) keepBatches(j *job) {
	if js.inputs == nil || j.standing != nil || j.addedTo != "" || j.over() {
		return
	}
	js.outbox.Retain(j.id)
}

// over reports whether the job is done or failed.
func (j *job) over() bool {
	return j.state == wololov1.JobState_JOB_STATE_DONE || j.state == wololov1.JobState_JOB_STATE_FAILED
}

// dropKept trims the batches a job that a restarted gateway finds over
// may have kept (ji: what the store holds of it): a gateway stopped
// between the job's end and its letting go of them (dropInput) would
// otherwise keep them until the job is dropped. A trim of what is gone
// already is a small record, written without a sync.
func (js *jobs) dropKept(ji *transport.JobImage) {
	for ch, acked := range ji.Acked {
		if err := js.store.Trim(ch, acked); err != nil {
			js.log.Error("could not let go of the batches a job sent", "job", ch.Job, "channel", ch.String(), "error", err)
		}
	}
}

// letGo lets go of the batches the gateway kept of a job that is over to
// rebuild a lost shard alone (Outbox.Release). What it remembers of the
// shards it rebuilt goes with the job (jobs.dropped: alone.forget): a
// shard's catch-up may be acknowledged after the job's end.
func (g *Gateway) letGo(id string) {
	if err := g.jobs.outbox.Release(id); err != nil {
		g.cfg.Log.Error("could not let go of the batches a job sent", "job", id, "error", err)
	}
}

// forget drops what is remembered of a job (it is dropped).
func (a *alone) forget(job string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range a.rebuilt {
		if k.job == job {
			delete(a.rebuilt, k)
		}
	}
}

// rebuildAlone rebuilds the shard instance that lost a job's state alone,
// from the batches the gateway's outbox kept, when it can; it reports
// whether it did (or another report of the same loss did), in which case
// the loss is handled and the job goes on with its id. rebuild.go says
// why the answers stay exact and when it cannot (then the whole job runs
// again, runAgain).
func (g *Gateway) rebuildAlone(j *job, f *transport.JobFailure) bool {
	if g.sender == nil || f.Lost == "" || f.Reporter != g.self.Name() || len(j.plan) == 0 || j.standing != nil || j.addedTo != "" {
		return false
	}
	g.alone.rebuilding.Lock()
	defer g.alone.rebuilding.Unlock()
	key := aloneKey{j.id, f.Lost}
	inc := g.sender.Incarnation(f.Lost)
	if done, seen := g.alone.at(key); seen && done.inc == inc {
		// Another channel's report of the loss rebuilt it already. Its
		// own channel was rewound with the others, unless the report
		// raced the rewind: sending it again from where the shard's
		// Hello says is harmless either way.
		if _, err := g.sender.Rewind(j.id, f.Lost); err != nil {
			j.log.Error("could not send a channel to the rebuilt shard again", "lost", f.Lost, "error", err)
			return false
		}
		return true
	}
	p, err := physical.Decode(j.plan)
	if err != nil {
		return false
	}
	verdict, ok := shardAlone(p, f.Lost, g.cfg.Committer.Inbox().Marks(j.id))
	if !ok {
		if verdict != "" {
			j.log.Info("the lost shard cannot be rebuilt alone; the whole job runs again", "lost", f.Lost, "why", verdict)
		}
		return false
	}
	if n, running := j.rebuildCount(); !running || n >= g.cfg.MaxRebuilds {
		return false // over, or lost too often: runAgain says so
	}
	if err := g.cfg.Committer.Outbox().CanRewind(j.id, f.Lost); err != nil {
		j.log.Info("the lost shard cannot be rebuilt alone; the whole job runs again", "lost", f.Lost, "why", err)
		return false
	}
	at := time.Now()
	// The shard's Hellos are vouched for (Vouches) before it holds the
	// job again: it numbers its batches from 1, which the gateway may
	// have applied.
	prev, _ := g.alone.at(key)
	g.alone.set(key, rebuiltAt{inc, at})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.introducer(ctx, j.id, j.plan); err != nil {
		g.alone.set(key, prev)
		j.log.Error("could not introduce the job again to the shard that lost it; the whole job runs again", "lost", f.Lost, "error", err)
		return false
	}
	channels, err := g.sender.Rewind(j.id, f.Lost)
	if err != nil {
		g.alone.set(key, prev)
		j.log.Error("could not send the shard's channels again; the whole job runs again", "lost", f.Lost, "error", err)
		return false
	}
	line := fmt.Sprintf("state lost at %s UTC, found by %s: %s; %s", at.UTC().Format("15:04:05"), f.Reporter, strings.TrimSuffix(f.Reason, " and the job cannot complete"), aloneSays(f.Lost))
	if err := g.jobs.noteRebuild(j, line); err != nil {
		j.log.Error("could not record the shard's rebuild", "error", err)
	}
	j.log.Warn("a shard lost the job's state; it alone is rebuilt from the batches the gateway kept, the job goes on", "lost", f.Lost, "incarnation", inc, "channels", len(channels), "reason", f.Reason)
	return true
}

// shardCaughtUp hears from the outbox, on the link whose acknowledgement
// did it, that a job's instance it rewound has acknowledged again every
// batch it had been sent before it lost its state: the shard rebuilt
// alone holds what it held. It adds how long that took to the job's line
// of the rebuild, durably, and logs it. An instance the gateway no longer
// remembers (the job is over, or the gateway restarted meanwhile and
// checked it again: Sender.Check) is left unsaid. It waits for a rebuild
// under way (whose line it may be, and which writes the job's record
// too); a rebuild waits for no acknowledgement.
func (g *Gateway) shardCaughtUp(id, instance string) {
	g.alone.rebuilding.Lock()
	defer g.alone.rebuilding.Unlock()
	r, ok := g.alone.at(aloneKey{id, instance})
	j, err := g.jobs.get(id)
	if !ok || err != nil {
		return
	}
	took := time.Since(r.at).Round(time.Millisecond)
	if err := g.jobs.noteCaughtUp(j, instance, took); err != nil {
		j.log.Error("could not record the rebuilt shard's catch-up", "error", err)
	}
	j.log.Info("the shard rebuilt alone has caught up: it holds what it held before it lost the job's state", "lost", instance, "took", took)
}

// noteCaughtUp adds to the last line of the job's rebuilds that says
// instance was rebuilt alone how long it took to catch up, durably.
func (js *jobs) noteCaughtUp(j *job, instance string, took time.Duration) error {
	said := aloneSays(instance)
	return js.editRebuilds(j, func(lines []string) []string {
		for i := len(lines) - 1; i >= 0; i-- {
			if strings.HasSuffix(lines[i], said) {
				lines[i] += fmt.Sprintf(", and caught up in %s", took)
				break
			}
		}
		return lines
	})
}

// aloneSays is how a job's line of a rebuild ends when instance alone was
// rebuilt (before it caught up).
func aloneSays(instance string) string {
	return instance + " alone was rebuilt from the batches the gateway kept"
}

// noteRebuild adds a line to the job's rebuilds (Job.rebuilds), durably:
// a shard rebuilt alone counts towards Config.MaxRebuilds as a run of the
// whole job does.
func (js *jobs) noteRebuild(j *job, line string) error {
	return js.editRebuilds(j, func(lines []string) []string { return append(lines, line) })
}

// editRebuilds changes the job's rebuilds (Job.rebuilds) by edit, in
// memory (its watchers told) and in its record, durably. The callers
// hold alone.rebuilding: the record is read and written again.
func (js *jobs) editRebuilds(j *job, edit func([]string) []string) error {
	j.mu.Lock()
	j.rebuilds = edit(j.rebuilds)
	j.notifyLocked()
	j.mu.Unlock()
	return js.updateRecord(j.id, j.name, func(rec *wololov1.JobRecord) { rec.Rebuilds = edit(rec.Rebuilds) })
}

// shardAlone is the verdict on a lost instance of plan p, given the
// gateway's inbox watermarks of the job's channels: whether it alone can
// be rebuilt exactly (ok), and the verdict in words ("" when the lost
// instance is no shard of the plan).
func shardAlone(p *physical.Plan, lost string, marks map[transport.ChannelID]uint64) (verdict string, ok bool) {
	if in, err := deploy.ParseInstance(lost); err != nil || in.Stage != p.Shard.Name {
		return "", false
	}
	applied := map[string]uint64{}
	for ch, w := range marks {
		if ch.Sender == lost {
			applied[ch.Stream] = w
		}
	}
	if why := p.ShardLoss().Exact(applied); why != "" {
		return fmt.Sprintf("%s could not be rebuilt alone: %s", lost, why), false
	}
	return fmt.Sprintf("%s alone can be rebuilt exactly", lost), true
}
