package gateway

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/inputlog"
	"github.com/wololo/wololo/services/base/jobid"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/transport"
)

// jobs is the gateway's job domain: which jobs exist, whose each one is,
// each one's files and how far their uploads got, its results, and when a
// client last showed interest (for retention). Every change that must
// survive a restart is a record in the store, in protobuf
// (job_record.proto). It knows nothing of gRPC: its errors are the kinds of
// errors.go.
//
// A job belongs to the client that created it (its owner) and is known to
// it by the name it chose (or was given); the job's internal id, under
// which the graph and the store know it, is a fresh random one (byName maps
// owner and name to it). lookup is the one place that decides whether a
// client may see a job.
type jobs struct {
	store transport.Store
	// outbox is the process's: where the gateway retains input, it keeps
	// the batches of the jobs whose lost shards it could rebuild alone
	// until they are over (add, alone.go).
	outbox *transport.Outbox
	// over lets go of what else the process keeps of a job that is over
	// to run it again (dropInput): the batches the outbox kept
	// (alone.go); dropped forgets what else the gateway remembers of a
	// job dropped (dropLocked): the shards it rebuilt alone.
	over, dropped func(id string)
	// inputs keeps every job's uploaded input until the job is over, to
	// run it again from (rebuild.go); nil where the gateway keeps none
	// (no data directory: nothing outlives the process anyway).
	inputs *inputlog.Dir
	log    hclog.Logger
	limits Limits
	// shape is the deployment's tasks a job's queries are planned on
	// (physical.ShapeOf of the topology); shapeErr why there is none.
	shape    physical.Shape
	shapeErr error
	// makeStanding makes a standing job's plan (EpochRuntime.MakeStanding).
	makeStanding func(p *physical.Plan) error

	mu     sync.Mutex
	byID   map[string]*job
	byName map[ownedName]*job
	// deleted remembers why the latest jobs deleted on purpose were
	// (deleteJob's reason), by name, until the name is used again: a
	// client that asks after one hears that it was deleted, not that the
	// gateway lost it (ErrDeleted). At most maxDeletedNames, oldest
	// forgotten first; kept in the store across a restart (deleted.go).
	deleted deletions
	// resume are the rebuilt jobs recover found with their replay
	// unfinished (resumeReplays goes on with them, once): not a job a
	// rebuild makes after recovery, whose replay its rebuild starts.
	resume []*job
	// following are the added queries' jobs recover linked, for
	// resumeAdded to keep up (addquery.go).
	following []*job
}

// maxDeletedNames bounds the deleted jobs whose deletion the gateway
// remembers (jobs.deleted).
const maxDeletedNames = 4096

// ownedName is a job's name in its owner's namespace.
type ownedName struct{ owner, name string }

// Records the gateway keeps per job in the store.
const (
	// recordMeta holds the job's description (JobRecord).
	recordMeta = "job/meta"
	// recordFailed holds why the job failed, when it did (plain text).
	recordFailed = "job/failed"
	// recordFailedAt holds when it failed (Unix milliseconds, decimal),
	// written with recordFailed. A done job's finish time is the sink's
	// (stage.FinishedAt), in the commit that holds its results.
	recordFailedAt = "job/failed-at"
	// recordFailedLost is present, written with recordFailed, when the job
	// failed because a process lost its state (Job.state_lost).
	recordFailedLost = "job/failed-lost"
)

// uploadKey is the record of an input's upload progress (UploadRecord);
// key is the input's (input.key).
func uploadKey(key string) string { return "upload/" + key }

// rejectsKey is the record of an input's malformed records from the
// first'th of its list on, found by one upload commit (RejectsRecord).
func rejectsKey(key string, first int) string {
	return fmt.Sprintf("%s%06d", rejectsPrefix(key), first)
}

func rejectsPrefix(key string) string { return "rejects/" + key + "/" }

// fileState is one input of a job: one of its two files or one of its
// tables (tables.go). Of its header it keeps only the names the plan
// reads (names): the others stay in the store.
type fileState struct {
	input
	names     []string // the header's column names its plan reads, in file order, the others ""
	size      int64
	start     int64  // the offset of its first record, past the header
	print     []byte // the client's fingerprint of the file (at most maxFingerprint bytes)
	offset    int64  // committed: every record before it is in the outbox
	report    schema.FileReport
	done      bool
	uploading bool
	// absent is one of the two files of a job of tables only (tables.go):
	// no columns, no bytes, done from the start.
	absent bool
	// more says that the input's table goes on in a later file of the
	// job (a one-off query's, whose input is a standing job's epochs:
	// oneoff.go): at this file's end its Source is flushed, not ended.
	more bool
}

type job struct {
	id      string // internal: the graph's and the store's
	owner   string // the client that created it
	name    string // the owner's name for it
	created time.Time
	bytes   int64 // its inputs' declared sizes together
	log     hclog.Logger
	// maxMalformed is the share of each file's records that may be
	// malformed: past it the job fails when that file's upload ends.
	maxMalformed schema.MalformedLimit
	// queries are the names of the job's queries, in order: its results
	// are NAME.csv of each (defaultNames for a job of the hand-written
	// graph an older version wrote).
	queries []string
	// queriesPrint tells its queries from others (queriesPrint).
	queriesPrint [sha256.Size]byte
	// plan is the job's physical plan (physical.Encode), nil for a job of
	// the hand-written graph an older version wrote.
	plan []byte
	// rebuildOf is the run this one replaced (JobRecord.rebuild_of), ""
	// for a job's first run.
	rebuildOf string
	// addedTo is, for the job of a query added to a standing job
	// (addquery.go), that job's internal id (JobRecord.added_to), and
	// addedAt the epoch it was added at; "" for any other job.
	addedTo string
	addedAt int64

	mu sync.Mutex
	// follows is what links an added query's job and its standing job
	// (addquery.go).
	follows  follows
	activity time.Time // last client call or progress, for retention
	finished time.Time // when the results came in or the job failed, as the store records it
	state    wololov1.JobState
	message  string
	lost     bool         // failed because a process lost its state (Job.state_lost)
	deleted  string       // why it was deleted on purpose (deleteJob), "" while it was not
	files    []*fileState // the two files at their schema.File index, then its tables (tables.go)
	// answers are its results while it is done (answers.go), their rows
	// counted once; nil otherwise.
	answers *answers
	changed chan struct{} // closed and replaced on every change
	// rebuilding is set once a loss of the job's state is being
	// repaired by a rebuild (claimRebuild).
	rebuilding bool
	// replaced is the run that took the job over when this one lost a
	// process's state (rebuild.go): its watchers follow it, and gone is
	// closed then (its uploads end, for the new run).
	replaced *job
	gone     chan struct{}
	// replayed is closed when the run's replay of its retained input is
	// over (rebuild.go; closed from the start for a first run): a
	// client's upload waits for it.
	replayed chan struct{}
	// rebuilds says what happened each time the job was run again
	// (Job.rebuilds).
	rebuilds []string
	failed   chan struct{} // closed when the job fails: its uploads end
	// standing is a standing job's epochs and versions (standing.go),
	// nil for a batch job.
	standing *standing
	// epochMu orders the steps that end an epoch or the input of a
	// standing job (standing.go): held from the check that a file's
	// upload is its epoch's last until that step is committed, and by
	// a cut (cuts.go) from its check until its step is committed; an
	// upload's Source is made under it, after the epochs ended so far.
	epochMu sync.Mutex
}

// headerBytes is the length of a header row of these names (each with its
// separator), what --max-header-bytes bounds.
func headerBytes(names []string) int {
	n := 0
	for _, c := range names {
		n += len(c) + 1
	}
	return n
}

// maxFingerprint bounds a file's fingerprint: the client's is a SHA-256
// (32 bytes); anything much longer is not a fingerprint.
const maxFingerprint = 64

// Limits are what the jobs domain admits.
type Limits struct {
	// MaxJobs is how many jobs the gateway holds at once, of all clients.
	MaxJobs int
	// ClientMaxJobs is how many unfinished jobs one client holds at once.
	ClientMaxJobs int
	// ClientMaxHeldJobs is how many jobs one client holds at once, finished
	// ones included; at the limit its oldest finished job is dropped to make
	// room for a new one.
	ClientMaxHeldJobs int
	// MaxHeaderBytes bounds each file's header row (headerBytes).
	MaxHeaderBytes int
	// MaxJobBytes bounds the declared sizes of a job's two files together.
	MaxJobBytes int64
	// ClientMaxBytes bounds the declared sizes of a client's unfinished
	// jobs together (the bytes it has in flight).
	ClientMaxBytes int64
	// MaxMalformed is the limit of a job whose client sets none.
	MaxMalformed schema.MalformedLimit
	// MaxQueries bounds a job's SQL queries; MaxQueryBytes their texts'
	// bytes together.
	MaxQueries    int
	MaxQueryBytes int
	// MaxTables bounds a job's extra tables.
	MaxTables int
}

// sameFiles refuses a resume whose inputs are not the job's: other
// tables, or a file or table of another size or another fingerprint than
// the job was created with.
func (j *job) sameFiles(inputs []inputHeader) error {
	if len(inputs) != len(j.files) || !slices.EqualFunc(inputs, j.files, func(in inputHeader, fs *fileState) bool { return in.in.key == fs.key }) {
		return errorf(ErrConflict, "job %q was created with other tables (%s then); it cannot continue with these: use another --job, or the tables it was made from", j.name, strings.Join(j.tableNames(), ", "))
	}
	for i, in := range inputs {
		fs, h := j.files[i], in.h
		if h.Size != fs.size || (len(h.Fingerprint) > 0 && len(fs.print) > 0 && !bytes.Equal(h.Fingerprint, fs.print)) {
			return errorf(ErrConflict, "job %q was created with another %s (%d bytes then, %d now, or other content); it cannot continue with this one: use another --job, or the files it was made from", j.name, fs.input, fs.size, h.Size)
		}
	}
	return nil
}

// tableNames are the names of the job's tables, in order.
func (j *job) tableNames() []string {
	var out []string
	for _, fs := range j.files[len(schema.Files):] {
		out = append(out, fs.table)
	}
	return out
}

// inputDone reports whether every input of the job is in; j.mu is held.
func (j *job) inputDone() bool {
	for _, fs := range j.files {
		if !fs.done {
			return false
		}
	}
	return true
}

// uploaded is the bytes of its inputs committed (every epoch's, for a
// standing job); j.mu is held. It is within j.bytes, checked at creation
// and at each append.
func (j *job) uploaded() int64 {
	var n int64
	for _, fs := range j.allFiles() {
		n, _ = sumSizes(n, fs.offset)
	}
	return n
}

// heldJob is what admission needs to know of a job.
type heldJob struct {
	id       string
	bytes    int64 // its inputs' declared sizes together
	done     bool  // finished (done or failed)
	finished time.Time
}

// admission decides whether a client holding the jobs held may create one
// more whose inputs (files and tables) declare sizes, while the gateway
// holds total jobs, of which others are the other clients' finished ones.
// It is pure. Admitted, it returns the finished jobs to drop first to make
// room (none while there is room): past its --client-max-held-jobs, the
// client's own oldest finished ones; past the gateway's --max-jobs, the
// oldest finished ones of any client, the caller's or another's. So no
// client's finished jobs hold the table against the others, and a new
// client is never locked out by others' jobs that are over (their
// answers were there to fetch); only unfinished jobs are never dropped.
// The quotas on unfinished jobs and bytes refuse before anything is
// dropped.
func (l Limits) admission(held, others []heldJob, total int, sizes []int64) (drop []string, err error) {
	bytes, ok := sumSizes(sizes...)
	if !ok || bytes > l.MaxJobBytes {
		return nil, errorf(ErrFull, "the job's files declare %s bytes, more than a job may have (%d, --max-job-bytes)", sizesText(sizes), l.MaxJobBytes)
	}
	var finished []heldJob
	unfinished, inFlight, fits := 0, bytes, true
	for _, h := range held {
		if h.done {
			finished = append(finished, h)
			continue
		}
		unfinished++
		if fits {
			inFlight, fits = sumSizes(inFlight, h.bytes)
		}
	}
	if unfinished >= l.ClientMaxJobs {
		return nil, errorf(ErrFull, "this client has %d unfinished jobs, its limit (--client-max-jobs); fetch or delete one first", unfinished)
	}
	if !fits {
		return nil, errorf(ErrFull, "this client's unfinished jobs would declare more than 2^63-1 bytes, more than its limit (%d, --client-max-bytes)", l.ClientMaxBytes)
	}
	if inFlight > l.ClientMaxBytes {
		return nil, errorf(ErrFull, "this client's unfinished jobs would declare %d bytes, more than its limit (%d, --client-max-bytes)", inFlight, l.ClientMaxBytes)
	}
	own := max(len(held)+1-l.ClientMaxHeldJobs, 0)
	if own > len(finished) {
		return nil, errorf(ErrFull, "this client holds %d jobs, its limit (--client-max-held-jobs), and none of them is finished; fetch or delete one first", len(held))
	}
	sortOldestFinished(finished)
	for _, h := range finished[:own] {
		drop = append(drop, h.id)
	}
	if need := total + 1 - own - l.MaxJobs; need > 0 {
		pool := append(slices.Clone(finished[own:]), others...)
		if need > len(pool) {
			return nil, errorf(ErrFull, "the gateway holds %d jobs, its limit (--max-jobs), and none of them is finished; retry once one is", total)
		}
		sortOldestFinished(pool)
		for _, h := range pool[:need] {
			drop = append(drop, h.id)
		}
	}
	return drop, nil
}

// sortOldestFinished sorts finished jobs oldest first (then by id).
func sortOldestFinished(jobs []heldJob) {
	sort.Slice(jobs, func(a, b int) bool {
		if !jobs[a].finished.Equal(jobs[b].finished) {
			return jobs[a].finished.Before(jobs[b].finished)
		}
		return jobs[a].id < jobs[b].id
	})
}

// heldBy lists, for admission, the owner's jobs and the other clients'
// finished jobs; js.mu is held.
func (js *jobs) heldBy(owner string) (held, others []heldJob) {
	for _, j := range js.byID {
		j.mu.Lock()
		done := j.state == wololov1.JobState_JOB_STATE_DONE || j.state == wololov1.JobState_JOB_STATE_FAILED
		h := heldJob{id: j.id, bytes: j.bytes, done: done, finished: j.finished}
		j.mu.Unlock()
		switch {
		case j.owner == owner:
			held = append(held, h)
		case done:
			others = append(others, h)
		}
	}
	return held, others
}

// sizesText writes a job's inputs' sizes for a message: "1, 2 and 3".
func sizesText(sizes []int64) string {
	s := make([]string, len(sizes))
	for i, n := range sizes {
		s[i] = strconv.FormatInt(n, 10)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// checkHeaders refuses a CreateJob whose headers are not a job's: a
// negative size, data outside the file, a fingerprint that is not one, a
// header row over MaxHeaderBytes; for a job of the built-in graph
// A job needs of its inputs only the columns its queries read, which
// planQueries checks (sqljob.Check); a table without a header is Check's
// to refuse, and so is a job of neither file and no table. inputs are
// inputsOf the request, or an append's (a file left out has none).
func (l Limits) checkHeaders(inputs []inputHeader) error {
	if err := checkFilesGiven(inputs[schema.Matches].h, inputs[schema.Players].h); err != nil {
		return err
	}
	for _, in := range inputs {
		f, h := in.in, in.h
		if h == nil {
			continue
		}
		if h.Size < 0 || h.DataOffset < 0 || h.DataOffset > h.Size {
			return errorf(ErrInvalid, "%s: a file of %d bytes whose data starts at byte %d", f, h.Size, h.DataOffset)
		}
		if len(h.Fingerprint) > maxFingerprint {
			return errorf(ErrInvalid, "%s: a fingerprint of %d bytes; at most %d", f, len(h.Fingerprint), maxFingerprint)
		}
		if n := headerBytes(h.Columns); n > l.MaxHeaderBytes {
			return errorf(ErrFull, "%s: a header row of %d bytes, more than a header may have (%d, --max-header-bytes)", f, n, l.MaxHeaderBytes)
		}
	}
	return nil
}

// created is what create made: the job, whether it existed already
// (resumed), the explain text of its queries' plans ("" for the built-in
// job), and the finished jobs it dropped to make room.
type created struct {
	j       *job
	resumed bool
	explain string
	dropped []string
}

// create checks both headers and the queries and creates the owner's job,
// durably, under the given name (a new one if empty). Creating a job that
// exists, with the same files and queries, is not an error: it is how a
// client resumes. To make room it may drop the owner's oldest finished
// jobs (admission), durably here once the new job is; it returns their
// ids, which the caller drops everywhere else. A CreateJob it refuses
// stores nothing and drops nothing: every check, newJob's included, comes
// before the job's description is committed. The request's
// max_malformed is the client's limit on the share of malformed records
// (unset: Limits.MaxMalformed); a job resumed keeps its own.
func (js *jobs) create(owner string, req *wololov1.CreateJobRequest) (c created, err error) {
	name, maxMalformed := req.GetJobId(), req.MaxMalformed
	queries, own := jobQueries(req)
	inputs := inputsOf(req)
	if err := js.limits.checkHeaders(inputs); err != nil {
		return c, err
	}
	jp, err := js.limits.planQueries(queries, own, inputs, js.shape, js.shapeErr)
	if err != nil {
		return c, err
	}
	if req.GetEpochEveryMs() != 0 && (!req.GetStanding() || req.GetEpochEveryMs() < 0) {
		return c, errorf(ErrInvalid, "an epoch every %dms: only a standing job has epochs, every 1ms or more", req.GetEpochEveryMs())
	}
	if req.GetStanding() {
		if jp == nil {
			return c, errorf(ErrInvalid, "a standing job needs queries to keep up to date")
		}
		if err := jp.standing(js.makeStanding); err != nil {
			return c, err
		}
	}
	if jp != nil {
		c.explain = jp.explain
	}
	limit := js.limits.MaxMalformed
	if maxMalformed != nil {
		limit = schema.MalformedLimit(*maxMalformed)
		if err := limit.Valid(); err != nil {
			return c, kindError{ErrInvalid, err}
		}
	}
	if name == "" {
		name = jobid.New()
	} else if !jobid.Valid(name) {
		return c, errorf(ErrInvalid, "job id %q: use 1-64 letters, digits, '-' or '_'", name)
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	if j, ok := js.byName[ownedName{owner, name}]; ok {
		if err := j.sameFiles(inputs); err != nil {
			return c, err
		}
		if err := j.sameQueries(queries); err != nil {
			return c, err
		}
		if (j.standing != nil) != req.GetStanding() {
			return c, errorf(ErrConflict, "job %q was created %s; it cannot continue as %s: use another --job", j.name, kindOfJob(j.standing != nil), kindOfJob(req.GetStanding()))
		}
		if len(j.plan) == 0 { // a job of the hand-written graph an older version wrote: it has no plan to explain
			c.explain = ""
		}
		j.touch()
		c.j, c.resumed = j, true
		return c, nil
	}
	// A fresh internal id each time: a name used again after its job was
	// deleted (and tombstoned in every process) makes a new job.
	id := jobid.New()
	sizes := make([]int64, len(inputs))
	for i, in := range inputs {
		sizes[i] = in.h.Size
	}
	held, others := js.heldBy(owner)
	drop, err := js.limits.admission(held, others, len(js.byID), sizes)
	if err != nil {
		return c, err
	}
	rec := &wololov1.JobRecord{CreatedUnixMs: time.Now().UnixMilli(), Owner: owner, Name: name, MaxMalformed: proto.Float64(float64(limit)), Standing: req.GetStanding(), EpochEveryMs: req.GetEpochEveryMs()}
	for _, in := range inputs {
		h := in.h
		rec.Files = append(rec.Files, &wololov1.FileRecord{Columns: h.Columns, Size: h.Size, DataOffset: h.DataOffset, Fingerprint: h.Fingerprint})
	}
	for _, t := range req.GetTables() {
		rec.Tables = append(rec.Tables, t.GetName())
	}
	if jp != nil {
		rec.Queries, rec.Plan = jp.queries, jp.plan
	}
	b, err := proto.Marshal(rec)
	if err != nil {
		return c, fmt.Errorf("encode the description of job %q: %w", id, err)
	}
	// The job is made from its description before anything is stored, as
	// a restarted gateway will make it (but for the plan, read back from
	// the same bytes by checkPlanRuns): a description it refuses is
	// refused here, and a refused CreateJob leaves nothing in the store.
	var decoded *physical.Plan
	if jp != nil {
		decoded = jp.decoded
	}
	j, err := js.newJob(id, rec, decoded)
	if err != nil {
		return c, err
	}
	// The name is no longer a deleted job's (deleted.go).
	if err := js.forgetDeletion(ownedName{owner, name}); err != nil {
		return c, err
	}
	// The job exists once its description is durable: a gateway restarted
	// from now on knows it, and the client can resume its upload.
	if err := js.store.Commit(&transport.Commit{Job: id, Records: map[string][]byte{recordMeta: b}}); err != nil {
		return c, errorf(ErrStore, "store job %q: %v", id, err)
	}
	c.dropped = js.dropForRoom(drop, owner)
	js.retainHeaders(j, 1, rec.Files)
	js.add(j)
	j.log.Info("job created", "matches-bytes", sizes[schema.Matches], "players-bytes", sizes[schema.Players], "queries", strings.Join(j.queries, ","), "tables", strings.Join(j.tableNames(), ","))
	c.j = j
	return c, nil
}

// dropForRoom drops the finished jobs admission chose to make room for
// the owner's new job, once that job is durable (a CreateJob refused
// later drops nothing); js.mu is held. It returns them all, for their
// drop everywhere else, even one whose tombstone the store refused here:
// the drop everywhere tombstones it here again (the gateway's own
// runtime shares the store), and the new job stands either way.
func (js *jobs) dropForRoom(drop []string, owner string) []string {
	for _, old := range drop {
		var was string // the dropped job's owner, for the log
		if j, ok := js.byID[old]; ok {
			was = j.owner
		}
		if err := js.dropLocked(old); err != nil {
			js.log.Error("dropping a finished job to make room for a new one", "job", old, "owner", was, "for", owner, "error", err)
			continue
		}
		js.log.Info("finished job dropped to make room for a new one", "job", old, "owner", was, "for", owner, "limits", "--client-max-held-jobs, --max-jobs")
	}
	return drop
}

// newJob is the job a description (JobRecord) describes. It refuses one
// that no CreateJob admits now (a header without a column its queries
// read, sizes that are negative or overflow together, a table name that
// is not one), which a store written before those checks may hold. A
// description without queries is of a job of the hand-written graph an
// older version wrote: the job is made, without a plan, with the default
// queries' result names (its answers, if it finished, stand), and takes
// the lost-state path (see Recover).
//
// decoded, when not nil, is rec.Plan decoded already (CreateJob's, which
// checkPlanRuns read back from the same bytes); nil: it is decoded here.
func (js *jobs) newJob(id string, rec *wololov1.JobRecord, decoded *physical.Plan) (*job, error) {
	if len(rec.Files) != len(schema.Files)+len(rec.Tables) {
		return nil, errorf(ErrInvalid, "job %q: a description of %d files and %d tables", id, len(rec.Files), len(rec.Tables))
	}
	if len(rec.Tables) > 0 && len(rec.Queries) == 0 {
		return nil, errorf(ErrInvalid, "job %q: %d tables and no queries", id, len(rec.Tables))
	}
	name := rec.Name
	if name == "" { // written before owners: the name is the id
		name = id
	}
	j := &job{
		id: id, owner: rec.Owner, name: name, created: time.UnixMilli(rec.CreatedUnixMs), activity: time.Now(),
		rebuildOf: rec.RebuildOf, rebuilds: cleanReasons(rec.Rebuilds), addedTo: rec.AddedTo, addedAt: rec.AddedAt,
		log:   js.log.With("job", id, "owner", rec.Owner, "name", name),
		state: wololov1.JobState_JOB_STATE_UPLOADING, changed: make(chan struct{}), failed: make(chan struct{}),
		gone: make(chan struct{}), replayed: closedChan(),
	}
	j.maxMalformed = js.limits.MaxMalformed
	if rec.MaxMalformed != nil {
		j.maxMalformed = schema.MalformedLimit(rec.GetMaxMalformed())
		if err := j.maxMalformed.Valid(); err != nil {
			return nil, kindError{ErrInvalid, fmt.Errorf("job %q: %w", id, err)}
		}
	}
	j.queries, j.queriesPrint, j.plan = defaultNames, queriesPrint(rec.Queries), nil
	var scanned map[string][]string // of a plan
	if len(rec.Queries) > 0 {
		if len(rec.Plan) == 0 {
			return nil, errorf(ErrInvalid, "job %q: %d queries and no plan", id, len(rec.Queries))
		}
		qs := queriesOf(rec.Queries)
		if err := sqljob.CheckNames(qs); err != nil {
			return nil, kindError{ErrInvalid, fmt.Errorf("job %q: %w", id, err)}
		}
		j.queries, j.plan = make([]string, len(qs)), rec.Plan
		for i, q := range qs {
			j.queries[i] = q.Name
		}
		p := decoded
		if p == nil {
			var err error
			if p, err = physical.Decode(rec.Plan); err != nil {
				return nil, kindError{ErrInvalid, fmt.Errorf("job %q: %w", id, err)}
			}
		}
		scanned = p.Scanned()
	}
	if rec.Standing {
		if len(j.plan) == 0 {
			return nil, errorf(ErrInvalid, "job %q: standing, and no plan", id)
		}
		j.standing = newStanding(j.resultFiles(), rec.EpochEveryMs, js.store)
	}
	sizes := make([]int64, len(rec.Files))
	for i, f := range rec.Files {
		sizes[i] = f.Size
	}
	var ok bool
	if j.bytes, ok = sumSizes(sizes...); !ok {
		return nil, errorf(ErrInvalid, "job %q: files of %s bytes", id, sizesText(sizes))
	}
	seen := map[string]bool{}
	for i, f := range rec.Files {
		fs := &fileState{size: f.Size, start: f.DataOffset, print: f.Fingerprint, offset: f.DataOffset, report: schema.FileReport{Missing: map[string]int64{}}}
		if i < len(schema.Files) {
			fs.input = fileInput(schema.File(i))
			fs.absent = len(f.Columns) == 0 && f.Size == 0
			fs.done = fs.absent
		} else {
			name := rec.Tables[i-len(schema.Files)]
			if err := sqljob.CheckTableName(name); err != nil || seen[strings.ToLower(name)] {
				return nil, errorf(ErrInvalid, "job %q: table %q: not a name, or given twice", id, name)
			}
			seen[strings.ToLower(name)] = true
			fs.input = tableInput(name)
		}
		if len(j.plan) > 0 { // its plan reads the columns by name
			for _, c := range scanned[fs.table] {
				if !slices.Contains(f.Columns, c) {
					return nil, errorf(ErrInvalid, "job %q: %s: no column %q (read by its queries)", id, fs.input, c)
				}
			}
			fs.names = scannedOnly(f.Columns, scanned[fs.table])
		}
		j.files = append(j.files, fs)
	}
	if j.files[schema.Matches].absent != j.files[schema.Players].absent || j.files[schema.Matches].absent && (len(rec.Tables) == 0 || len(j.plan) == 0) {
		return nil, errorf(ErrInvalid, "job %q: one of its two files without the other, or neither and no table of its queries", id)
	}
	return j, nil
}

// scannedOnly is a header with only the names a plan's scans read of it
// kept, the others "" (a column's place is all the plan needs of it), so
// that what a job keeps in memory does not grow with its headers.
func scannedOnly(header, read []string) []string {
	out := make([]string, len(header))
	for i, name := range header {
		if slices.Contains(read, name) {
			out[i] = strings.Clone(name)
		}
	}
	return out
}

// recover rebuilds the jobs of a store image: descriptions, upload offsets
// and reports, results. It returns the jobs to be dropped: those whose
// description cannot be read, and runs a rebuild replaced.
func (js *jobs) recover(img *transport.Image) (unreadable []string, err error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.recoverDeletions(img) // first: a name a job holds is no deleted job's
	for id, ji := range img.Jobs {
		raw := ji.Records[recordMeta]
		if raw == nil {
			continue
		}
		rec, err := decodeJobRecord(raw)
		if err == nil && rec.QueryOf != "" {
			// A one-off query's job lives as long as its call, which
			// the restart ended: its client asks again (oneoff.go).
			js.log.Info("a one-off query's job, whose call the restart ended; dropping it", "job", id, "query-of", rec.QueryOf)
			unreadable = append(unreadable, id)
			continue
		}
		var j *job
		if err == nil {
			j, err = js.newJob(id, rec, nil)
		}
		if err != nil {
			js.log.Error("unreadable job description; dropping the job", "job", id, "error", err)
			unreadable = append(unreadable, id)
			continue
		}
		if err := recoverUploads(j.files, ji.Records); err != nil {
			return nil, errorf(ErrInvalid, "job %q: %v", id, err)
		}
		if j.standing != nil {
			if err := js.recoverStanding(j, ji.Records); err != nil {
				return nil, errorf(ErrInvalid, "job %q: %v", id, err)
			}
		}
		if j.inputDone() {
			j.state = wololov1.JobState_JOB_STATE_RUNNING
		}
		failed := ji.Records[schema.FailedResultsRecord] != nil || ji.Records[recordFailed] != nil
		if names := j.resultFiles(); !failed && ji.Records[schema.ResultRecord(names[0])] != nil {
			// Counted once, here, before the gateway serves: recover
			// holds js.mu, but no call waits for it yet.
			j.setResultsLocked(answersOf(names, ji.Records), finishTime(stage.FinishedAt(ji.Records)))
		}
		if reason := ji.Records[schema.FailedResultsRecord]; reason != nil {
			// The final commit says the job has no results (its answer
			// too large): failed at its finish, whether or not the
			// failure was recorded before the gateway stopped.
			j.failLocked(string(reason), finishTime(stage.FinishedAt(ji.Records)))
		}
		if reason := ji.Records[recordFailed]; reason != nil {
			// Results that came after a failure are not to be trusted.
			j.failLocked(string(reason), finishTime(failedAt(ji.Records[recordFailedAt])))
			j.lost = ji.Records[recordFailedLost] != nil
		}
		if j.over() {
			js.dropKept(ji)
		}
		if js.inputs != nil && j.replayPending() {
			// A rebuild's replay to go on with (resumeReplays); the
			// client's upload waits for it.
			j.replayed = make(chan struct{})
			js.resume = append(js.resume, j)
		}
		js.add(j)
		j.log.Info("job recovered", "state", j.state, "matches-offset", j.files[0].offset, "players-offset", j.files[1].offset, "message", j.message)
	}
	// A rebuild's description is durable before the run it replaces is
	// dropped (rebuild.go): a gateway stopped in between holds both, and
	// the rebuild wins.
	for _, j := range js.byID {
		old, ok := js.byID[j.rebuildOf]
		if !ok {
			continue
		}
		js.byName[ownedName{j.owner, j.name}] = j
		if js.inputs != nil && !js.inputs.Has(j.id) {
			if err := js.inputs.Rename(old.id, j.id); err != nil {
				js.log.Error("the retained input of a rebuilt job could not be given to its new run", "job", j.id, "error", err)
			}
		}
		if err := js.dropLocked(old.id); err != nil {
			return nil, err
		}
		j.log.Info("job recovered as the rebuild of a run that is dropped now", "replaces", old.id)
		unreadable = append(unreadable, old.id)
	}
	unreadable = append(unreadable, js.linkAdded()...)
	sort.Strings(unreadable)
	return unreadable, nil
}

// recoverUploads reads back how far each file's upload got (its
// UploadRecord and its malformed records) from a job's records.
func recoverUploads(files []*fileState, records map[string][]byte) error {
	for _, fs := range files {
		raw := records[uploadKey(fs.key)]
		if raw == nil {
			continue
		}
		up, err := decodeUploadRecord(raw)
		if err != nil {
			return fmt.Errorf("upload record of %s: %w", fs.input, err)
		}
		fs.offset, fs.done = up.Offset, up.Done
		fs.report = schema.FileReport{Rows: up.Rows, Malformed: up.Malformed, Missing: maps.Clone(up.Missing), OversizedAt: up.OversizedAt}
		if fs.report.Missing == nil {
			fs.report.Missing = map[string]int64{}
		}
		if fs.report.Rejects, err = recoverRejects(records, fs.key); err != nil {
			return err
		}
	}
	return nil
}

// recoverRejects gathers the malformed records an input's upload commits
// listed (rejectsKey of its key), in file order.
func recoverRejects(records map[string][]byte, key string) ([]schema.Reject, error) {
	prefix := rejectsPrefix(key)
	var keys []string
	for k := range records {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys) // the index is zero-padded: in list order
	var out []schema.Reject
	for _, k := range keys {
		var rec wololov1.RejectsRecord
		if err := proto.Unmarshal(records[k], &rec); err != nil {
			return nil, fmt.Errorf("rejects record %s: %w", k, err)
		}
		if first, err := strconv.Atoi(strings.TrimPrefix(k, prefix)); err != nil || first != len(out) {
			return nil, fmt.Errorf("rejects record %s: the list has %d before it", k, len(out))
		}
		for _, r := range rec.Rejects {
			out = append(out, schema.Reject{Offset: r.Offset, Reason: r.Reason, Head: r.Head})
		}
	}
	return out, nil
}

// rejectsRecord is the RejectsRecord of rejects.
func rejectsRecord(rejects []schema.Reject) ([]byte, error) {
	rec := &wololov1.RejectsRecord{}
	for _, r := range rejects {
		rec.Rejects = append(rec.Rejects, &wololov1.Reject{Offset: r.Offset, Reason: r.Reason, Head: r.Head})
	}
	return proto.Marshal(rec)
}

// get returns a job by its internal id (for the graph's side: results,
// retention).
func (js *jobs) get(id string) (*job, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.byID[id]
	if !ok {
		return nil, errorf(ErrNoJob, "no job %q", id)
	}
	return j, nil
}

// lookup returns the owner's job of that name. Another client's job is as
// absent as one that never existed: the same error, the same message.
func (js *jobs) lookup(owner, name string) (*job, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.byName[ownedName{owner, name}]
	if !ok {
		if why, ok := js.deleted.why(ownedName{owner, name}); ok {
			return nil, errorf(ErrDeleted, "job %q was %s", name, why)
		}
		return nil, errorf(ErrNoJob, "no job %q", name)
	}
	return j, nil
}

// ownedBy lists the owner's jobs, oldest first (then by name). Like
// lookup, it never yields another client's job.
func (js *jobs) ownedBy(owner string) []*job {
	js.mu.Lock()
	var out []*job
	for _, j := range js.byID {
		if j.owner == owner {
			out = append(out, j)
		}
	}
	js.mu.Unlock()
	sort.Slice(out, func(a, b int) bool {
		if !out[a].created.Equal(out[b].created) {
			return out[a].created.Before(out[b].created)
		}
		return out[a].name < out[b].name
	})
	return out
}

// add indexes a job; js.mu is held. A name used again is no longer a
// deleted job's.
func (js *jobs) add(j *job) {
	js.byID[j.id] = j
	js.byName[ownedName{j.owner, j.name}] = j
	js.deleted.forget(ownedName{j.owner, j.name})
	js.keepBatches(j)
}

// drop forgets a job and tombstones it in the store (durably), which
// deletes everything the store holds of it.
func (js *jobs) drop(id string) error {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.dropLocked(id)
}

// dropDeleted is drop of a job deleted on purpose, why: until its name
// is used again, a client asking after it hears why (lookup's
// ErrDeleted) instead of that there is no such job.
func (js *jobs) dropDeleted(id, why string) error {
	js.mu.Lock()
	defer js.mu.Unlock()
	if j, ok := js.byID[id]; ok {
		if err := js.rememberDeletion(ownedName{j.owner, j.name}, why); err != nil {
			return err
		}
	}
	return js.dropLocked(id)
}

// dropLocked is drop with js.mu held.
func (js *jobs) dropLocked(id string) error {
	if j, ok := js.byID[id]; ok {
		if k := (ownedName{j.owner, j.name}); js.byName[k] == j { // not the run that replaced it
			delete(js.byName, k)
		}
		delete(js.byID, id)
	}
	if err := js.store.DropJob(id); err != nil {
		return errorf(ErrStore, "drop job %q: %v", id, err)
	}
	js.dropInput(id)
	if js.dropped != nil {
		js.dropped(id)
	}
	return nil
}

// idleJob is a job idle past its retention, and the flag that set it.
type idleJob struct{ id, flag string }

// idle lists the jobs without client activity for longer than their
// retention: an open standing job waiting for its next append (every
// append in) standing, any other retention (an upload abandoned, a
// standing job's append too, and a finished job). An added query's job
// is not one while it runs: no client calls it, and it is deleted with
// the job it follows (addquery.go); once over, it is dropped as any
// finished job is.
func (js *jobs) idle(now time.Time, retention, standing time.Duration) []idleJob {
	js.mu.Lock()
	defer js.mu.Unlock()
	var out []idleJob
	for id, j := range js.byID {
		j.mu.Lock()
		over := j.state == wololov1.JobState_JOB_STATE_DONE || j.state == wololov1.JobState_JOB_STATE_FAILED
		keep, flag := retention, "--retention"
		if s := j.standing; s != nil && !over && !s.closed && s.committed == s.appendCount() {
			keep, flag = standing, "--standing-retention"
		}
		if now.Sub(j.activity) > keep && (j.addedTo == "" || over) {
			out = append(out, idleJob{id, flag})
		}
		j.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b idleJob) int { return strings.Compare(a.id, b.id) })
	return out
}

func (j *job) notifyLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

func (j *job) touch() {
	j.mu.Lock()
	j.activity = time.Now()
	j.mu.Unlock()
}

// upload is one input's upload slot, held by one Upload call at a time.
type upload struct {
	j      *job
	file   int        // the input's index in its epoch's files (j.files for a batch job)
	fs     *fileState // that input
	epoch  int64      // its epoch, for a standing job (1 for j.files); 0 for a batch job
	in     input
	offset int64
	report schema.FileReport
}

// beginUpload takes the upload slot of the input of index file in the
// files of epoch (j.files for a batch job, epoch 0). done reports that
// the input is complete already (no slot is taken then).
func (j *job) beginUpload(epoch int64, file int) (u *upload, done bool, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.activity = time.Now()
	if err := j.failureLocked(); err != nil {
		return nil, false, err
	}
	fs := j.epochFiles(epoch)[file]
	if fs.uploading {
		return nil, false, errorf(ErrBusy, "job %q: %s is already being uploaded", j.name, fs.input)
	}
	u = &upload{j: j, file: file, fs: fs, epoch: epoch, in: fs.input, offset: fs.offset, report: cloneReport(fs.report)}
	if fs.done {
		return u, true, nil
	}
	fs.uploading = true
	return u, false, nil
}

// end releases the upload slot.
func (u *upload) end() {
	u.j.mu.Lock()
	u.fs.uploading = false
	u.j.notifyLocked() // for uploadsOver
	u.j.mu.Unlock()
}

// uploadsOver waits until no upload holds a slot of the job (each has
// committed its last step), or until timeout.
func (j *job) uploadsOver(timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		j.mu.Lock()
		busy := false
		for _, fs := range j.allFiles() {
			busy = busy || fs.uploading
		}
		changed := j.changed
		j.mu.Unlock()
		if !busy {
			return true
		}
		select {
		case <-changed:
		case <-deadline:
			return false
		}
	}
}

// record is what a commit of the upload up to offset records.
func (u *upload) record(offset int64, report schema.FileReport, done bool) ([]byte, error) {
	return proto.Marshal(&wololov1.UploadRecord{
		Offset: offset, Done: done, Rows: report.Rows, Malformed: report.Malformed, Missing: maps.Clone(report.Missing),
		OversizedAt: report.OversizedAt,
	})
}

// committed notes that the upload up to offset is durable, and returns
// what that added: bytes of the file, records read and malformed records.
func (u *upload) committed(offset int64, report schema.FileReport, done bool) (bytes, records, malformed int64) {
	j := u.j
	j.mu.Lock()
	defer j.mu.Unlock()
	fs := u.fs
	bytes, records, malformed = offset-fs.offset, report.Rows-fs.report.Rows, report.Malformed-fs.report.Malformed
	fs.offset, fs.report, fs.done = offset, cloneReport(report), done
	j.activity = time.Now()
	if j.inputDone() && j.state == wololov1.JobState_JOB_STATE_UPLOADING {
		j.state = wololov1.JobState_JOB_STATE_RUNNING
		j.log.Info("every file and table uploaded; job running")
	}
	j.notifyLocked()
	return bytes, records, malformed
}

func cloneReport(r schema.FileReport) schema.FileReport {
	c := r
	c.Missing = maps.Clone(r.Missing)
	c.OversizedAt = slices.Clone(r.OversizedAt)
	c.Rejects = slices.Clone(r.Rejects) // the heads are never written to
	if c.Missing == nil {
		c.Missing = map[string]int64{}
	}
	return c
}

// finish records the job's answers (made by answersOf from the sink's
// final commit, which holds them), finished when that commit says. It
// reports whether it holds them now (the job did not fail) and whether
// that made it done (it was not already). A failed job stays failed: what
// reached the sink after a channel's state was lost cannot be trusted.
// Nothing it does under j.mu grows with the answers.
func (j *job) finish(a *answers, finished time.Time) (held, done bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state == wololov1.JobState_JOB_STATE_FAILED {
		j.log.Warn("results of a failed job ignored", "reason", j.message)
		return false, false
	}
	was := j.state
	j.setResultsLocked(a, finished)
	j.log.Info("job done", "elapsed", j.finished.Sub(j.created).Round(time.Millisecond), "answer-bytes", a.bytes)
	return true, was != wololov1.JobState_JOB_STATE_DONE
}

// setResultsLocked makes the job done with its answers, finished at the
// time the store records (see finishTime).
func (j *job) setResultsLocked(a *answers, finished time.Time) {
	j.answers = a
	j.state = wololov1.JobState_JOB_STATE_DONE
	j.activity = time.Now()
	j.finished = finished
	j.notifyLocked()
}

// finishTime is a job's finish time as its store records it. A job
// recovered from a store written before finish times were recorded has
// none: it is taken as now, as it always was then, and its elapsed time
// includes the time the gateway was down.
func finishTime(at time.Time, recorded bool) time.Time {
	if !recorded {
		return time.Now()
	}
	return at
}

// failedRecord is recordFailedAt's value for a failure at at.
func failedRecord(at time.Time) []byte { return strconv.AppendInt(nil, at.UnixMilli(), 10) }

// failedAt reads recordFailedAt's value; false if it is missing or
// unreadable.
func failedAt(b []byte) (time.Time, bool) {
	ms, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}

// fail marks the job failed at at with a reason, unless it is done (its
// results are in, whatever happened after) or failed already; it reports
// whether it did. Its uploads end (failure). lost says the reason is a
// process's lost state (Job.state_lost).
func (j *job) fail(reason string, at time.Time, lost bool) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state == wololov1.JobState_JOB_STATE_DONE || j.state == wololov1.JobState_JOB_STATE_FAILED {
		return false
	}
	j.failLocked(reason, at)
	j.lost = lost
	return true
}

// delete marks the job deleted on purpose, why, and failed with why as
// its reason if it was not over; it says whether it was not.
func (j *job) delete(why string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	live := j.state != wololov1.JobState_JOB_STATE_DONE && j.state != wololov1.JobState_JOB_STATE_FAILED
	j.deleted = why
	if live {
		j.failLocked(why, time.Now())
	}
	return live
}

// deletedWhy is why the job was deleted on purpose, "" if it was not.
func (j *job) deletedWhy() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.deleted
}

// failLocked marks the job failed; its reason is cleaned here
// (transport.CleanReason), where every failure the gateway shows a client
// enters a job, live or read back from the store: a reporter's, an
// upload's, a deletion's.
func (j *job) failLocked(reason string, at time.Time) {
	if j.state == wololov1.JobState_JOB_STATE_FAILED {
		return
	}
	j.state, j.message, j.answers = wololov1.JobState_JOB_STATE_FAILED, transport.CleanReason(reason), nil
	j.activity = time.Now()
	j.finished = at
	close(j.failed)
	j.notifyLocked()
}

// failure is the error of a call that needs the job to be alive (an
// upload), nil while it is.
func (j *job) failure() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.failureLocked()
}

func (j *job) failureLocked() error {
	if j.state != wololov1.JobState_JOB_STATE_FAILED {
		return nil
	}
	if j.deleted != "" {
		return errorf(ErrDeleted, "job %q was %s", j.name, j.deleted)
	}
	return errorf(ErrJobFailed, "job %q failed: %s", j.name, j.message)
}

// finalResults returns the results of a done job.
func (j *job) finalResults() (map[string][]byte, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.activity = time.Now()
	if j.state != wololov1.JobState_JOB_STATE_DONE {
		return nil, errorf(ErrNotDone, "job %q is %s, not done", j.name, strings.ToLower(strings.TrimPrefix(j.state.String(), "JOB_STATE_")))
	}
	return j.answers.files, nil
}

// listing is the job as ListJobs lists it. Unlike view it is not client
// activity: a client that lists its jobs now and then does not keep them
// all from their retention.
func (j *job) listing() *wololov1.JobSummary {
	j.mu.Lock()
	defer j.mu.Unlock()
	end := time.Now()
	if !j.finished.IsZero() {
		end = j.finished // a finished job's time stops growing
	}
	s := &wololov1.JobSummary{Name: j.name, Id: j.id, State: j.state, Message: j.message, BytesTotal: j.bytes,
		Created: timestamppb.New(j.created), ElapsedSeconds: end.Sub(j.created).Seconds()}
	s.BytesUploaded = j.uploaded()
	j.standingListing(s)
	return s
}

// view returns the job's state for a client, and a channel closed on its
// next change.
func (j *job) view() (*wololov1.Job, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.activity = time.Now()
	end := time.Now()
	if !j.finished.IsZero() {
		end = j.finished // a finished job's time stops growing
	}
	out := &wololov1.Job{JobId: j.name, State: j.state, Message: j.message, StateLost: j.lost, ElapsedSeconds: end.Sub(j.created).Seconds(), Queries: slices.Clone(j.queries), Rebuilds: slices.Clone(j.rebuilds)}
	for i, fs := range j.files {
		r := &wololov1.FileReport{
			File: fs.name, Rows: fs.report.Rows, Malformed: fs.report.Malformed,
			Missing: maps.Clone(fs.report.Missing), Offset: fs.offset, Size: fs.size, Done: fs.done,
			OversizedAt: slices.Clone(fs.report.OversizedAt),
		}
		if r.Missing == nil {
			r.Missing = map[string]int64{}
		}
		if j.state == wololov1.JobState_JOB_STATE_DONE || j.state == wololov1.JobState_JOB_STATE_FAILED {
			for _, rj := range fs.report.Rejects {
				r.Rejects = append(r.Rejects, &wololov1.Reject{Offset: rj.Offset, Reason: rj.Reason, Head: rj.Head})
			}
		}
		switch i {
		case int(schema.Matches):
			out.Matches = r
		case int(schema.Players):
			out.Players = r
		default:
			out.Tables = append(out.Tables, r)
		}
	}
	if j.answers != nil {
		out.ResultRows = maps.Clone(j.answers.rows) // counted when they came in (answersOf)
	}
	if j.standing != nil {
		j.standingView(out)
	}
	if j.files[schema.Matches].absent { // a job of tables only: no file to report
		out.Matches, out.Players = nil, nil
	}
	return out, j.changed
}

// cleanReasons is lines of a job's history as a client may be shown them
// (transport.CleanReason): a rebuild's line quotes its reporter's reason,
// and a store written before reasons were cleaned may hold one that was
// not.
func cleanReasons(lines []string) []string {
	if lines == nil {
		return nil
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = transport.CleanReason(l)
	}
	return out
}
