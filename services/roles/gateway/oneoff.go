package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/jobid"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/transport"
)

// One-off queries (QueryJob, `wololo client query --job ID "SELECT ..."`):
// a query answered over the rows of a standing job's epochs published so
// far, without an upload. The gateway runs it as an internal batch job of
// that one query, owned by the standing job's client, whose input is the
// standing job's retained epochs (retain.go), replayed through the upload
// path as a rebuild replays a job's input (replayFile): each epoch's file
// of a table is one input of the internal job, with its own header, so
// that epochs whose files order their columns differently are read as
// they were; every one but the last of its table is flushed at its end,
// not ended (fileState.more). The answer is the batch job's result,
// byte-equal to the same query as a batch job over those rows. The job
// is deleted everywhere once answered, or once the call ends without the
// answer; a gateway that restarts meanwhile drops it
// (JobRecord.query_of), and the client asks again.
//
// What it does not do: keep the query (it is not added to the standing
// job, whose later epochs it never sees), or read a closed job (done, its
// input is no longer retained), a job whose gateway retains no input
// (--retain-input=false), or an epoch whose copy is not whole.

// oneoffQuery is the name of a one-off query in its job: its answer is
// oneoffQuery.csv.
const oneoffQuery = "oneoff"

// oneoffTimeout bounds the wait for an abandoned one-off job's replay to
// end before it is dropped all the same (as a rebuild's old run).
const oneoffTimeout = 30 * time.Second

// queryPart is one input of a one-off query's job: one epoch's file of
// one of the standing job's inputs, and its retained copy.
type queryPart struct {
	of     input // the standing job's input
	epoch  int64
	copy   string // its retained copy's name (retainedName)
	header *wololov1.FileRecord
}

// queryJob answers sql over the rows of the owner's standing job name's
// epochs published so far: the answer's CSV, and the epochs it is over.
func (g *Gateway) queryJob(ctx context.Context, owner, name, sql string) ([]byte, int64, error) {
	j, err := g.jobs.lookup(owner, name)
	if err != nil {
		return nil, 0, err
	}
	j = j.follow()
	if j.standing == nil {
		return nil, 0, errorf(ErrNotStanding, "job %q is a batch job: a one-off query reads a standing job's retained epochs (submit with --standing); a batch job's answers are its queries'", j.name)
	}
	if g.jobs.inputs == nil {
		return nil, 0, errorf(ErrNotStanding, "the gateway retains no input (no data directory, or --retain-input=false): it has no rows of job %q to query", j.name)
	}
	if _, _, err := j.queryable(); err != nil && !errors.Is(err, errNoVersion) {
		return nil, 0, err
	}
	jp, first, err := g.planOver(ctx, owner, j, []*wololov1.Query{{Name: oneoffQuery, Sql: sql}})
	if err != nil {
		return nil, 0, err
	}
	appends, epochs, err := j.queryable()
	if err != nil {
		return nil, 0, err
	}
	parts, err := g.jobs.queryParts(j, appends, first)
	if err != nil {
		return nil, 0, err
	}
	if err := partsHaveColumns(parts[len(j.files):], jp); err != nil {
		return nil, 0, err
	}
	q, dropped, err := g.jobs.createQuery(j, jp, parts)
	for _, id := range dropped {
		g.forgetIntroduction(id)
	}
	g.queueDrops(dropped...)
	if err != nil {
		return nil, 0, err
	}
	g.cfg.Counters.JobCreated()
	defer g.dropQuery(q)
	q.log.Info("one-off query of a standing job", "standing", j.id, "epochs", epochs, "inputs", len(parts))
	go g.replayQuery(q, j.id, parts)
	answer, err := q.waitAnswer(ctx)
	return answer, epochs, err
}

// planOver plans queries over standing job j's tables as epoch 1's
// headers declared them (returned too): a one-off query, or queries added
// to the job (addquery.go). A query the SQL engine refuses is refused
// here, before anything runs, with its message naming the construct and
// its line:column (planQueries).
func (g *Gateway) planOver(ctx context.Context, owner string, j *job, queries []*wololov1.Query) (*jobPlan, []*wololov1.FileRecord, error) {
	release, err := g.compiles.acquire(ctx, owner)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	first, err := g.jobs.retainedHeaders(j, 1)
	if err != nil {
		return nil, nil, err
	}
	inputs := make([]inputHeader, len(j.files))
	for i, f := range first {
		inputs[i] = inputHeader{j.files[i].input, &wololov1.FileHeader{Columns: f.Columns, Size: f.Size, DataOffset: f.DataOffset}}
	}
	jp, err := g.jobs.limits.planQueries(queries, true, inputs, g.jobs.shape, g.jobs.shapeErr)
	return jp, first, err
}

// partsHaveColumns refuses a one-off query of a column that a later
// epoch's file lacks (its columns are checked against epoch 1's by the
// plan): an append needs only the columns of the job's own queries.
func partsHaveColumns(parts []queryPart, jp *jobPlan) error {
	scanned := jp.decoded.Scanned()
	for _, p := range parts {
		for _, c := range scanned[p.of.table] {
			if !slices.Contains(p.header.Columns, c) {
				return errorf(ErrInvalid, "epoch %d's %s has no column %q (read by the query)", p.epoch, p.of, c)
			}
		}
	}
	return nil
}

// errNoVersion is queryable's error of a job with no version yet.
var errNoVersion = errors.New("no version yet")

// queryable is how many appends of the standing job a one-off query
// reads (those whose every epoch is published: with --epoch-every an
// append ends several, cuts.go) and the epoch they end, or why it reads
// none.
func (j *job) queryable() (appends, epoch int64, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.failureLocked(); err != nil {
		return 0, 0, err
	}
	if j.state == wololov1.JobState_JOB_STATE_DONE {
		return 0, 0, errorf(ErrNotStanding, "job %q is closed and done: its input is no longer retained; its results are its last version", j.name)
	}
	published := j.standing.versions.published
	for _, last := range j.standing.appendEnds {
		if last > published {
			break
		}
		appends, epoch = appends+1, last
	}
	if appends == 0 {
		return 0, 0, kindError{ErrNotStanding, fmt.Errorf("job %q has %w: a one-off query reads the epochs published, and its first append's are not", j.name, errNoVersion)}
	}
	return appends, epoch, nil
}

// queryParts lists the inputs of a one-off query of j's appends 1 to n:
// every append's file of each input (first, the job's own headers, then
// each append's but the inputs it left out), each with its retained
// copy, which must be whole.
func (js *jobs) queryParts(j *job, n int64, first []*wololov1.FileRecord) ([]queryPart, error) {
	var parts []queryPart
	for k := int64(1); k <= n; k++ {
		headers := first
		if k > 1 {
			var err error
			if headers, err = js.retainedHeaders(j, k); err != nil {
				return nil, err
			}
		}
		j.mu.Lock()
		files := slices.Clone(j.epochFiles(k))
		j.mu.Unlock()
		for i, fs := range files {
			h := headers[i]
			if k > 1 && h.Size == 0 && len(h.Columns) == 0 {
				continue // left out of the append: no rows
			}
			p := queryPart{of: j.files[i].input, epoch: k, copy: retainedName(k, i), header: h}
			whole := h.Size == h.DataOffset || js.inputs.Whole(j.id, p.copy, h.Size) // a header alone has no copy
			if h.Size != fs.size || !fs.done || !whole {
				return nil, errorf(ErrNotStanding, "job %q: the gateway holds no whole copy of epoch %d's %s (it retains an epoch's files as they are uploaded, since the job was created)", j.name, k, p.of)
			}
			parts = append(parts, p)
		}
	}
	return parts, nil
}

// createQuery makes the internal batch job of a one-off query of of, its
// inputs parts, durably (JobRecord.query_of), and admits it as a job of
// the owner's with no bytes of its own (its input is counted in of's).
// It returns the finished jobs admission dropped to make room.
func (js *jobs) createQuery(of *job, jp *jobPlan, parts []queryPart) (*job, []string, error) {
	id := jobid.New()
	// A name no client chooses (jobid.Valid refuses the dot): the job
	// is the owner's, but never one it made.
	rec := &wololov1.JobRecord{
		CreatedUnixMs: time.Now().UnixMilli(), Owner: of.owner, Name: "query." + id,
		MaxMalformed: proto.Float64(1), // the standing job took these rows already
		Tables:       of.tableNames(), Queries: jp.queries, Plan: jp.plan, QueryOf: of.id,
	}
	for _, p := range parts[:len(of.files)] {
		rec.Files = append(rec.Files, p.header)
	}
	q, err := js.newJob(id, rec, jp.decoded)
	if err != nil {
		return nil, nil, err
	}
	scanned := jp.decoded.Scanned()
	for _, p := range parts[len(of.files):] {
		h := p.header
		in := epochInput(p.of, p.epoch)
		q.files = append(q.files, &fileState{input: in, size: h.Size, start: h.DataOffset, offset: h.DataOffset,
			names: scannedOnly(h.Columns, scanned[in.table]), report: schema.FileReport{Missing: map[string]int64{}}})
		q.bytes, _ = sumSizes(q.bytes, h.Size)
	}
	for i, fs := range q.files {
		for _, later := range q.files[i+1:] {
			fs.more = fs.more || later.table == fs.table
		}
	}
	q.replayed = make(chan struct{}) // closed by replayQuery
	dropped, err := js.admitInternal(q, rec)
	if err != nil {
		return nil, nil, err
	}
	return q, dropped, nil
}

// admitInternal stores the description rec of an internal job q (a
// one-off query's, an added query's: addquery.go) and admits it as a job
// of its owner's with no bytes of its own (its input is counted in the
// standing job's). It returns the finished jobs admission dropped to
// make room.
func (js *jobs) admitInternal(q *job, rec *wololov1.JobRecord) ([]string, error) {
	b, err := proto.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode the description of job %q: %w", q.id, err)
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	held, others := js.heldBy(rec.Owner)
	drop, err := js.limits.admission(held, others, len(js.byID), []int64{0})
	if err != nil {
		return nil, err
	}
	if err := js.store.Commit(&transport.Commit{Job: q.id, Records: map[string][]byte{recordMeta: b}}); err != nil {
		return nil, errorf(ErrStore, "store the internal job %q: %v", q.id, err)
	}
	dropped := js.dropForRoom(drop, rec.Owner)
	js.add(q)
	return dropped, nil
}

// replayQuery uploads a one-off query's inputs, parts, from the retained
// copies of standing job from: each table's files one after the other in
// epoch order (they reach its channels in that order, the last one
// ending them), the tables side by side, as a client uploads a job's
// files. A failure fails the job, whose call says why.
func (g *Gateway) replayQuery(q *job, from string, parts []queryPart) {
	defer close(q.replayed)
	ctx, cancel := replayContext(q)
	defer cancel()
	byTable := map[string][]int{}
	for i, p := range parts {
		byTable[p.of.table] = append(byTable[p.of.table], i)
	}
	var wg sync.WaitGroup
	for _, files := range byTable {
		wg.Go(func() {
			for _, i := range files {
				if err := g.replayFile(ctx, q, 0, i, from, parts[i].copy, parts[i].header.Size); err != nil {
					g.replayFailed(q, q.files[i], "for a one-off query", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// waitAnswer waits until the one-off query's job is done and returns its
// answer; or its failure, or ctx's end.
func (q *job) waitAnswer(ctx context.Context) ([]byte, error) {
	for {
		view, changed := q.view()
		switch view.State {
		case wololov1.JobState_JOB_STATE_DONE:
			files, err := q.finalResults()
			return files[oneoffQuery+".csv"], err
		case wololov1.JobState_JOB_STATE_FAILED:
			return nil, errorf(ErrJobFailed, "the one-off query failed: %s", view.Message)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// dropQuery deletes a one-off query's job everywhere, answered or not:
// what still runs of it ends (its replay's uploads end with its failure),
// and it is dropped once they have.
func (g *Gateway) dropQuery(q *job) {
	if q.delete("a one-off query, answered or abandoned") {
		g.cfg.Counters.JobEnded(OutcomeDeleted)
	}
	select {
	case <-q.replayed:
	case <-time.After(oneoffTimeout):
		q.log.Error("the replay of a one-off query did not end within its timeout; dropping its job all the same", "timeout", oneoffTimeout)
	}
	if !q.uploadsOver(oneoffTimeout) {
		q.log.Error("an upload of a one-off query did not end within its timeout; dropping its job all the same")
	}
	g.forgetIntroduction(q.id)
	if err := g.jobs.drop(q.id); err != nil {
		q.log.Error("drop a one-off query's job", "error", err)
	}
	g.queueDrops(q.id)
}
