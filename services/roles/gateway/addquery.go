package gateway

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/jobid"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
)

// Added queries (QueryJobRequest.add, `wololo client query --job ID
// --query NAME=F.sql`): a query added to an open standing job is kept up
// like the job's own from the epoch it is added at. The gateway runs it
// as an internal standing job of those queries (JobRecord.added_to names
// the job it follows), owned by the same client, whose epochs are the
// job's: epoch K of both has the same rows. Its epochs so far are
// replayed at once from the job's retained copies (retain.go), as a
// materialized view backfills from its source; each later epoch is
// opened and replayed once the job has committed it (keepUp), and the
// added job is closed once the job is closed and every epoch is in. The
// replay is the one that runs a lost standing job again
// (rebuildstanding.go, replayEpochs), reading the job's copies instead of
// its own.
//
// The job shows the added queries' versions as its own (Records forwards
// them): version K of an added query is its epoch K's, byte-equal to the
// query as a batch job over the rows of epochs 1..K; an epoch after the
// one it was added at is published only once the added queries have it
// too, so that a client that sees epoch K published gets every query's.
// Its final results include them (their last version). Deleting or
// failing the job deletes its added queries' jobs, and its retained
// input is kept until they have read every epoch of it.
//
// A job run again after a lost state (rebuildstanding.go) keeps its
// added queries: the added job follows the new run (followRun), whose
// copies are the same, and gives it its versions so far.
//
// An append that --epoch-every cuts into several epochs is replayed into
// the added job as the job's epochs cut it (replayCuts, at the rows of
// the job's EpochEnd records), once the job has committed it: its epochs
// are published together at its end, not while it uploads.
//
// What it does not do yet: take an added query away; show it to a
// WatchAnswers already past the epoch it was added at before the next;
// publish the epochs cut in an append while it uploads; run its job
// again when a process loses that job's state (it has no retained input
// of its own: it fails, and its queries' versions stop).

// addedPrefix begins the name of an added query's job: a name no client
// chooses (jobid.Valid refuses the dot), as a one-off query's.
const addedPrefix = "added."

// follows links a standing job and the jobs of the queries added to it;
// the job's mu guards it.
type follows struct {
	// parent is, for an added query's job, the standing job it follows
	// (the run it was added to: follow gives the run now).
	parent *job
	// added are, for a standing job, the jobs of its added queries.
	added []*job
	// behind counts the added jobs that still read the job's retained
	// epochs (keepUp runs): its input is dropped once it is over and
	// none does.
	behind int
}

// addQueries adds queries to the owner's open standing job name, and
// returns once their versions of the epochs published so far are (the
// epoch they are added at, returned).
func (g *Gateway) addQueries(ctx context.Context, owner, name string, queries []*wololov1.Query) (int64, error) {
	if len(queries) == 0 {
		return 0, errorf(ErrInvalid, "no query to add")
	}
	j, err := g.jobs.lookup(owner, name)
	if err != nil {
		return 0, err
	}
	j = j.follow()
	switch {
	case j.standing == nil:
		return 0, errorf(ErrNotStanding, "job %q is a batch job: a query is added to an open standing job (submit with --standing)", j.name)
	case j.addedTo != "":
		return 0, errorf(ErrInvalid, "job %q is the job of a query added to another: add the query to that one", j.name)
	case g.jobs.inputs == nil:
		return 0, errorf(ErrNotStanding, "the gateway retains no input (no data directory, or --retain-input=false): it has no rows of job %q to compute an added query's first version from", j.name)
	}
	if c, err := j.takesQueries(queries); c != nil || err != nil {
		if err != nil {
			return 0, err
		}
		return c.addedAt, j.waitAdded(ctx, c) // a retry of the same add
	}
	jp, first, err := g.planOver(ctx, owner, j, queries)
	if err != nil {
		return 0, err
	}
	if err := jp.standing(g.jobs.makeStanding); err != nil {
		return 0, err
	}
	// No epoch ends, and the job does not close, while it is added.
	j.epochMu.Lock()
	c, err := g.addLocked(j, jp, first, queries)
	j.epochMu.Unlock()
	if err != nil {
		return 0, err
	}
	c.log.Info("query added to a standing job", "standing", j.id, "at-epoch", c.addedAt, "queries", len(queries))
	go g.keepUp(c)
	return c.addedAt, j.waitAdded(ctx, c)
}

// addLocked makes the job of queries added to j (planned as jp over
// epoch 1's headers, first) at its last published epoch, once every
// epoch so far is whole in the retained copies with the columns the
// queries read; j.epochMu is held.
func (g *Gateway) addLocked(j *job, jp *jobPlan, first []*wololov1.FileRecord, queries []*wololov1.Query) (*job, error) {
	if c, err := j.takesQueries(queries); c != nil || err != nil {
		if err == nil {
			err = errorf(ErrConflict, "job %q: the same queries are being added by another call", j.name)
		}
		return nil, err
	}
	appends, at, err := j.queryable()
	if err != nil {
		return nil, err
	}
	parts, err := g.jobs.queryParts(j, appends, first)
	if err != nil {
		return nil, err
	}
	if err := partsHaveColumns(parts[len(j.files):], jp); err != nil {
		return nil, err
	}
	c, dropped, err := g.jobs.createAdded(j, jp, first, at)
	for _, id := range dropped {
		g.forgetIntroduction(id)
	}
	g.queueDrops(dropped...)
	if err != nil {
		return nil, err
	}
	g.cfg.Counters.JobCreated()
	return c, nil
}

// takesQueries reports why queries cannot be added to j (closed, over,
// or a name the job's results have already), or, when the same queries
// were added already (a client's retry), their job.
func (j *job) takesQueries(queries []*wololov1.Query) (*job, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.failureLocked(); err != nil {
		return nil, err
	}
	if j.standing.closed || j.state == wololov1.JobState_JOB_STATE_DONE {
		return nil, errorf(ErrNotStanding, "job %q is closed: a query is added to an open standing job", j.name)
	}
	print := queriesPrint(queries)
	for _, c := range j.follows.added {
		if c.queriesPrint == print {
			return c, nil
		}
	}
	v := j.standing.versions
	for _, q := range queries {
		file := q.GetName() + ".csv"
		if _, added := v.added[file]; added || slices.Contains(v.names, file) {
			return nil, errorf(ErrConflict, "job %q has a query %q already: name the added query otherwise", j.name, q.GetName())
		}
	}
	return nil, nil
}

// createAdded makes the internal standing job of queries jp added to of
// at epoch at, durably (JobRecord.added_to), its epoch 1 of of's files
// (first, their headers), and links it to of.
func (js *jobs) createAdded(of *job, jp *jobPlan, first []*wololov1.FileRecord, at int64) (*job, []string, error) {
	id := jobid.New()
	rec := &wololov1.JobRecord{
		CreatedUnixMs: time.Now().UnixMilli(), Owner: of.owner, Name: addedPrefix + id,
		MaxMalformed: proto.Float64(1), // the standing job took these rows already
		Standing:     true, Tables: of.tableNames(), Queries: jp.queries, Plan: jp.plan, Files: first,
		AddedTo: of.id, AddedAt: at,
	}
	c, err := js.newJob(id, rec, jp.decoded)
	if err != nil {
		return nil, nil, err
	}
	dropped, err := js.admitInternal(c, rec)
	if err != nil {
		return nil, dropped, err
	}
	link(of, c)
	return c, dropped, nil
}

// link makes c follow p: p's versions take c's from the epoch c was
// added at, and p's retained input is kept for c.
func link(p, c *job) {
	c.mu.Lock()
	c.follows.parent = p
	c.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.follows.added = append(p.follows.added, c)
	p.follows.behind++
	for _, name := range c.resultFiles() {
		p.standing.versions.added[name] = c.addedAt
	}
}

// followRun makes the added query's job c follow p, the run of its
// standing job now, if it followed another: a run that replaced it after
// a lost state (rebuildstanding.go), which publishes its versions again
// from epoch 1 and retains the same copies. Durably: c's description
// names p from then on (JobRecord.added_to), for a restarted gateway.
func (js *jobs) followRun(c, p *job) error {
	c.mu.Lock()
	linked := c.follows.parent
	held := c.standing.versions.clone()
	c.mu.Unlock()
	if linked == p {
		return nil
	}
	if err := js.updateRecord(c.id, c.name, func(rec *wololov1.JobRecord) { rec.AddedTo = p.id }); err != nil {
		return fmt.Errorf("job %q: follow the new run of its job: %w", c.name, err)
	}
	link(p, c)
	p.mu.Lock()
	p.standing.versions.merge(held)
	p.notifyLocked()
	p.mu.Unlock()
	c.log.Info("the added query follows its job's new run", "run", p.id)
	return nil
}

// notAdded refuses a client's append or close of an added query's job:
// its epochs are its job's, and it closes with it.
func (j *job) notAdded() error {
	if j.addedTo != "" {
		return errorf(ErrNotStanding, "job %q is the job of a query added to another: it takes that job's epochs, and closes with it", j.name)
	}
	return nil
}

// parentRun is the run of the standing job an added query's job follows.
func (c *job) parentRun() *job {
	c.mu.Lock()
	p := c.follows.parent
	c.mu.Unlock()
	return p.follow()
}

// waitAdded waits until j's version of the epoch c was added at has c's
// queries' answers (the backfill is published), or c fails, or ctx ends.
func (j *job) waitAdded(ctx context.Context, c *job) error {
	names := c.resultFiles()
	for {
		j = j.follow() // a run that replaced it publishes the versions again
		j.mu.Lock()
		ver, changed := j.standing.versions.byEpoch[c.addedAt], j.changed
		has := ver != nil
		for _, name := range names {
			_, ok := ver.files[name]
			has = has && ok
		}
		j.mu.Unlock()
		if has {
			return nil
		}
		if err := c.failure(); err != nil {
			return errorf(ErrJobFailed, "the added query failed: %v", err)
		}
		select {
		case <-changed:
		case <-c.failed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// followed is where a standing job stands, as an added query's job
// follows it.
type followed struct {
	committed, epochs int64
	closed            bool
	err               error // its failure or deletion
	changed           <-chan struct{}
	// replaced: a run that took p over (rebuild.go) holds the job now,
	// and p changes no more: the follower follows that run instead. It
	// is read with the rest, under p's lock, so that a follower that
	// read c.parentRun() just before the replacement and this just
	// after does not wait on p for ever.
	replaced bool
}

func (p *job) followed() followed {
	p.mu.Lock()
	defer p.mu.Unlock()
	return followed{committed: p.standing.committed, epochs: p.standing.appendCount(), closed: p.standing.closed, err: p.failureLocked(), changed: p.changed, replaced: p.replaced != nil}
}

// keepUp feeds the added query's job c its parent's epochs: what it has
// of its own not in yet (a backfill, or a replay a restart broke), then
// each epoch the parent commits, opened with the parent's headers and
// replayed from its copies; once the parent is closed and c has every
// epoch, c is closed too. It ends with c, or deletes c when the parent
// fails or is deleted.
func (g *Gateway) keepUp(c *job) {
	ctx, cancel := replayContext(c)
	defer cancel()
	defer g.caughtUp(c)
	for {
		p := c.parentRun()
		if err := g.jobs.followRun(c, p); err != nil {
			g.replayFailed(c, c.files[0], "of the standing job's new run, for an added query", err)
			return
		}
		st := p.followed()
		if st.replaced {
			continue // follow the run that replaced p
		}
		if st.err != nil {
			if err := g.deleteJob(c.id, "its standing job is over: "+st.err.Error()); err != nil {
				c.log.Error("delete an added query's job with its standing job", "error", err)
			}
			return
		}
		if fs, err := g.replayEpochs(ctx, c, p.id); err != nil {
			g.replayFailed(c, fs, "of the standing job's epoch, for an added query", err)
			return
		}
		c.mu.Lock()
		n, done, changed := c.standing.committed, c.standing.appendCount() == c.standing.committed, c.changed
		c.mu.Unlock()
		switch {
		case done && n < st.committed:
			if err := g.jobs.openFollowed(c, p, n+1); err != nil {
				g.replayFailed(c, c.files[0], "of the standing job's epoch, for an added query", err)
				return
			}
			continue
		case done && st.closed && n == st.epochs:
			if _, err := g.closeJob(ctx, c); err != nil {
				g.replayFailed(c, c.files[0], "of the standing job's close, for an added query", err)
			}
			return
		}
		select {
		case <-st.changed:
		case <-changed:
		case <-c.failed:
			return
		}
	}
}

// openFollowed opens epoch k of the added query's job c with the files
// its parent p's epoch k has (their headers as p retains them).
func (js *jobs) openFollowed(c, p *job, k int64) error {
	headers, err := js.retainedHeaders(p, k)
	if err != nil {
		return err
	}
	plan, err := physical.Decode(c.plan)
	if err != nil {
		return fmt.Errorf("job %s: its plan: %w", c.id, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.standing.appendCount() >= k {
		return nil
	}
	_, err = js.openEpochLocked(c, &wololov1.EpochRecord{CreatedUnixMs: time.Now().UnixMilli(), Files: headers}, plan.Scanned())
	return err
}

// caughtUp notes that the added query's job c reads its parent's
// retained epochs no more, and drops them if the parent is over and no
// other added job reads them.
func (g *Gateway) caughtUp(c *job) {
	p := c.parentRun()
	p.mu.Lock()
	p.follows.behind--
	drop := p.follows.behind == 0 && p.state == wololov1.JobState_JOB_STATE_DONE
	p.mu.Unlock()
	if drop {
		g.jobs.dropInput(p.id)
	}
}

// dropFinishedInput drops a finished job's retained input, unless an
// added query's job still reads it (caughtUp drops it then).
func (g *Gateway) dropFinishedInput(j *job) {
	j.mu.Lock()
	behind := j.follows.behind
	j.mu.Unlock()
	if behind == 0 {
		g.jobs.dropInput(j.id)
	}
}

// deleteAdded deletes the jobs of the queries added to j, which is
// deleted.
func (g *Gateway) deleteAdded(j *job) {
	j.mu.Lock()
	added := slices.Clone(j.follows.added)
	j.mu.Unlock()
	for _, c := range added {
		if err := g.deleteJob(c.id, "deleted with its standing job"); err != nil {
			c.log.Error("delete an added query's job with its standing job", "error", err)
		}
	}
}

// forwardRecords gives the records of an added query's job c's commit
// to the job it follows, whose versions take its queries'.
func forwardRecords(c *job, records map[string][]byte) {
	c.mu.Lock()
	p := c.follows.parent
	c.mu.Unlock()
	if p == nil {
		return
	}
	p = p.follow()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.standing.versions.add(c.id, records) {
		p.log.Info("version published", "epoch", p.standing.versions.published)
	}
	p.notifyLocked() // a backfilled version is new to results --epoch too
}

// withAdded adds to a done standing job's final results its added
// queries' last versions (byte-equal to their final results), or says
// that one is not published yet.
func (j *job) withAdded(files map[string][]byte, epoch int64) (map[string][]byte, error) {
	j.mu.Lock()
	v := j.standing.versions
	ver := v.byEpoch[epoch]
	refs := map[string]fileRef{}
	for name := range v.added {
		ref, ok := fileRef{}, false
		if ver != nil {
			ref, ok = ver.files[name]
		}
		if !ok {
			j.mu.Unlock()
			return nil, errorf(ErrNotDone, "job %q: its added query %s has no version of epoch %d yet", j.name, name, epoch)
		}
		refs[name] = ref
	}
	j.mu.Unlock()
	if len(refs) == 0 {
		return files, nil
	}
	added, err := v.read(epoch, refs, false)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(files)
	maps.Copy(out, added)
	return out, nil
}

// linkAdded links, in a restarted gateway, every added query's job to
// the job it follows (its versions read back into that job's), lists
// those to keep up (resumeAdded), and returns those whose job is gone,
// to drop; js.mu is held.
func (js *jobs) linkAdded() (gone []string) {
	for _, c := range js.byID {
		if c.addedTo == "" {
			continue
		}
		p := js.byID[c.addedTo]
		if p == nil || p.standing == nil {
			gone = append(gone, c.id)
			continue
		}
		link(p, c)
		p.standing.versions.merge(c.standing.versions)
		js.following = append(js.following, c)
	}
	return gone
}

// resumeAdded keeps up, in a restarted gateway, the added queries' jobs
// recover linked.
func (g *Gateway) resumeAdded() {
	g.jobs.mu.Lock()
	follow := g.jobs.following
	g.jobs.following = nil
	g.jobs.mu.Unlock()
	for _, c := range follow {
		go g.keepUp(c)
	}
}

// resultNames are the names of results, a version of j or its final
// results, in the order they are sent: j's queries', then those of the
// queries added to it the version has, by name.
func resultNames(j *job, results map[string][]byte) []string {
	out := j.resultFiles()
	for _, name := range slices.Sorted(maps.Keys(results)) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// wholeChange is the change that makes a version out of nothing: each
// of its rows added once (the query's columns, then "diff", as a
// change's), for an added query's first version in its job.
func wholeChange(version []byte) []byte {
	r := csv.NewReader(bytes.NewReader(version))
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil || len(records) == 0 {
		return nil
	}
	var out bytes.Buffer
	w := csv.NewWriter(&out)
	for i, rec := range records {
		if i == 0 {
			_ = w.Write(append(rec, "diff"))
		} else {
			_ = w.Write(append(rec, "1"))
		}
	}
	w.Flush()
	return out.Bytes()
}
