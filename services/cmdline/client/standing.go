package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
	sqlflags "github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/dataflow/schema"
)

// Standing jobs at the client (docs/standing.md): `submit --standing`
// creates one and returns with the version of its epoch 1; `append` opens
// the next epoch, uploads its files as a submit does (same resume after
// a break) and returns with that epoch's version; `close` ends the job;
// `results --epoch N` fetches a version, `watch --answers` prints each
// version's change as it is published (answers.go).

// awaited reports whether what o waits for is out: a batch job's
// results (done), or the version of the last epoch of o's append of a
// standing job (appendVersion).
func awaited(o SubmitOptions, job *wololov1.Job) bool {
	if o.epoch > 0 {
		v := appendVersion(o, job)
		return v > 0 && job.GetEpochsPublished() >= v
	}
	return job.GetState() == wololov1.JobState_JOB_STATE_DONE
}

// appendVersion is the epoch that ends o's append (the submit's files
// are append 1), whose version the submit or append waits for: with
// --epoch-every the gateway may have cut others before it
// (Job.append_epochs); 0 while the append's input is not whole.
func appendVersion(o SubmitOptions, job *wololov1.Job) int64 {
	ends := job.GetAppendEpochs()
	if int64(len(ends)) < o.epoch {
		return 0
	}
	return ends[o.epoch-1]
}

// fetchAnswers writes what o waited for into o.Out: the results, or o's
// epoch's version, whose rows (counted here: the job is not done, and
// the gateway counts only a done job's) go into job.ResultRows.
func fetchAnswers(ctx context.Context, gw *Session, sum *Summary, job *wololov1.Job, o SubmitOptions) error {
	var err error
	var version int64
	if o.epoch > 0 {
		version = appendVersion(o, job)
	}
	if sum.Files, sum.Epoch, err = gw.FetchVersion(ctx, sum.JobID, version, o.Out); err != nil || o.epoch == 0 {
		return err
	}
	job.ResultRows = map[string]int64{}
	for name, path := range sum.Files {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		job.ResultRows[name] = int64(schema.ResultRows(data))
	}
	return nil
}

// jobInputs are the inputs to upload of o's job (or o's append), read
// from src, with the sizes their headers declared: the two files (none
// for a job of tables only) then o's tables.
func jobInputs(o SubmitOptions, src sources, matches, players *wololov1.FileHeader, tables []*wololov1.Table) []input {
	var inputs []input
	if matches != nil {
		inputs = append(inputs, input{path: o.Matches, src: src[o.Matches], file: wololov1.InputFile_INPUT_FILE_MATCHES, size: matches.Size, epoch: o.epoch},
			input{path: o.Players, src: src[o.Players], file: wololov1.InputFile_INPUT_FILE_PLAYERS, size: players.Size, epoch: o.epoch})
	}
	for i, t := range o.Tables {
		inputs = append(inputs, input{path: t.Path, src: src[t.Path], table: t.Name, size: tables[i].Header.Size, epoch: o.epoch})
	}
	return inputs
}

// AppendRequest is the AppendJob an append of o sends: its files' and
// tables' headers, read and fingerprinted as a submit's.
func AppendRequest(o SubmitOptions) (*wololov1.AppendJobRequest, error) {
	src, err := openSources(o)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return appendRequest(o, src)
}

// appendRequest is AppendRequest of o's inputs opened as src.
func appendRequest(o SubmitOptions, src sources) (*wololov1.AppendJobRequest, error) {
	mh, ph, tables, err := src.headers(o)
	if err != nil {
		return nil, err
	}
	return &wololov1.AppendJobRequest{JobId: o.JobID, Matches: mh, Players: ph, Tables: tables, EpochEveryMs: o.EpochEvery.Milliseconds()}, nil
}

// Append adds o's files as the next epoch of the standing job o.JobID,
// uploads them (resuming after each break, as a submit does), waits for
// the epoch's version and writes it into o.Out. Appended again with the
// same files while the epoch is open (after this command was stopped),
// it resumes that epoch. Once the job's epoch is known it returns a
// Summary also with an error.
func Append(ctx context.Context, o SubmitOptions) (sum *Summary, err error) {
	start := time.Now()
	defer func() {
		if sum != nil {
			sum.Total = time.Since(start)
		}
	}()
	src, err := openSources(o)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	req, err := appendRequest(o, src)
	if err != nil {
		return nil, err
	}
	gw, err := openOut(o)
	if err != nil {
		return nil, err
	}
	defer gw.Close()
	var opened *wololov1.AppendJobResponse
	err = gw.retry(ctx, 5, func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		var err error
		opened, err = gw.Jobs.AppendJob(cctx, req, grpc.WaitForReady(true))
		return err
	})
	if err != nil {
		return nil, explain(o.Server, err)
	}
	o.epoch = opened.Epoch
	sum = &Summary{JobID: o.JobID, Files: map[string]string{}, Epoch: o.epoch}
	p := newProgress(o.Progress, o.Terminal)
	verb := "opened"
	if opened.Resumed {
		verb = "resumed"
	}
	p.printf("job %s: epoch %d %s on %s\n", o.JobID, o.epoch, verb, o.Server)
	hint := fmt.Sprintf("epoch %d of job %s stays open: resume it with the same command, or follow the job with `%s`", o.epoch, o.JobID, o.Again.command("watch", "--job", o.JobID))
	inputs := jobInputs(o, src, req.Matches, req.Players, req.Tables)
	for _, in := range inputs {
		p.total += in.size
	}
	job, err := run(ctx, gw, sum, inputs, o, p, nil)
	if err != nil {
		if gone := deletion(ctx, gw, o.JobID, err); gone != nil {
			return sum, cancelled(gone)
		}
		if job := failedJob(ctx, gw, o.JobID, err); job != nil {
			sum.Job = job
			return sum, failed(sum, o.Out)
		}
		return sum, cli.WithHint(explain(o.Server, err), hint)
	}
	sum.Job = job
	if !awaited(o, job) {
		return sum, failed(sum, o.Out)
	}
	if err := fetchAnswers(ctx, gw, sum, job, o); err != nil {
		return sum, cli.WithHint(explain(o.Server, err), fmt.Sprintf("fetch the version with `%s`", o.Again.command("results", "--job", o.JobID, "--epoch", fmt.Sprint(appendVersion(o, job)), "--out", o.Out)))
	}
	return sum, nil
}

// openOut checks that o.Out can be written (before anything is sent)
// and opens the session to o's gateway, its waits said on o.Progress.
func openOut(o SubmitOptions) (*Session, error) {
	if err := CheckWritable(o.Out); err != nil {
		return nil, err
	}
	gw, err := Open(o.Server, o.TLS, o.Reach)
	if err != nil {
		return nil, err
	}
	gw.Notify = o.Progress
	return gw, nil
}

// CloseJob ends the standing job id's input: it finishes as a batch job
// does, its results its last version. It returns the job's epochs.
func (s *Session) CloseJob(ctx context.Context, id string) (int64, error) {
	var epochs int64
	err := s.retry(ctx, 10, func(ctx context.Context) error {
		r, err := s.Jobs.CloseJob(ctx, &wololov1.CloseJobRequest{JobId: id}, grpc.WaitForReady(true))
		if err == nil {
			epochs = r.Epochs
		}
		return err
	})
	return epochs, err
}

// standingLine says where a standing job stands: "standing, open, 3
// epochs, 2 published".
func standingLine(j *wololov1.Job) string {
	open := "closed"
	if j.GetOpen() {
		open = "open"
	}
	return fmt.Sprintf("standing, %s, %d epochs (%d committed), %d published", open, j.GetEpochs(), j.GetEpochsCommitted(), j.GetEpochsPublished())
}

func runAppend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo client append", "usage: wololo client append --job ID [--matches F --players F] [--table NAME=F ...] --out DIR [flags]\n\n"+
		"Appends the rows of F to the standing job ID (made by `client submit --standing`) as its\n"+
		"next epoch: committed whole or not at all, uploaded as a submit's files are (a break is\n"+
		"resumed; running the same command again resumes an epoch left open). Returns once the\n"+
		"epoch's version of every query is published, and writes it to --out as a job's results\n"+
		"are (NAME.csv of each query). The files need a header row with the columns the job's\n"+
		"queries read; --table NAME=F appends to the job's table NAME (a table left out gets no\n"+
		"rows in this epoch). One append at a time: another while an epoch is open is refused\n"+
		"(exit 4), as is an append to a batch job or to a closed one. A job of tables only (made\n"+
		"without --matches and --players) takes appends of its tables only. "+inputsHelp+environment, stderr)
	var o SubmitOptions
	gf := registerGateway(fs)
	fs.StringVar(&o.JobID, "job", "", "the standing job (required)")
	fs.StringVar(&o.Matches, "matches", "", "rows appended to matches, a CSV file with a header row (with --players; none: no rows of the two files in this epoch)")
	fs.StringVar(&o.Players, "players", "", "rows appended to match_players, a CSV file with a header row (with --matches)")
	fs.StringVar(&o.Out, "out", "", "directory for the epoch's version, NAME.csv of each query (required)")
	tableFlags := sqlflags.RegisterTableFlags(fs, "rows appended to the job's table NAME, NAME=F (repeatable)")
	fs.DurationVar(&o.EpochEvery, "epoch-every", 0, "while this append uploads, also end an epoch (a version) every DURATION of input (default: the job's --epoch-every)")
	quiet := fs.Bool("quiet", false, "no progress output")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := CheckPair(fs, o.Matches, o.Players); err != nil {
		return err
	}
	if err := cli.Required(fs, "job", "out"); err != nil {
		return err
	}
	if err := CheckEpochEvery(o.EpochEvery); err != nil {
		return cli.Usagef(fs, "%v", err)
	}
	for _, kv := range tableFlags.List() {
		o.Tables = append(o.Tables, Table{Name: kv[0], Path: kv[1]})
	}
	if o.Matches == "" && o.Players == "" && len(o.Tables) == 0 {
		return cli.Usagef(fs, "give --matches and --players, or --table files of the job's tables")
	}
	if err := CheckInputs(o); err != nil {
		return cli.Usagef(fs, "%v", err)
	}
	if err := statInputs(o); err != nil {
		return err
	}
	if !*quiet {
		o.Progress, o.Terminal = stderr, IsTerminal(stderr)
	}
	o.Notices = stderr
	o.Server, o.Reach, o.Again = gf.server, gf.reach, gf.again()
	if err := CheckServer(o.Server); err != nil {
		return err
	}
	var err error
	if o.TLS, err = gf.creds.GatewayTLS(o.Server); err != nil {
		return err
	}
	sum, err := Append(ctx, o)
	if err != nil {
		return err
	}
	PrintSummary(stdout, sum)
	return nil
}

func runClose(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo client close", "usage: wololo client close --job ID [flags]\n\n"+
		"Ends the standing job ID: it takes no more appends, finishes as a batch job does, and\n"+
		"its results (`client results --job ID --out DIR`) are its last version. Refused (exit 4)\n"+
		"for a batch job and while an epoch is open; closing a closed job is not an error.\n"+environment, stderr)
	gf := registerGateway(fs)
	id := fs.String("job", "", "the standing job (required)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := cli.Required(fs, "job"); err != nil {
		return err
	}
	gw, err := gf.open()
	if err != nil {
		return err
	}
	defer gw.Close()
	gw.Notify = stderr
	epochs, err := gw.CloseJob(ctx, *id)
	if err != nil {
		return explain(gf.server, err)
	}
	fmt.Fprintf(stdout, "closed job %s after %d epochs; its results are its last version: `%s`\n", *id, epochs, gf.again().command("results", "--job", *id, "--out", "DIR"))
	return nil
}

// failedJob is job id as the gateway has it if following it ended (err)
// because it failed (an upload or a watch refused: FAILED_PRECONDITION,
// then asked); nil otherwise.
func failedJob(ctx context.Context, gw *Session, id string, err error) *wololov1.Job {
	if status.Code(err) != codes.FailedPrecondition || ctx.Err() != nil {
		return nil
	}
	if j, gerr := gw.Get(ctx, id); gerr == nil && j.GetState() == wololov1.JobState_JOB_STATE_FAILED {
		return j
	}
	return nil
}

// openStanding reports whether job id is a standing job still open
// (which `client results` does not release); false when that cannot be
// told, as for any job.
func openStanding(ctx context.Context, gw *Session, id string) bool {
	j, err := gw.Get(ctx, id)
	return err == nil && j.GetStanding() && j.GetState() != wololov1.JobState_JOB_STATE_DONE && j.GetState() != wololov1.JobState_JOB_STATE_FAILED
}

// errNoEpoch is the usage error of a negative --epoch or --from.
var errNoEpoch = errors.New("epochs are numbered from 1")

// CheckEpochEvery refuses an --epoch-every the gateway would: a negative
// one, or one under a millisecond (its unit on the wire).
func CheckEpochEvery(d time.Duration) error {
	if d < 0 || (d > 0 && d < time.Millisecond) {
		return fmt.Errorf("--epoch-every %s: 1ms or more (0: only each upload's end ends an epoch)", d)
	}
	return nil
}

// overRows says the rows of each table a version is over, " (over
// matches 120 rows, match_players 300 rows)", tables by name; "" when
// the gateway did not say.
func overRows(rows map[string]int64) string {
	if len(rows) == 0 {
		return ""
	}
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(rows)) {
		parts = append(parts, fmt.Sprintf("%s %d rows", t, rows[t]))
	}
	return " (over " + strings.Join(parts, ", ") + ")"
}
