package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/inputlog"
	"github.com/wololo/wololo/services/base/jobid"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/transport"
)

// Rebuilds: a job that a process finds lost (its store wiped or
// replaced: transport reports it with JobFailure.StateLost) does not
// fail. The gateway runs it again from the input it retained
// (Config.Inputs, services/base/inputlog), under a new internal
// id, and its client sees only a job that takes longer (Job.rebuilds says
// why). While the client still uploads, the old run's uploads end with
// ErrRebuilt (Unavailable: the client resumes), the replay sends what the
// copy holds of each file (to its end, or as far as it goes), and the
// client's upload into the new run waits for the replay (job.replayed),
// then resumes from the new run's committed offset, as after any break.
//
// Why the answers stay exact: every process keys all it holds of a job
// (inbox watermarks, outbox, operator state, results) by the job's
// internal id, and the new run's id is fresh, so the new run starts from
// nothing everywhere: it is the job submitted again from the same bytes,
// not a repair of the old run. The old run is fenced by its id: the
// gateway forgets it (its results, if any come, are for an id it does not
// hold and are dropped) and drops it everywhere; a process that still
// sends for it is refused as a sender of an unknown job and drops it
// (transport.ErrJobDropped). The order makes a crash harmless: the new
// run's description (JobRecord.rebuild_of names the old run) is durable
// before the old run is dropped, and a gateway that restarts with both
// keeps the new one and drops the old (jobs.recover); a gateway that
// restarts before the new run's input is all replayed resumes the replay
// from the offsets its store committed, as a client resumes an upload
// (resumeReplays).
//
// A standing job runs again the same way, from its retained epochs,
// replayed epoch by epoch (rebuildstanding.go).
//
// The replay is an upload: replayStream feeds the retained bytes through
// the same upload path a client's frames take (parse, commit, route), the
// files in their order, so nothing about a rebuilt job's input is parsed
// or counted by other code.
//
// The old run is dropped only once its uploads have ended
// (job.uploadsOver): a step one of them committed after the drop would
// make the store hold the old run again.
//
// Not rebuilt: a job where the gateway retains no input (no data
// directory, --retain-input=false) or whose copy does not hold what the
// run had (inputlog.Writer deleted it); it fails as lost, and its attached
// client submits it again from its files (client.SubmitOptions.Rebuilds).
// Nor a job that was run again Config.MaxRebuilds times already
// (DefaultMaxRebuilds, 3): it fails for its client as lost too often, not
// marked as lost state, so that no one runs it again unasked. Only the
// topology's instances may report a loss at all (FailJob), but one of them
// could report it again and again, each report a new run of the job.
//
// # A lost disk should cost its share (issue 42 item 3): the design
//
// Running the whole job again costs the whole job so far (a shard wiped
// at 3.76 s of a 5.37 s job: +4.07 s, `make bench`), though one shard
// lost only its part. What follows is the design of rebuilding the lost
// instance alone; physical.ShardLoss (services/dataflow/sql/physical)
// is its first part, the plan's half of the decision, and the gateway
// takes the decision at each loss reported to it (the lost instance is
// named: transport.LostInstance, JobFailure.Lost) and logs it
// (aloneVerdict: the "alone" field of the "runs again" warning); the rest
// is not built yet (what blocks it is listed at the end), so every loss
// still runs the whole job again, as above.
//
// Which plans. A shard S can be rebuilt alone from the gateway's retained
// input when everything S was sent is a function of that input, and
// everything S sent was taken by a receiver that can tell what it
// already applied:
//
//   - every channel into the shard task is produced as the gateway
//     parses a file (physical.Plan.Source), so the retained input holds
//     it; and no channel goes from shard to shard (a peer applied what S
//     sent it and holds no copy of what it sent S; rebuilding that would
//     take the peer's state back too). Else ShardLoss.Whole says why.
//     The four default queries qualify: their channels go gateway to
//     shard (matches-by-token, match_players-by-match) and shard to
//     gateway (q1..q4-to-gateway), nothing between the shards.
//   - for each channel ch from S to the gateway, either the gateway has
//     applied none of S's batches on it (its inbox watermark is 0: the
//     aggregates of q2, q3 and q4 send only once S's inputs have ended,
//     so at 70% of a job nothing of them was sent), or ch follows one
//     input channel (ShardOutput.Follows: only filters, projections and
//     distincts between them, each of one input, each keeping its
//     input's order: q1's distinct of the matches S is sent). Then the
//     rows S sent on ch are a prefix of a sequence fixed by the rows S
//     was sent on that input, in their order, whatever batches carried
//     them; an S fed the same rows in the same order sends the same
//     prefix first. ShardLoss.Exact(applied) decides this at the loss.
//   - a batch job, not a standing one (its epochs and weights have their
//     own rebuild, rebuildstanding.go), nor one with added queries or
//     one-off queries of its own, and the gateway retains the input up
//     to what the job committed of each file.
//
// Anything else (S had finished and the gateway applied its partial
// aggregates; a plan with a shard-to-shard shuffle, a broadcast of a
// subquery's row computed at the gateway; the gateway's own store lost)
// runs the whole job again, as today.
//
// The steps, at the gateway, once a sender of its own finds S lost on a
// channel of job J (its Hello below what S acknowledged, or S no longer
// knowing J):
//
//  1. Decide: S is named by the failure (JobFailure.Lost: the channel's
//     receiver or sender, or the reporter itself when its own recovery
//     found its store lost; a report over the wire carries it,
//     FailJobRequest.lost, and the gateway refuses one naming an instance
//     that is not of its topology); the plan's ShardLoss().Exact with
//     applied = the gateway's inbox watermarks of J's channels from S
//     (Committer.Inbox().Marks).
//  2. Fence the upload: J's uploads end (as replace ends them with
//     j.gone, but resumably: the client resumes once the rebuild is
//     over, waiting on j.replayed) and the gateway waits until they are
//     over, so each file's committed offset is fixed and nothing else
//     numbers a batch of J.
//  3. New channels to and from S: J's record gains S's generation g
//     (1 for the first rebuild of S), committed with the committed
//     offsets and the skip counts below, and every channel of J with S
//     at one end is from then on the stream name with "@g" (both ends
//     derive names from the plan and the generations, which S learns
//     from its introduction). Fresh channels are numbered from 1 without
//     lowering anything: the stores keep reserved, acked and watermark
//     marks as maxima (segstore's index, Inbox.advance), so the old
//     channels cannot be reset in place; the old ones are dropped at the
//     gateway (Outbox.DropChannel; the inbox forgets their marks), and a
//     zombie of the old S, already fenced by incarnation, also speaks
//     only on channels nobody reads. The other shard's channels keep
//     their names, numbers and state: nothing of it changes.
//  4. Skip counts: for each channel ch from S whose watermark was above
//     0 (a Follows channel, by 1), R(ch) is the rows the gateway applied
//     of S on ch. The gateway's stage runtime, applying S's batches on
//     ch@g, drops their first R(ch) rows, counting R down in each commit.
//  5. Introduce J to S again (forgetIntroduction, introduce): S records J
//     and its plan, with its generation.
//  6. Replay S's share: each file of J, in order, from its start to its
//     committed offset, read from the retained copy and parsed by the
//     same ingest and the plan's Source, its Outputs keeping only the
//     batches to S (the others dropped), each step committed through the
//     Committer (no upload records: the files' offsets and reports do
//     not change); a file whose upload was over ends with its EOFs to S.
//     The last step deletes S's rebuild record, and the uploads resume
//     (j.replayed closes) from the offsets they had.
//
// Why the answers stay exact. (a) S is sent each row of J's input routed
// to it exactly once: the rows before each file's committed offset by the
// replay, the rows after it by the resumed upload, and the two ranges
// split the file. The replay routes as the upload did: the same bytes,
// the same ingest (malformed records are a function of the bytes), the
// same filters and the same key hash (FNV-1a modulo the replicas), so
// the rows are the ones the old S was sent, in file order on each
// channel, which is also the order the old S applied them in (a channel's
// batches apply in sequence). (b) S's state is then what the old S's
// would have been: the shard operators' results do not depend on how
// their inputs' batches interleave (docs/sql.md, "Output";
// sqlops.TestOutputNeverDependsOnArrivalOrder). (c) Of what S sends, the
// gateway takes each row once: on a channel of which it had applied
// nothing, every row is new; on a Follows channel it had applied the
// first R rows of the sequence the rebuilt S sends again first, in the
// same order (a), and it drops exactly those R
// (sqlops.TestAFollowingOutputKeepsItsInputsOrder checks that q1's rows
// do not depend on the batches or the interleaving). (d) No other process
// held anything of S: with no shard-to-shard channel, the other shard
// neither applied S's rows nor sent S any, so its state, channels and
// counters are untouched, and its work is not done again. (e) A crash
// in the middle: a gateway that restarts with S's rebuild record and no
// end of it does not know how far S got and runs the whole job again
// (runAgain: a fresh id, exact as above); a shard lost again during its
// rebuild is a new loss, and counts towards MaxRebuilds.
//
// What it costs: the gateway parses again the input committed so far (it
// must route every row to find S's), with one shard receiving and the
// other idle while the upload waits; S applies its share again. For a
// shard wiped at 70% of a job that is about 70% of the gateway's parse
// plus half the shards' work so far, against the whole job so far today.
//
// What blocks it today, in the order the steps need them:
//
//   - a run's uploads can be ended once (j.gone closes for a replaced
//     run): there is no pause that the client resumes from (2).
//   - channel names are the plan's: no generation per instance at either
//     end (3), and the Inbox and both stores keep marks as maxima, so a
//     channel cannot be renumbered in place.
//   - the gateway's stage runtime counts what it applied per channel in
//     batches (the watermark), not rows: R(ch) is not known (4). Without
//     it, a Follows channel with something applied falls back, and q1's
//     channel has had rows applied at 70% of any full-scale job, so the
//     default job would always fall back.
//   - the replay path commits whole uploads (upload records, offsets,
//     every receiver's batches); a replay of one receiver's share, and
//     the record that a gateway restart falls back on, are new (5, 6).
//
// Its test is to be services/e2e's TestLostShardIsRebuiltFromTheRetainedInput
// with the rebuild's expectations turned round: the job keeps its id, the
// answers are byte-equal to the reference, and shard-0 neither restarts
// the job nor is sent a row twice (its inbox watermarks from the gateway
// only grow across the loss), while shard-1's channels carry generation 1.

// replayOwner is the context key under which a replay's upload carries
// its job's owner, in place of a client's certificate.
type replayOwner struct{}

// claimRebuild decides whether the job is run again from its retained
// input, once: it reports whether this caller rebuilds it (not over, not
// claimed before, and held(file, need) for each input the run has bytes
// of: the copy holds what the run has, the whole file if its upload is
// over), and whether another has claimed it already (a second report of
// the same loss, which is then moot).
func (j *job) claimRebuild(held func(epoch int64, file int, need int64) bool) (claimed, taken bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.rebuilding {
		return false, true
	}
	if j.state != wololov1.JobState_JOB_STATE_RUNNING && j.state != wololov1.JobState_JOB_STATE_UPLOADING {
		return false, false
	}
	for _, e := range j.epochsLocked() {
		for i, fs := range e.files {
			need := fs.offset // what the run has of it
			if fs.done {
				need = fs.size
			}
			if need > fs.start && !held(e.epoch, i, need) {
				j.log.Warn("no copy of the job's input to run it again from", "file", fs.input, "epoch", e.epoch, "need", need)
				return false, false
			}
		}
	}
	j.rebuilding = true
	return true, false
}

// rebuildCount is how many times the job was run again (Job.rebuilds):
// 0 for its first run; and whether it runs still (a loss of a job that is
// over changes nothing).
func (j *job) rebuildCount() (n int, running bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.rebuilds), j.state == wololov1.JobState_JOB_STATE_RUNNING || j.state == wololov1.JobState_JOB_STATE_UPLOADING
}

// closedChan is a closed channel: a wait on it is over.
func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// follow is the run that holds the job now: j, or the last run that
// replaced it.
func (j *job) follow() *job {
	for {
		j.mu.Lock()
		next := j.replaced
		j.mu.Unlock()
		if next == nil {
			return j
		}
		j = next
	}
}

// dropInput deletes a job's retained input, if the gateway keeps any.
func (js *jobs) dropInput(id string) {
	if js.inputs == nil {
		return
	}
	if err := js.inputs.Drop(id); err != nil {
		js.log.Error("could not delete a job's retained input", "job", id, "error", err)
	}
}

// replace makes the run that takes old over: old's description under a
// fresh internal id, with the rebuild's line added, durable before the
// run is known; the job's name then names it, and old's watchers follow
// it. The caller drops old.
func (js *jobs) replace(old *job, line string) (*job, error) {
	// The description is read back from the store: a job keeps no header
	// names in memory (see the package doc), and a rebuild is rare.
	img, err := js.store.Load()
	if err != nil {
		return nil, errorf(ErrStore, "read job %q back for its rebuild: %v", old.name, err)
	}
	ji := img.Jobs[old.id]
	if ji == nil || ji.Records[recordMeta] == nil {
		return nil, errorf(ErrStore, "job %q: no description in the store to rebuild it from", old.name)
	}
	rec, err := decodeJobRecord(ji.Records[recordMeta])
	if err != nil {
		return nil, err
	}
	if len(rec.Queries) == 0 {
		// A job of the hand-written graph an older version wrote: it
		// runs again as what it was, the default queries, now as SQL.
		if err := js.planDefault(rec); err != nil {
			return nil, fmt.Errorf("job %q: plan its default queries: %w", old.name, err)
		}
	}
	rec.RebuildOf = old.id
	rec.Rebuilds = append(rec.Rebuilds, line)
	id := jobid.New()
	b, err := proto.Marshal(rec)
	if err != nil {
		return nil, err
	}
	records := map[string][]byte{recordMeta: b}
	if rec.Standing {
		maps.Copy(records, standingRebuildRecords(ji.Records)) // its epochs (rebuildstanding.go)
	}
	if err := js.store.Commit(&transport.Commit{Job: id, Records: records}); err != nil {
		return nil, errorf(ErrStore, "store the rebuild of job %q: %v", old.name, err)
	}
	nj, err := js.newJob(id, rec, nil)
	if err != nil {
		return nil, err
	}
	if nj.standing != nil {
		if err := js.recoverStanding(nj, records); err != nil {
			return nil, fmt.Errorf("job %q: its epochs, for its rebuild: %w", old.name, err)
		}
	}
	nj.replayed = make(chan struct{}) // closed by its replay
	if err := js.inputs.Rename(old.id, id); err != nil {
		return nil, err
	}
	js.mu.Lock()
	js.add(nj)
	js.mu.Unlock()
	old.mu.Lock()
	old.replaced = nj
	close(old.gone) // its uploads end; their clients resume into nj
	old.notifyLocked()
	old.mu.Unlock()
	return nj, nil
}

// rebuild runs a job that lost a process's state again from its retained
// input, if it can (claimRebuild, and the gateway retains input); it
// reports whether the failure is handled (rebuilt, now or by another
// report). When it is not, f's reason may say why no rebuild was made.
func (g *Gateway) rebuild(old *job, f *transport.JobFailure) bool {
	if g.runAgain(old, f) {
		return true
	}
	if old.standing != nil && f.StateLost {
		// Not run again (no retained epochs, or not whole): it fails,
		// not marked as lost state: its client would submit it again
		// as one upload, which is not the job.
		old.log.Error("a process lost a standing job's state, and the gateway holds no whole copy of its epochs to run it again from; it fails", "reporter", f.Reporter, "reason", f.Reason)
		f.Reason = fmt.Sprintf("a process lost this standing job's state (found by %s: %s), and the gateway holds no whole copy of its epochs to run it again from: submit it again with --standing and append its epochs again", f.Reporter, strings.TrimSuffix(f.Reason, " and the job cannot complete"))
		f.StateLost = false
	}
	return false
}

// runAgain is rebuild's attempt: it reports whether the failure is
// handled (run again, now or by another report).
func (g *Gateway) runAgain(old *job, f *transport.JobFailure) bool {
	if g.jobs.inputs == nil {
		return false
	}
	if n, running := old.rebuildCount(); running && n >= g.cfg.MaxRebuilds {
		// Lost too often: a fault that running the job again does not
		// get past, or reports forged to make the gateway run it for
		// ever. It fails, not marked as lost state, so that its client
		// does not submit it again on its own either.
		old.log.Error("the job lost a process's state once more than the rebuilds it may have; it fails", "rebuilds", n, "max-rebuilds", g.cfg.MaxRebuilds, "reporter", f.Reporter, "reason", f.Reason)
		f.Reason = fmt.Sprintf("lost too often: processes lost this job's state %d times and the gateway ran it again %d times, the most it does (found by %s: %s)", n+1, n, f.Reporter, f.Reason)
		f.StateLost = false
		return false
	}
	claimed, taken := old.claimRebuild(func(epoch int64, file int, need int64) bool {
		return g.jobs.inputs.Whole(old.id, retainedName(epoch, file), need)
	})
	if !claimed {
		return taken
	}
	at := time.Now()
	line := fmt.Sprintf("state lost at %s UTC, found by %s: %s; the job replayed its input", at.UTC().Format("15:04:05"), f.Reporter, strings.TrimSuffix(f.Reason, " and the job cannot complete"))
	nj, err := g.jobs.replace(old, line)
	if err != nil {
		// Not rebuilt: the job fails as lost (its client may submit it
		// again), with why the rebuild could not be made.
		old.log.Error("could not rebuild the job from its retained input", "error", err)
		f.Reason += fmt.Sprintf(" (and the gateway could not run it again from its retained input: %v)", err)
		old.mu.Lock()
		old.rebuilding = false
		old.mu.Unlock()
		return false
	}
	old.log.Warn("a process lost the job's state; the job runs again from its retained input", "reporter", f.Reporter, "reason", f.Reason, "new-run", nj.id, "alone", g.aloneVerdict(old, f.Lost))
	// The old run's uploads end (replace closed old.gone) before it is
	// dropped: a step they commit after the drop would make the store
	// hold the old run again.
	if !old.uploadsOver(30 * time.Second) {
		old.log.Error("an upload of the replaced run did not end within 30 s; dropping the run all the same")
	}
	g.forgetIntroduction(old.id)
	if err := g.jobs.drop(old.id); err != nil {
		g.cfg.Log.Error("drop the run a rebuild replaced", "job", old.id, "error", err)
	}
	g.queueDrops(old.id)
	go g.replay(nj, at)
	return true
}

// dropStaleInputs deletes the retained input of every job that is not
// held, or is over (a gateway stopped between a job's end and the
// deletion of its input; or a job dropped while it was down).
func (js *jobs) dropStaleInputs() {
	if js.inputs == nil {
		return
	}
	ids, err := js.inputs.Jobs()
	if err != nil {
		js.log.Error("could not list the retained inputs", "error", err)
		return
	}
	for _, id := range ids {
		js.mu.Lock()
		j := js.byID[id]
		js.mu.Unlock()
		if j != nil {
			j.mu.Lock()
			over := j.state == wololov1.JobState_JOB_STATE_DONE || j.state == wololov1.JobState_JOB_STATE_FAILED
			j.mu.Unlock()
			if !over {
				continue
			}
		}
		js.dropInput(id)
	}
}

// resumeReplays goes on with the replays a restarted gateway found
// unfinished: rebuilt jobs whose input is not all in again (jobs.recover
// left their replayed open and listed them). Only those: a rebuild made
// meanwhile (a process reported a loss as soon as it recovered, as every
// one holding a job of an older version's hand-written graph does) has
// its replay started by its rebuild, and a second replay of it would
// upload its input twice.
func (g *Gateway) resumeReplays() {
	if g.jobs.inputs == nil {
		return
	}
	g.jobs.mu.Lock()
	var todo []*job
	for _, j := range g.jobs.resume {
		if g.jobs.byID[j.id] == j { // not dropped since (a run a rebuild replaced)
			todo = append(todo, j)
		}
	}
	g.jobs.resume = nil
	g.jobs.mu.Unlock()
	for _, j := range todo {
		j.log.Info("resuming the replay of a rebuilt job's input")
		go g.replay(j, time.Now())
	}
}

// replay uploads the job's retained input, file by file in the job's
// order, through the upload path; since is when the rebuild began. A file
// whose copy is whole is uploaded to its end; one whose copy is not (its
// client was uploading it) as far as the copy goes, and the client
// resumes from there (an upload waits for j.replayed, which closes at the
// end). A replay that fails fails the job with the reason.
func (g *Gateway) replay(j *job, since time.Time) {
	defer close(j.replayed)
	ctx, cancel := replayContext(j)
	defer cancel()
	if fs, err := g.replayEpochs(ctx, j, j.id); err != nil {
		g.replayFailed(j, fs, "after a lost state", err)
		return
	}
	if err := g.closeAfterReplay(ctx, j); err != nil {
		g.replayFailed(j, j.files[0], "after a lost state (the close that followed it)", err)
		return
	}
	took := time.Since(since).Round(100 * time.Millisecond)
	j.log.Info("rebuilt job's input replayed", "took", took)
	j.mu.Lock()
	if n := len(j.rebuilds); n > 0 {
		j.rebuilds[n-1] += fmt.Sprintf(" in %s", took)
		j.notifyLocked()
	}
	j.mu.Unlock()
}

// replayEpochs uploads what the retained copies of job from's epochs
// hold of j's files that are not in yet, epoch by epoch, through the
// upload path: a rebuilt run's own (from is j), or an added query's job
// following its parent (addquery.go). A file whose copy is whole is
// uploaded to its end; one whose copy is not (its client was uploading
// it) as far as the copy goes. An append that --epoch-every cut into
// epochs is replayed up to each cut first (replayCuts), so that its
// epochs end where they ended. On a failure it returns the file whose
// replay failed.
func (g *Gateway) replayEpochs(ctx context.Context, j *job, from string) (*fileState, error) {
	for _, e := range j.epochs() {
		if j.standing != nil {
			if fs, err := g.replayCuts(ctx, j, from, e.epoch); err != nil {
				return fs, err
			}
		}
		for i, fs := range e.files {
			name := retainedName(e.epoch, i)
			held := g.jobs.inputs.Size(from, name)
			j.mu.Lock()
			at, done := fs.offset, fs.done
			j.mu.Unlock()
			end := min(held, fs.size)
			switch {
			case done:
				continue // in already (a replay resumed), or left out of its append
			case fs.size == fs.start:
				end = fs.size // a header alone: its upload is its start and finish
			case end <= at:
				continue // nothing of it to replay: the client sends it
			}
			if err := g.replayFile(ctx, j, e.epoch, i, from, name, end); err != nil {
				return fs, err
			}
		}
	}
	return nil, nil
}

// replayContext is the context of a replay of j's input: its uploads
// are the owner's, and end when the job fails.
func replayContext(j *job) (context.Context, context.CancelFunc) {
	ctx := context.WithValue(context.Background(), replayOwner{}, j.owner)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-j.failed:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// replayFile uploads input file of j's epoch (its index in the epoch's
// files, j.files for a batch job's epoch 0) from the retained copy name
// of job from, up to end (what the copy holds of the file), through the
// upload path.
func (g *Gateway) replayFile(ctx context.Context, j *job, epoch int64, file int, from, name string, end int64) error {
	j.mu.Lock()
	fs := j.epochFiles(epoch)[file]
	j.mu.Unlock()
	if end <= fs.start {
		// A header and no record: the copy holds nothing (it may not
		// exist), and the upload is its start and its finish.
		return g.upload(newReplayStream(ctx, j, epoch, file, fs, bytes.NewReader(nil), end))
	}
	r, err := g.jobs.inputs.Reader(from, name, end)
	if err != nil {
		return err
	}
	defer r.Close()
	return g.upload(newReplayStream(ctx, j, epoch, file, fs, r, end))
}

// replayFailed fails j, unless it failed already, for the replay of fs
// that failed with err; why says what the replay was for.
func (g *Gateway) replayFailed(j *job, fs *fileState, why string, err error) {
	if j.failure() != nil {
		return
	}
	reason := fmt.Sprintf("the replay of %s %s failed: %v", fs.input, why, err)
	if ferr := g.FailJob(transport.JobFailure{Job: j.id, Reporter: g.self.Name(), Reason: reason}); ferr != nil {
		j.log.Error("record a failed replay", "error", ferr)
	}
}

// inputName is the name of a job's i'th input's retained copy: its index
// (a table's key is not a file name).
func inputName(i int) string { return strconv.Itoa(i) }

// retainer is where upload u keeps a copy of the bytes it takes, from its
// offset on: nil (keep none) for a replay, whose bytes are the copy, and
// where the gateway retains no input.
func (g *Gateway) retainer(u *upload, replay bool) (*inputlog.Writer, error) {
	if replay || g.jobs.inputs == nil {
		return nil, nil
	}
	w, err := g.jobs.inputs.Writer(u.j.id, retainedName(u.epoch, u.file), u.fs.start, u.offset)
	if err != nil {
		return nil, errorf(ErrStore, "%v", err)
	}
	return w, nil
}

// replayStream is an upload stream that a replay feeds from a retained
// copy of one input: the start frame, then the bytes from the offset the
// upload path acknowledges first (its committed offset), in chunks, then
// the finish.
type replayStream struct {
	ctx   context.Context
	start *wololov1.UploadStart
	// file is the input's index in its epoch's files (start.epoch's;
	// j.files for a batch job): the upload path takes it as it is, where
	// a client's upload names its file or table (a one-off query's job
	// has one input of a table per epoch).
	file int
	size int64 // the file's
	end  int64 // what the copy holds of it: the size, or less (then a pause, not a finish)
	r    io.ReadSeeker
	// at is the next offset to send; -1 until the first answer says it.
	at       int64
	started  bool
	finished bool
}

func newReplayStream(ctx context.Context, j *job, epoch int64, file int, fs *fileState, r io.ReadSeeker, end int64) *replayStream {
	start := &wololov1.UploadStart{JobId: j.name, Epoch: epoch}
	if fs.isTable {
		start.Table = fs.table
	} else if fs.file == schema.Matches {
		start.File = wololov1.InputFile_INPUT_FILE_MATCHES
	} else {
		start.File = wololov1.InputFile_INPUT_FILE_PLAYERS
	}
	return &replayStream{ctx: ctx, start: start, file: file, size: fs.size, end: end, r: r, at: -1}
}

// replayChunk is the size of a replay's data frames, a client's.
const replayChunk = 1 << 20

func (s *replayStream) Context() context.Context { return s.ctx }

// Send takes the upload path's answers: the first says where to start.
func (s *replayStream) Send(resp *wololov1.UploadResponse) error {
	if s.at < 0 {
		s.at = resp.GetOffset()
		if _, err := s.r.Seek(s.at, io.SeekStart); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	return nil
}

// Recv gives the next frame.
func (s *replayStream) Recv() (*wololov1.UploadRequest, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	switch {
	case !s.started:
		s.started = true
		return &wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Start{Start: s.start}}, nil
	case s.at < 0:
		return nil, fmt.Errorf("replay: data asked for before the upload said where to start")
	case s.at < s.end:
		n := min(int64(replayChunk), s.end-s.at)
		data := getData(int(n))
		if _, err := io.ReadFull(s.r, data); err != nil {
			return nil, fmt.Errorf("replay at offset %d: %w", s.at, err)
		}
		s.at += n
		return &wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: data}}, nil
	case !s.finished && s.end == s.size:
		s.finished = true
		return &wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: s.size}}}, nil
	}
	return nil, io.EOF
}

// aloneVerdict says, for the log, whether the instance a loss names
// could have been rebuilt alone (the design above: the plan's ShardLoss
// and what the gateway had applied of the instance), or why not; "" when
// the loss names no shard instance of j's plan.
func (g *Gateway) aloneVerdict(j *job, lost string) string {
	if lost == "" || len(j.plan) == 0 {
		return ""
	}
	p, err := physical.Decode(j.plan)
	if err != nil {
		return ""
	}
	return shardAlone(p, lost, g.cfg.Committer.Inbox().Marks(j.id))
}

// shardAlone is aloneVerdict of plan p, the lost instance and the
// gateway's inbox watermarks of the job's channels.
func shardAlone(p *physical.Plan, lost string, marks map[transport.ChannelID]uint64) string {
	if in, err := deploy.ParseInstance(lost); err != nil || in.Stage != p.Shard.Name {
		return ""
	}
	applied := map[string]uint64{}
	for ch, w := range marks {
		if ch.Sender == lost {
			applied[ch.Stream] = w
		}
	}
	if why := p.ShardLoss().Exact(applied); why != "" {
		return fmt.Sprintf("%s could not be rebuilt alone: %s", lost, why)
	}
	return fmt.Sprintf("%s alone could be rebuilt exactly (not built yet: rebuild.go)", lost)
}
