package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/atomicfile"
	"github.com/wololo/wololo/services/base/backoff"
	"github.com/wololo/wololo/services/base/jobid"
	"github.com/wololo/wololo/services/cmdline/cli"
	sqlflags "github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/cmdline/inputfile"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/wire/rpc"
)

// ChunkSize is the number of file bytes per upload message.
const ChunkSize = 1 << 20

// SubmitOptions describe one job.
type SubmitOptions struct {
	Server string
	// TLS is how to reach the gateway's public port (tlsflags.GatewayTLS);
	// nil dials plain TCP (a gateway run with --insecure).
	TLS            *tls.Config
	Matches        string
	Players        string
	Out            string
	JobID          string    // optional; lets a restarted client re-attach
	Keep           bool      // do not delete the job at the gateway after fetching
	Progress       io.Writer // progress output; nil for none
	Terminal       bool      // draw a progress bar instead of lines
	UploadAttempts int       // per file; 10 if 0
	// Reach bounds how long any step waits for an unreachable gateway;
	// DefaultReach if 0.
	Reach time.Duration
	// MaxMalformed is the share of a file's records that may be malformed
	// (0 to 1); past it the job fails. Nil: the gateway's default.
	MaxMalformed *float64
	// Again is how the hints printed after a failure run the client again.
	Again Invocation
	// StallTimeout ends a job that makes no progress for this long with
	// an error marked cli.ErrStalled, saying what is stuck; 0 waits for
	// ever.
	StallTimeout time.Duration
	// Queries are the job's own SQL queries (docs/sql.md), whose results
	// are NAME.csv of each; none: the four default ones (q1.csv..q4.csv).
	// The gateway compiles them; one it refuses fails the submit with its
	// message (cli.ErrRefused), which names the construct and line:column.
	Queries []sqljob.Query
	// Tables are the job's extra tables (--table NAME=F, a job of Queries
	// only), uploaded after the two files.
	Tables []Table
	// Explain, if set, is where the plans the gateway made of the
	// queries are printed once the job is created, before the upload
	// (--explain; io.Discard with --json, whose object carries them).
	Explain io.Writer
	// Rebuilds is how many times a job that was lost is submitted again
	// from its files (see lostJob): a process lost its state under it
	// (Job.state_lost) or the gateway no longer has it. 0 gives up at the
	// first loss.
	Rebuilds int
	// Notices is where what is not progress but changes what happens is
	// said (a lost job submitted again), --quiet or not: stderr; nil for
	// nowhere.
	Notices io.Writer
	// Standing makes a standing job (docs/standing.md): the submit
	// returns once the version of its epoch 1 is out, written to Out, and
	// leaves the job open at the gateway (Keep) for `client append`.
	Standing bool
	// EpochEvery, for a standing job (or an append), makes the gateway
	// also end an epoch every this much time of input while the files
	// upload (--epoch-every): a large upload publishes versions before
	// its last byte. 0: only the upload's end ends one.
	EpochEvery time.Duration
	// Stdin is what "-" as an input's path reads (at most one of them):
	// nil for os.Stdin. It is spooled to a temporary file as it is read
	// (a resume or a rebuild reads it again), removed at the end.
	Stdin io.Reader
	// Created, if set, is called with the job's id once the gateway has
	// created (or found) the job, before its upload: a caller may follow
	// the job from then on (`wololo local run` prints each version as
	// it is published). Called again when a lost job is created again.
	Created func(jobID string)
	// epoch is the epoch whose files are uploaded and whose version is
	// waited for (standing.go): 1 for a standing submit, an append's.
	epoch int64
}

// DefaultRebuilds is how many times a lost job is submitted again.
const DefaultRebuilds = 3

// created calls o.Created, if set, with the job's id.
func (o SubmitOptions) created(id string) {
	if o.Created != nil {
		o.Created(id)
	}
}

// notice says something on o.Notices.
func (o SubmitOptions) notice(format string, args ...any) {
	if o.Notices != nil {
		fmt.Fprintf(o.Notices, format, args...)
	}
}

// Table is an extra table of a job: its name in the queries and the path
// of its CSV file, whose header row names its columns.
type Table struct{ Name, Path string }

// input is one input of a job to upload: one of the two files, or a
// table (file unspecified), read from src.
type input struct {
	path  string
	src   *inputfile.File
	file  wololov1.InputFile
	table string
	size  int64
	epoch int64 // a standing job's epoch whose file it is, 0 for a batch job's
}

// start is the first frame of the input's upload to job id.
func (in input) start(id string) *wololov1.UploadStart {
	return &wololov1.UploadStart{JobId: id, File: in.file, Table: in.table, Epoch: in.epoch}
}

// key tells the input from the job's others in the progress.
func (in input) key() string {
	if in.table != "" {
		return "table " + in.table
	}
	return in.file.String()
}

// requestQueries are the queries as CreateJob takes them.
func requestQueries(qs []sqljob.Query) []*wololov1.Query {
	var out []*wololov1.Query
	for _, q := range qs {
		out = append(out, &wololov1.Query{Name: q.Name, Sql: q.Text})
	}
	return out
}

// Summary is what a finished submit returns.
type Summary struct {
	JobID    string
	Job      *wololov1.Job
	Files    map[string]string // result file name → path written
	Upload   time.Duration
	Total    time.Duration
	Uploaded int64 // bytes
	// Rejects is the path of the rejects.csv written beside the results
	// (WriteRejects), "" if the job listed no malformed record.
	Rejects string
	// Explain is the gateway's plans of the job's queries
	// (CreateJobResponse.explain), "" for the built-in job.
	Explain string
	// Rebuilds are why the job was lost and submitted again from its
	// files, one entry each time (SubmitOptions.Rebuilds).
	Rebuilds []string
	// Epoch is, for a standing job, the epoch whose version Files are.
	Epoch int64
}

// Dial connects to a gateway with tlsConfig (nil: plain TCP).
func Dial(server string, tlsConfig *tls.Config) (*grpc.ClientConn, error) {
	conn, err := rpc.NewClient(server, tlsConfig)
	if err != nil {
		return nil, fmt.Errorf("gateway address %q: %w", server, err)
	}
	return conn, nil
}

// explain turns gRPC errors into messages for people, marked with the
// kind of failure that sets the exit status: the gateway could not be
// reached (cli.ErrUnreachable) or it refused the request (cli.ErrRefused).
func explain(server string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	if rpc.IsRevoked(err) {
		// The gateway says it all: whose certificate, and what to do.
		return cli.Mark(errors.New(st.Message()), cli.ErrRefused)
	}
	switch st.Code() {
	case codes.Unavailable:
		return fmt.Errorf("%w at %s: %s", ErrUnreachable, server, st.Message())
	case codes.DeadlineExceeded:
		return fmt.Errorf("%w at %s: no answer in time (is it running?)", ErrUnreachable, server)
	case codes.Unimplemented:
		return cli.Mark(fmt.Errorf("cannot use --server %s: it answers gRPC but serves no JobService, so it is not the gateway's public port (%d unless the deployment chose another) but another port of the deployment: %s", server, DefaultPublicPort, st.Message()), cli.ErrUsage)
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition:
		return cli.Mark(errors.New(st.Message()), cli.ErrRefused)
	case codes.Unauthenticated, codes.PermissionDenied:
		return cli.Mark(fmt.Errorf("the gateway at %s refused this client's credential (%s): %s (see --tls-dir and --name)", server, st.Code(), st.Message()), cli.ErrRefused)
	case codes.ResourceExhausted:
		return cli.Mark(fmt.Errorf("the gateway at %s is at a limit (%s): %s", server, st.Code(), st.Message()), cli.ErrRefused)
	}
	return fmt.Errorf("gateway error (%s): %s", st.Code(), st.Message())
}

// Request is the CreateJob a submit of o sends: the files' and tables'
// headers read (sources.headers: a file that cannot be read,
// or is not CSV, is an error naming it) and fingerprinted, and o's
// queries. Of the job's checks (sqljob.Check, which the gateway's
// CreateJob runs, as `wololo explain` and `wololo demo` do) it runs only
// the queries' names' (sqljob.CheckNames, a usage error with the
// gateway's message), which no gateway's flags change.
func Request(o SubmitOptions) (*wololov1.CreateJobRequest, error) {
	src, err := openSources(o)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return request(o, src)
}

// request is Request of o's inputs opened as src.
func request(o SubmitOptions, src sources) (*wololov1.CreateJobRequest, error) {
	if len(o.Queries) > 0 {
		if err := sqljob.CheckNames(o.Queries); err != nil {
			return nil, cli.Mark(err, cli.ErrUsage)
		}
	}
	mh, ph, tables, err := src.headers(o)
	if err != nil {
		return nil, err
	}
	if err := checkLocally(o, mh, ph, tables); err != nil {
		return nil, err
	}
	return &wololov1.CreateJobRequest{Matches: mh, Players: ph, JobId: o.JobID, MaxMalformed: o.MaxMalformed, Queries: requestQueries(o.Queries), Tables: tables, Standing: o.Standing, EpochEveryMs: o.EpochEvery.Milliseconds()}, nil
}

// checkLocally runs, before anything is sent, the checks of the job
// (sqljob.Check, the gateway's) that no flag of a gateway changes: the
// headers within the hard bound of any gateway (schema.MaxHeaderBytes),
// the columns the queries read (the four default ones when o gives none)
// in the files' and tables' headers, the queries' text. A refusal is the
// gateway's own message (`matches.csv: no column "server" (read by query
// q1)`), given at once and without a gateway; the limits a gateway sets
// (--max-queries and the like) and the plan on its topology are left to
// its CreateJob.
func checkLocally(o SubmitOptions, mh, ph *wololov1.FileHeader, tables []*wololov1.Table) error {
	for _, h := range []struct {
		name string
		hd   *wololov1.FileHeader
	}{{schema.Matches.String(), mh}, {schema.Players.String(), ph}} {
		if h.hd.GetDataOffset() > schema.MaxHeaderBytes {
			return fmt.Errorf("%s: the header row is longer than %d bytes, more than any gateway takes", h.name, schema.MaxHeaderBytes)
		}
	}
	spec := sqljob.Spec{Matches: mh.GetColumns(), Players: ph.GetColumns(), NoFiles: mh == nil, Queries: o.Queries, Own: len(o.Queries) > 0}
	if !spec.Own {
		spec.Queries = sqlflags.DefaultQueries()
	}
	for _, t := range tables {
		spec.Tables = append(spec.Tables, sqljob.Table{Name: t.GetName(), Columns: t.GetHeader().GetColumns()})
	}
	unbounded := sqljob.Limits{MaxQueries: math.MaxInt, MaxQueryBytes: math.MaxInt, MaxTables: math.MaxInt}
	shape := physical.Shape{Gateway: physical.Task{Name: "gateway", Replicas: 1}, Shard: physical.Task{Name: "shard", Replicas: 1}}
	if _, err := sqljob.Check(spec, unbounded, shape); err != nil && !errors.Is(err, sqljob.ErrPlanner) {
		return err
	}
	return nil
}

// Submit runs a whole job: create, upload both files and then its
// tables, wait, fetch results.
// Once the job exists at the gateway it returns a Summary also with an
// error: what is known of the job (its id, its last state, the time
// spent). A job that failed gives an error marked cli.ErrJobFailed.
func Submit(ctx context.Context, o SubmitOptions) (sum *Summary, err error) {
	start := time.Now()
	defer func() {
		if sum != nil {
			sum.Total = time.Since(start)
		}
	}()
	if o.JobID == "" {
		// Named here, so that a CreateJob retried after the gateway
		// restarted finds the same job instead of making a second one.
		o.JobID = jobid.New()
	}
	if o.Standing {
		o.epoch, o.Keep = 1, true // the job stays open for its appends
	}
	src, err := openSources(o)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	req, err := request(o, src)
	if err != nil {
		return nil, err
	}
	gw, err := openOut(o)
	if err != nil {
		return nil, err
	}
	defer gw.Close()
	created, err := create(ctx, gw, req)
	if err != nil {
		return nil, explain(o.Server, err)
	}
	sum = &Summary{JobID: created.JobId, Files: map[string]string{}, Explain: created.Explain}
	o.created(sum.JobID)
	if o.Explain != nil && created.Explain != "" {
		if _, err := io.WriteString(o.Explain, created.Explain); err != nil {
			return sum, fmt.Errorf("print the plans: %w", err)
		}
	}
	// From here until the job ends, it must make progress.
	ctx, stalled := context.WithCancelCause(ctx)
	defer stalled(nil)
	stall := watchStall(o.StallTimeout, stalled)
	defer stall.stop()
	p := newProgress(o.Progress, o.Terminal)
	p.moved = stall.touch
	if created.Resumed {
		p.printf("job %s resumed on %s\n", sum.JobID, o.Server)
	} else {
		p.printf("job %s created on %s\n", sum.JobID, o.Server)
	}
	// From here on the job exists at the gateway: every way out says how
	// to pick it up again, unless the job failed (it cannot be resumed).
	leftBehind := func(err error) error {
		if errors.Is(context.Cause(ctx), errStalled) {
			return cli.WithHint(stalledError(sum.JobID, o.StallTimeout, lastState(gw, sum.JobID, stall.lastJob())), resumeHint(o, sum.JobID))
		}
		if status.Code(err) != codes.FailedPrecondition {
			return cli.WithHint(explain(o.Server, err), resumeHint(o, sum.JobID))
		}
		if job, gerr := gw.Get(ctx, sum.JobID); gerr == nil && job.State == wololov1.JobState_JOB_STATE_FAILED {
			sum.Job = job
			return failed(sum, o.Out)
		}
		return cli.WithHint(explain(o.Server, err), resumeHint(o, sum.JobID))
	}

	inputs := jobInputs(o, src, req.Matches, req.Players, req.Tables)
	for _, in := range inputs {
		p.total += in.size
	}
	// A rebuild by the gateway (Job.rebuilds) is said when it is seen:
	// the job takes longer, and nothing is asked of the client.
	rebuildsSeen := 0
	saw := func(j *wololov1.Job) {
		stall.saw(j)
		for ; rebuildsSeen < len(j.GetRebuilds()); rebuildsSeen++ {
			o.notice("job %s: %s (the gateway rebuilds what was lost from what it kept; nothing to do here)\n", sum.JobID, j.GetRebuilds()[rebuildsSeen])
		}
	}
	var job *wololov1.Job
	for {
		rebuildsSeen = 0 // a job submitted again is a new job
		job, err = run(ctx, gw, sum, inputs, o, p, saw)
		if err == nil && awaited(o, job) {
			stall.stop()
			// A gateway that loses its store now loses the answers too:
			// NOT_FOUND here is a lost job like any other.
			if err = fetchAnswers(ctx, gw, sum, job, o); err != nil && status.Code(err) != codes.NotFound {
				return sum, cli.WithHint(explain(o.Server, err), fmt.Sprintf("the job is done and kept at the gateway: fetch its answers with `%s`", o.Again.command("results", "--job", sum.JobID, "--out", o.Out)))
			}
		}
		if gone := deletion(ctx, gw, sum.JobID, err); gone != nil {
			// Cancelled (`client cancel`) or deleted by the operator:
			// not lost, so not submitted again.
			sum.Job = job
			return sum, cancelled(gone)
		}
		why, lost := lostJob(ctx, gw, sum.JobID, job, err)
		if !lost {
			break
		}
		sum.Job = job
		if len(sum.Rebuilds) >= o.Rebuilds {
			return sum, lostError(o, sum, why)
		}
		sum.Rebuilds = append(sum.Rebuilds, why)
		o.notice("job %s was lost: %s; submitting it again from your files (%d of at most %d)\n", sum.JobID, why, len(sum.Rebuilds), o.Rebuilds)
		if err := recreate(ctx, gw, req); err != nil {
			return sum, leftBehind(err)
		}
		o.created(sum.JobID)
		p.restart()
		stall.restart()
	}
	if err != nil {
		return sum, leftBehind(err)
	}
	stall.stop()
	sum.Job = job
	if !awaited(o, job) {
		return sum, failed(sum, o.Out)
	}
	if sum.Rejects, _, err = WriteRejects(o.Out, job); err != nil {
		return sum, err
	}
	if !o.Keep {
		if err := gw.Delete(ctx, sum.JobID); err != nil {
			p.printf("warning: could not release job %s at the gateway (%v); it is dropped after the gateway's retention, or release it with `%s`\n", sum.JobID, err, o.Again.command("results", "--job", sum.JobID, "--out", o.Out))
		}
	}
	return sum, nil
}

// run uploads every input of the job sum.JobID (each from where the
// gateway stands) and follows it until it is done or failed.
func run(ctx context.Context, gw *Session, sum *Summary, inputs []input, o SubmitOptions, p *progress, saw func(*wololov1.Job)) (*wololov1.Job, error) {
	start := time.Now()
	sum.Uploaded = 0
	for _, in := range inputs {
		if err := uploadWithRetry(ctx, gw, sum.JobID, in, o.UploadAttempts, p); err != nil {
			return nil, err
		}
		sum.Uploaded += in.size
	}
	p.finishBar()
	sum.Upload = time.Since(start)
	if o.epoch > 0 {
		p.printf("upload done in %s; waiting for the version of its last epoch\n", sum.Upload.Round(time.Millisecond))
		return gw.WatchUntil(ctx, sum.JobID, saw, func(j *wololov1.Job) bool { return awaited(o, j) })
	}
	p.printf("upload done in %s; waiting for results\n", sum.Upload.Round(time.Millisecond))
	return gw.Watch(ctx, sum.JobID, saw)
}

// create creates the job req describes (or finds it, when a retry
// follows a CreateJob whose answer was lost: it is named).
func create(ctx context.Context, gw *Session, req *wololov1.CreateJobRequest) (created *wololov1.CreateJobResponse, err error) {
	err = gw.retry(ctx, 5, func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		var err error
		created, err = gw.Jobs.CreateJob(cctx, req, grpc.WaitForReady(true))
		return err
	})
	return created, err
}

// recreate submits a lost job again under its name: what is left of it
// at the gateway (a failed job) is dropped first, then it is created
// anew, a new job with the same files and queries.
func recreate(ctx context.Context, gw *Session, req *wololov1.CreateJobRequest) error {
	if err := gw.Delete(ctx, req.JobId); err != nil && status.Code(err) != codes.NotFound {
		return err
	}
	_, err := create(ctx, gw, req)
	return err
}

// deletion is the gateway's error saying that job id was deleted on
// purpose (rpc.IsJobDeleted: by its client, by the operator, by the
// retention) if following it ended so (err), directly or as an upload
// refused because the job failed meanwhile (FAILED_PRECONDITION, then
// asked); nil otherwise.
func deletion(ctx context.Context, gw *Session, id string, err error) error {
	if rpc.IsJobDeleted(err) {
		return err
	}
	if status.Code(err) == codes.FailedPrecondition && ctx.Err() == nil {
		if _, gerr := gw.Get(ctx, id); rpc.IsJobDeleted(gerr) {
			return gerr
		}
	}
	return nil
}

// cancelled is the error of a command that followed a job the gateway
// says was deleted on purpose (deleted, an rpc.IsJobDeleted error): the
// gateway's message, which says by whom, marked cli.ErrCancelled.
func cancelled(deleted error) error {
	return cli.Mark(errors.New(status.Convert(deleted).Message()), cli.ErrCancelled)
}

// lostJob says whether a job ended lost, and why: failed because a
// process lost its state under it (Job.state_lost), or gone from the
// gateway while this client followed it (NOT_FOUND: the gateway lost
// its store; a job deleted on purpose says so instead, see deletion).
// Neither is a fault of the job: submitting it again from its files
// gives its answers. job and err are how following it ended.
func lostJob(ctx context.Context, gw *Session, id string, job *wololov1.Job, err error) (string, bool) {
	if ctx.Err() != nil || rpc.IsJobDeleted(err) {
		return "", false
	}
	switch status.Code(err) {
	case codes.OK:
		if job != nil && job.State == wololov1.JobState_JOB_STATE_FAILED && job.StateLost {
			return job.Message, true
		}
		return "", false
	case codes.NotFound:
		return goneFromGateway, true
	case codes.FailedPrecondition: // an upload to a job that failed meanwhile
		j, gerr := gw.Get(ctx, id)
		if status.Code(gerr) == codes.NotFound && !rpc.IsJobDeleted(gerr) {
			return goneFromGateway, true
		}
		if gerr == nil && j.State == wololov1.JobState_JOB_STATE_FAILED && j.StateLost {
			return j.Message, true
		}
	}
	return "", false
}

// goneFromGateway is why a job that the gateway stopped knowing while
// this client followed it was lost.
const goneFromGateway = "the gateway no longer has it (its store lost or replaced?)"

// lostError is the error of a job that was lost more times than
// o.Rebuilds allows: why, and the command that submits it again.
func lostError(o SubmitOptions, sum *Summary, why string) error {
	err := fmt.Errorf("job %s failed, lost: %s", sum.JobID, why)
	if n := len(sum.Rebuilds); n > 0 {
		err = fmt.Errorf("%w (it was submitted again %d times, and lost each time)", err, n)
	}
	err = cli.Mark(err, cli.ErrJobFailed)
	return cli.WithHint(err, "nothing is wrong with the job or its files: run it again with `"+o.Again.command("submit", submitArgs(o, sum.JobID)...)+"`")
}

// failed is the error of a job that failed (sum.Job): its message, and
// where its malformed records are listed if it listed any.
func failed(sum *Summary, out string) error {
	job := sum.Job
	err := fmt.Errorf("job %s %s: %s", sum.JobID, StateWord(job.State), job.Message)
	path, n, werr := WriteRejects(out, job)
	switch {
	case werr != nil:
		err = fmt.Errorf("%w (and its malformed records could not be listed: %v)", err, werr)
	case n > 0:
		sum.Rejects = path
		err = fmt.Errorf("%w; the first %d malformed records are listed in %s", err, n, path)
	}
	return cli.Mark(err, cli.ErrJobFailed)
}

// lastState is the job as the gateway reports it now, for a stalled
// job's error (asked briefly: the submit's own context is over), else
// last, as last watched.
func lastState(gw *Session, id string, last *wololov1.Job) *wololov1.Job {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if r, err := gw.Jobs.GetJob(ctx, &wololov1.GetJobRequest{JobId: id}); err == nil {
		return r.Job
	}
	return last
}

// resumeHint says how to pick a job left at the gateway up again: the
// same files, queries and tables (a resume with others is refused).
func resumeHint(o SubmitOptions, id string) string {
	return fmt.Sprintf("job %s stays at the gateway: resume it with `%s`, follow it with `%s`", id,
		o.Again.command("submit", submitArgs(o, id)...),
		o.Again.command("watch", "--job", id))
}

// submitArgs are the arguments of a submit of job id with o's files,
// queries, tables and output directory.
func submitArgs(o SubmitOptions, id string) []string {
	args := []string{"--job", id}
	if o.Matches != "" {
		args = append(args, "--matches", o.Matches, "--players", o.Players)
	}
	for _, q := range o.Queries {
		if q.From != "" {
			args = append(args, "--query", q.Name+"="+q.From)
		}
	}
	for _, t := range o.Tables {
		args = append(args, "--table", t.Name+"="+t.Path)
	}
	return append(args, "--out", o.Out)
}

// CheckWritable makes dir if needed and checks a file can be written there,
// so that a job's answers are not computed only to find they cannot be
// saved.
func CheckWritable(dir string) error {
	if dir == "" {
		return errors.New("an output directory is required (--out)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	f, err := os.CreateTemp(dir, ".wololo-write-check-*")
	if err != nil {
		return fmt.Errorf("output directory %s is not writable: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// StateWord is a job state as a word: uploading, running, done, failed.
func StateWord(st wololov1.JobState) string {
	return strings.ToLower(strings.TrimPrefix(st.String(), "JOB_STATE_"))
}

// retryable says whether an error is worth retrying after: the gateway
// went away or broke the call, and a restarted one resumes the job.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Aborted, codes.Internal, codes.Unknown, codes.ResourceExhausted:
		return true
	}
	return false
}

// uploadWithRetry uploads a file or table, resuming after every break.
// attempts bounds the breaks in a row without progress; one that moved
// the committed offset resets the count.
func uploadWithRetry(ctx context.Context, gw *Session, id string, in input, attempts int, p *progress) error {
	if attempts <= 0 {
		attempts = 10
	}
	r := backoff.Retry{Attempts: attempts, First: 200 * time.Millisecond, Max: 5 * time.Second}
	r.OnRetry = func(err error, next int, wait time.Duration) {
		p.printf("upload of %s interrupted (%v); resuming in %s (attempt %d of %d)\n", filepath.Base(in.path), status.Convert(err).Message(), wait, next, attempts)
	}
	return r.Do(ctx, gw.retryable, func(ctx context.Context) error {
		var progressed bool
		err := gw.call(ctx, func(ctx context.Context) (err error) {
			progressed, err = upload(ctx, gw.Jobs, id, in, p)
			return err
		})
		if progressed {
			return backoff.Progressed(err)
		}
		return err
	})
}

// upload sends one file or table from the gateway's committed offset to
// the end.
func upload(ctx context.Context, jobs wololov1.JobServiceClient, id string, in input, p *progress) (progressed bool, err error) {
	path, file := in.path, in.key()
	var acked atomic.Bool
	defer func() { progressed = acked.Load() }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := jobs.Upload(ctx, grpc.WaitForReady(true), grpc.ForceCodecV2(newUploadCodec()))
	if err != nil {
		return false, err
	}
	if err := stream.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Start{Start: in.start(id)}}); err != nil {
		return false, recvErr(stream, err)
	}
	first, err := stream.Recv()
	if err != nil {
		return false, err
	}
	name := filepath.Base(path)
	p.setFile(name, file, first.Offset, first.Rows)
	if first.Done {
		return false, nil
	}
	f, err := in.src.Reader(first.Offset)
	if err != nil {
		return false, err
	}
	defer f.Close()
	acks := make(chan error, 1)
	var bufs chunkBuffers
	go func() {
		for {
			r, err := stream.Recv()
			if err != nil {
				acks <- err
				return
			}
			p.ack(file, r.Offset, r.Rows)
			bufs.acked(r.Offset)
			if r.Offset > first.Offset {
				acked.Store(true)
			}
			if r.Done {
				acks <- nil
				return
			}
		}
	}()
	for offset := first.Offset; ; {
		buf := bufs.get()
		n, rerr := io.ReadFull(f, buf)
		if n > 0 {
			if err := stream.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: buf[:n]}}); err != nil {
				return false, waitAck(acks, err)
			}
			offset += int64(n)
			bufs.sent(offset, buf)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return false, fmt.Errorf("read %s: %w", in.src.Name(), rerr)
		}
	}
	if err := stream.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: in.src.Size()}}}); err != nil {
		return false, waitAck(acks, err)
	}
	if err := <-acks; err != nil {
		return false, err
	}
	return false, stream.CloseSend()
}

// chunkBuffers recycles an upload's read buffers. A sent chunk's buffer
// may still be held below Send (gRPC may encode or trace a message
// lazily), but once the gateway acknowledges an offset at or past the
// chunk's end it has committed those bytes, and nothing holds the message:
// the buffer is read into again, instead of a new one per chunk (a
// gigabyte of allocation for a gigabyte uploaded).
type chunkBuffers struct {
	mu      sync.Mutex
	pending []sentChunk // sent, not yet acknowledged, in offset order
	free    [][]byte
}

type sentChunk struct {
	end int64 // the file offset just past the chunk
	buf []byte
}

// maxFreeChunks bounds the buffers kept for reuse.
const maxFreeChunks = 8

// get returns a buffer of ChunkSize bytes to read into.
func (c *chunkBuffers) get() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.free); n > 0 {
		buf := c.free[n-1]
		c.free = c.free[:n-1]
		return buf
	}
	return make([]byte, ChunkSize)
}

// sent records that buf was sent, ending at file offset end.
func (c *chunkBuffers) sent(end int64, buf []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, sentChunk{end, buf})
}

// acked frees the buffers of every chunk that ends at or before offset.
func (c *chunkBuffers) acked(offset int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := 0
	for ; i < len(c.pending) && c.pending[i].end <= offset; i++ {
		if len(c.free) < maxFreeChunks {
			c.free = append(c.free, c.pending[i].buf)
		}
	}
	c.pending = append(c.pending[:0], c.pending[i:]...)
}

// waitAck returns the stream's real error after a failed Send.
func waitAck(acks chan error, sendErr error) error {
	select {
	case err := <-acks:
		if err != nil {
			return err
		}
	case <-time.After(5 * time.Second):
	}
	return sendErr
}

func recvErr(stream wololov1.JobService_UploadClient, sendErr error) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	return sendErr
}

// FetchResults writes a finished job's result files into dir: every file
// the gateway sends (q1.csv..q4.csv for the built-in job, NAME.csv of each
// query of a job of queries), each name checked (ResultName) before
// anything is written.
//
// For a standing job, epoch names the version (0: the latest); the
// epoch returned is the one the gateway sent (0 for a batch job).
func FetchResults(ctx context.Context, jobs wololov1.JobServiceClient, id string, epoch int64, dir string) (map[string]string, int64, error) {
	v, err := fetchResults(ctx, jobs, id, epoch, dir)
	return v.paths, v.epoch, err
}

// fetched is what fetchResults wrote: the files' paths, the version's
// epoch and the rows of each table it is over (GetResultsResponse.rows,
// none for a batch job's results).
type fetched struct {
	paths map[string]string
	epoch int64
	rows  map[string]int64
}

func fetchResults(ctx context.Context, jobs wololov1.JobServiceClient, id string, epoch int64, dir string) (fetched, error) {
	stream, err := jobs.GetResults(ctx, &wololov1.GetResultsRequest{JobId: id, Epoch: epoch}, grpc.WaitForReady(true))
	if err != nil {
		return fetched{}, err
	}
	data := map[string][]byte{}
	var v fetched
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fetched{}, err
		}
		data[r.Name] = append(data[r.Name], r.Data...)
		v.epoch, v.rows = r.Epoch, r.Rows
	}
	if len(data) == 0 {
		return fetched{}, errors.New("the gateway sent no result file")
	}
	v.paths, err = WriteResults(dir, data)
	return v, err
}

// ResultName refuses a result file name that is not NAME.csv of a query
// name (sqljob.CheckName): what the gateway sends is written into the
// output directory under that name, so it must stay a plain file there.
func ResultName(file string) error {
	name, ok := strings.CutSuffix(file, ".csv")
	if !ok {
		return fmt.Errorf("a result file named %q: not NAME.csv", file)
	}
	if err := sqljob.CheckName(name); err != nil {
		return fmt.Errorf("a result file named %q: %w", file, err)
	}
	return nil
}

// ResultFiles are a job's result files, in its queries' order: NAME.csv
// of each (Job.queries), else (a gateway that does not say) those of the
// default queries (queries.Names).
func ResultFiles(job *wololov1.Job) []string {
	if len(job.GetQueries()) == 0 {
		return schema.ResultFiles(queries.Names)
	}
	return schema.ResultFiles(job.GetQueries())
}

// WriteResults writes every result file of data into dir (created if
// needed), each atomically, and returns their paths by name. Each name is
// checked (ResultName) before anything is written.
func WriteResults(dir string, data map[string][]byte) (map[string]string, error) {
	names := slices.Sorted(maps.Keys(data))
	for _, name := range names {
		if err := ResultName(name); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	paths := map[string]string{}
	for _, name := range names {
		path := filepath.Join(dir, name)
		if err := atomicfile.Write(path, data[name], 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		paths[name] = path
	}
	return paths, nil
}
