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

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/inputlog"
	"github.com/wololo/wololo/services/base/jobid"
	"github.com/wololo/wololo/services/dataflow/schema"
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
// # A lost shard alone (alone.go)
//
// Running the whole job again costs the whole job so far, though one
// shard lost only its part. So before it runs a job again, the gateway
// tries to rebuild the lost shard alone, and keeps the job's id: every
// other process keeps its state, channels and counters, and goes on.
//
// What makes it possible is the gateway's outbox. A gateway that retains
// input also keeps every batch a batch job sent after the receiver
// acknowledged it (keepBatches, transport.Outbox.Retain: Store.Acknowledge
// in place of Trim), on disk and out of memory, until the job is over
// (Outbox.Release, from dropInput; dropKept for a job a restarted gateway
// finds over). A shard rebuilt from nothing is sent its channels again
// from batch 1, read back from the store a few at a time
// (transport.Sender.Rewind): the very batches, with the same numbers,
// that its lost store had applied. Nothing is parsed again, and the
// upload does not wait for the shard: while it catches up, the batches
// committed for it wait in the store as well, taking no room in the
// outbox's memory, so the other shard goes on with its part.
//
// Which losses. The gateway's own link to the shard finds the loss (the
// shard refuses the job as never introduced: its store is empty), and
// the plan and what the gateway applied allow it (physical.ShardLoss,
// shardAlone):
//
//   - every channel into the shard comes from the gateway (so the
//     gateway's outbox holds all of it: the input it parsed, and the rows
//     it computed, such as a subquery's row broadcast to the shards) and
//     no channel goes from shard to shard (a peer applied what the lost shard sent it, and holds no
//     copy of what it sent the shard); not a standing job (its epochs
//     have their own rebuild, rebuildstanding.go), nor a query added to
//     one;
//   - of each channel from the shard to the gateway, the gateway applied
//     nothing (the aggregates of q2, q3 and q4 send once their inputs
//     have ended, so at 70% of a job nothing of them; nor, then, has it
//     computed from them a row it broadcast, which the rebuilt shard
//     might make otherwise), or the channel
//     follows one input channel (ShardOutput.Follows: only filters,
//     projections and distincts between them, q1's);
//   - the store still holds each channel's batches from 1
//     (Outbox.CanRewind: a job begun under a gateway that did not keep
//     them cannot).
//
// Anything else (a report by the shard itself of its own loss, the
// gateway's own store lost) runs the whole job again, as above. A gateway
// restarted while a shard catches up has lost the rewind and the vouching
// (memory held them): it checks every channel of the jobs whose batches
// it keeps as it starts (transport.Sender.Check, from the node), finds the
// shard behind what its store says was acknowledged and rebuilds it alone
// again from where it is; unless the shard, no longer vouched for, finds
// itself behind what the gateway applied of it first and reports its own
// loss, and then the whole job runs again
// (TestGatewayRestartedWhileAShardIsRebuiltAlone).
//
// The steps (rebuildAlone), one rebuild at a time: the gateway vouches
// for the shard (Vouches, which its transport.Server asks through
// VouchFor: its Hellos on the job's channels from the shard say
// Hello.sender_rebuilt), the job is
// introduced again (the other processes have it already and take that as
// done), the shard's channels are rewound and their links started again
// (Sender.Rewind), and a line is added to the job's rebuilds, durably
// (Job.rebuilds; it counts towards MaxRebuilds). Every channel to the
// shard reports the loss on its own link; the first does the steps, the
// others find the shard's incarnation rebuilt already and only rewind
// their own channel again, which is harmless (the link sends from where
// the shard's Hello says). Once the shard has acknowledged again every
// batch its channels had been sent before the loss, the outbox says so
// (Outbox.NotifyCaughtUp) and the line gets how long that took
// (shardCaughtUp).
//
// Why the answers stay exact. (a) The shard is sent each batch of its
// channels once more, from 1, in order, the same bytes under the same
// numbers: its inbox applies each once (it starts at 0), so its state is
// what the lost store's was at each number, and then goes on past it as
// the lost store would have. (b) What it sends: the stage runtime applies
// a channel's batches in order and drains its outputs after each one
// (stage.Runtime.build), so the batches of an output that follows one
// input are a function of that input's batches, the same ones again, and
// the shard numbers them again from 1; the gateway, which applied some
// of them, vouches in its Hello, so the shard takes the batches up to the
// gateway's watermark as acknowledged (Outbox.CheckHello) and sends only
// what comes after. An output of which the gateway applied nothing is
// taken whole. (c) No other process held anything of the shard's: the
// other shard neither applied its rows nor sent it any, and the gateway's
// inbox from it only moves on. (d) The old shard, if it wakes up, is
// fenced by its incarnation as any zombie is.
//
// What it costs: the shard applies its share of the job so far again,
// and the gateway reads back what it sent the shard (from the page cache
// or the disk); the upload and the other shard go on meanwhile. And the
// disk the kept batches take until
// the job is over: about a third of the input's size on the gateway (the
// columns the queries read, encoded), beside the 1.0x of the input copy.

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

// dropInput lets go of what the gateway keeps of a job that is over
// only to run it again: its retained input, if the gateway keeps any,
// and the batches it sent (js.over: the outbox's, alone.go).
func (js *jobs) dropInput(id string) {
	if js.over != nil {
		js.over(id)
	}
	if js.inputs == nil {
		return
	}
	if err := js.inputs.Drop(id); err != nil {
		js.log.Error("could not delete a job's retained input", "job", id, "error", err)
	}
}

// readRecord reads a job's description (JobRecord) back from the store,
// with the rest of what the store holds of it; name is the job's, for the
// error. A job keeps no header names in memory (see the package doc),
// and what reads its description back (a rebuild, a change of it) is
// rare.
func (js *jobs) readRecord(id, name string) (*wololov1.JobRecord, *transport.JobImage, error) {
	img, err := js.store.Load()
	if err != nil {
		return nil, nil, errorf(ErrStore, "read job %q back: %v", name, err)
	}
	ji := img.Jobs[id]
	if ji == nil || ji.Records[recordMeta] == nil {
		return nil, nil, errorf(ErrStore, "job %q: no description in the store", name)
	}
	rec, err := decodeJobRecord(ji.Records[recordMeta])
	if err != nil {
		return nil, nil, err
	}
	return rec, ji, nil
}

// updateRecord changes the job's description (JobRecord) in the store,
// durably; name is the job's, for the error.
func (js *jobs) updateRecord(id, name string, change func(*wololov1.JobRecord)) error {
	rec, _, err := js.readRecord(id, name)
	if err != nil {
		return err
	}
	change(rec)
	b, err := proto.Marshal(rec)
	if err != nil {
		return err
	}
	if err := js.store.Commit(&transport.Commit{Job: id, Records: map[string][]byte{recordMeta: b}}); err != nil {
		return errorf(ErrStore, "store job %q: %v", name, err)
	}
	return nil
}

// replace makes the run that takes old over: old's description under a
// fresh internal id, with the rebuild's line added, durable before the
// run is known; the job's name then names it, and old's watchers follow
// it. The caller drops old.
func (js *jobs) replace(old *job, line string) (*job, error) {
	rec, ji, err := js.readRecord(old.id, old.name)
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
	if g.rebuildAlone(old, f) || g.runAgain(old, f) {
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
	old.log.Warn("a process lost the job's state; the job runs again from its retained input", "reporter", f.Reporter, "reason", f.Reason, "new-run", nj.id)
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
