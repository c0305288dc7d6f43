package client

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/certs"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
	"github.com/wololo/wololo/services/wire/rpc"
)

// JobListing is one of a client's jobs as `wololo client list --json`
// prints it: one JSON object per job and line.
type JobListing struct {
	JobID          string    `json:"job_id"` // the client's name for it: what --job takes
	ID             string    `json:"id"`     // the gateway's internal id, as `wololo top` and the logs name it
	State          string    `json:"state"`  // uploading, running, done, failed
	Message        string    `json:"message,omitempty"`
	Progress       float64   `json:"progress"`       // 0..1: the share of its files and tables committed; 1 once done
	UploadedBytes  int64     `json:"uploaded_bytes"` // its files and tables, committed by the gateway
	SizeBytes      int64     `json:"size_bytes"`     // its files and tables, declared
	Created        time.Time `json:"created"`        // RFC 3339
	ElapsedSeconds float64   `json:"elapsed_seconds"`
	// A standing job's (docs/standing.md): whether it takes appends
	// still, and its epochs whose version is out.
	Standing        bool  `json:"standing,omitempty"`
	Open            bool  `json:"open,omitempty"`
	EpochsPublished int64 `json:"epochs_published,omitempty"`
}

// NewJobListing describes a job as ListJobs returned it.
func NewJobListing(s *wololov1.JobSummary) JobListing {
	l := JobListing{JobID: s.GetName(), ID: s.GetId(), State: StateWord(s.GetState()), Message: s.GetMessage(),
		UploadedBytes: s.GetBytesUploaded(), SizeBytes: s.GetBytesTotal(), ElapsedSeconds: s.GetElapsedSeconds(),
		Standing: s.GetStanding(), Open: s.GetOpen(), EpochsPublished: s.GetEpochsPublished()}
	if s.GetCreated() != nil {
		l.Created = s.GetCreated().AsTime()
	}
	switch {
	case s.GetState() == wololov1.JobState_JOB_STATE_DONE:
		l.Progress = 1
	case l.SizeBytes > 0:
		l.Progress = min(1, max(0, float64(l.UploadedBytes)/float64(l.SizeBytes)))
	}
	return l
}

// PrintJobs writes jobs as a table, their creation times in loc; "no jobs"
// when there are none.
func PrintJobs(w io.Writer, jobs []JobListing, loc *time.Location) {
	if len(jobs) == 0 {
		fmt.Fprintln(w, "no jobs")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tSTATE\tPROGRESS\tCREATED\tELAPSED\tMESSAGE")
	for _, j := range jobs {
		elapsed := (time.Duration(j.ElapsedSeconds*10) * time.Second / 10).String()
		state := j.State
		if j.Open {
			state += fmt.Sprintf(" (standing, %d published)", j.EpochsPublished)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%5.1f%%\t%s\t%s\t%s\n", j.JobID, j.ID, state, 100*j.Progress,
			j.Created.In(loc).Format("2006-01-02 15:04:05"), elapsed, oneLine(j.Message))
	}
	tw.Flush()
}

// oneLine keeps a table row on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// List returns this client's jobs at the gateway, oldest first.
func (s *Session) List(ctx context.Context) ([]*wololov1.JobSummary, error) {
	var jobs []*wololov1.JobSummary
	err := s.retry(ctx, 3, func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		r, err := s.Jobs.ListJobs(cctx, &wololov1.ListJobsRequest{}, grpc.WaitForReady(true))
		if err == nil {
			jobs = r.Jobs
		}
		return err
	})
	return jobs, err
}

// open reaches the gateway the flags name, as their credential.
func (g *gatewayFlags) open() (*Session, error) {
	tlsConfig, err := g.creds.GatewayTLS(g.server)
	if err != nil {
		return nil, err
	}
	return Open(g.server, tlsConfig, g.reach)
}

func runList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo client list", "usage: wololo client list [--json] [flags]\n\n"+
		"Lists this client's jobs at the gateway (those of its credential, --name), oldest\n"+
		"first: NAME (what --job takes), ID (the gateway's, as `wololo top` and the logs\n"+
		"name it), STATE, PROGRESS (the share of both files uploaded; 100% once done),\n"+
		"CREATED, ELAPSED and, for a failed job, why. Other clients' jobs are never listed.\n"+
		"With --json, one JSON object per job and line: job_id, id, state, message,\n"+
		"progress (0..1), uploaded_bytes, size_bytes, created (RFC 3339), elapsed_seconds;\n"+
		"nothing when there are no jobs.\n"+environment, stderr)
	gf := registerGateway(fs)
	asJSON := fs.Bool("json", false, "one JSON object per job and line")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	gw, err := gf.open()
	if err != nil {
		return err
	}
	defer gw.Close()
	summaries, err := gw.List(ctx)
	if status.Code(err) == codes.Unimplemented {
		return fmt.Errorf("the gateway at %s is older than this client and cannot list jobs (JobService/ListJobs): %s", gf.server, status.Convert(err).Message())
	}
	if err != nil {
		return explain(gf.server, err)
	}
	jobs := make([]JobListing, len(summaries))
	for i, s := range summaries {
		jobs[i] = NewJobListing(s)
	}
	if !*asJSON {
		PrintJobs(stdout, jobs, time.Local)
		return nil
	}
	for _, j := range jobs {
		if err := WriteJSON(stdout, j); err != nil {
			return err
		}
	}
	return nil
}

// CancelReport is what `wololo client cancel --json` prints.
type CancelReport struct {
	JobID     string `json:"job_id"`
	State     string `json:"state"` // the job's state when it was dropped
	Cancelled bool   `json:"cancelled"`
}

const cancelUsage = `usage: wololo client cancel --job NAME [flags]
       wololo client cancel NAME [flags]
       wololo client cancel --operator --job ID [flags]

Drops one of this client's jobs at the gateway, whatever its state: a job
left uploading after Ctrl-C (which the gateway would otherwise keep for its
retention, --retention), one running, one whose results are not wanted.
The gateway forgets it at once and has every process drop it;
its name may be used again, for a new job. 'wololo client list' shows the
jobs. With --json, one JSON object on stdout: job_id, state (when it was
dropped), cancelled.

With --operator, --job (or the first argument) is any client's job by its id, as 'wololo top' shows
it, and the credential presented is the operator's (--name operator unless
--name is given): the operator's way to stop a job that costs the
deployment too much. Its client's watch and submit end, saying that the
operator deleted it.
`

func runCancel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo client cancel", cancelUsage+environment, stderr)
	gf := registerGateway(fs)
	id := fs.String("job", "", "the job's name, as 'wololo client list' shows it (or the first argument)")
	asJSON := fs.Bool("json", false, "print the outcome as one JSON object")
	operator := fs.Bool("operator", false, "drop any client's job by its id (as wololo top shows it), as the operator credential")
	// The name may come first, before the flags: `cancel NAME`.
	var named string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		named, args = args[0], args[1:]
	}
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	switch {
	case named != "" && *id != "" && named != *id:
		return cli.Usagef(fs, "two jobs named: %q and --job %q", named, *id)
	case named != "":
		*id = named
	case *id == "":
		return cli.Usagef(fs, "the job to cancel is required: --job NAME")
	}
	if *operator {
		return cancelAsOperator(ctx, fs, gf, *id, *asJSON, stdout)
	}
	gw, err := gf.open()
	if err != nil {
		return err
	}
	defer gw.Close()
	job, err := gw.Get(ctx, *id)
	if err != nil {
		return explain(gf.server, err)
	}
	if err := gw.Delete(ctx, *id); err != nil {
		return explain(gf.server, err)
	}
	if *asJSON {
		return WriteJSON(stdout, CancelReport{JobID: *id, State: StateWord(job.State), Cancelled: true})
	}
	fmt.Fprintf(stdout, "cancelled job %s (it was %s); the gateway dropped it\n", *id, describeState(job))
	return nil
}

// cancelAsOperator drops any client's job by its internal id, presenting
// the operator credential (--name operator unless --name was given).
func cancelAsOperator(ctx context.Context, fs *flag.FlagSet, gf *gatewayFlags, id string, asJSON bool, stdout io.Writer) error {
	named := false
	fs.Visit(func(f *flag.Flag) { named = named || f.Name == "name" })
	if !named && os.Getenv(tlsflags.EnvClient) == "" {
		gf.creds.Name = certs.OperatorName
	}
	gw, err := gf.open()
	if err != nil {
		return err
	}
	defer gw.Close()
	if err := gw.DeleteAny(ctx, id); err != nil {
		if status.Code(err) == codes.PermissionDenied {
			return fmt.Errorf("the gateway refused %s: --operator needs the operator credential (--name %s of --tls-dir): %s", gf.creds.Name, certs.OperatorName, status.Convert(err).Message())
		}
		return explain(gf.server, err)
	}
	if asJSON {
		return WriteJSON(stdout, CancelReport{JobID: id, State: "deleted", Cancelled: true})
	}
	fmt.Fprintf(stdout, "cancelled job %s as the operator; the gateway dropped it\n", id)
	return nil
}

// describeState is a job's state in a few words: "uploading, 37% in".
func describeState(j *wololov1.Job) string {
	word := StateWord(j.State)
	if j.State != wololov1.JobState_JOB_STATE_UPLOADING {
		return word
	}
	var done, total int64
	for _, f := range []*wololov1.FileReport{j.Matches, j.Players} {
		done, total = done+f.GetOffset(), total+f.GetSize()
	}
	if total == 0 {
		return word
	}
	return fmt.Sprintf("%s, %.0f%% in", word, 100*float64(done)/float64(total))
}

const watchUsage = `usage: wololo client watch --job ID [--json] [--answers [--from N]] [flags]

Follows a job until it ends: one line per change (at most every 200 ms, at
least every 2 s), and the job's report once it is done or failed. With
--json each line is one JSON object, as 'wololo client status --json'
prints it. A job that failed exits 3.

With --answers, a standing job's versions instead, from epoch 1 (or --from
N) as each is published, until the job is closed and its last version
printed (or the command is interrupted): each version as its change from
the one before, one line per changed row, "EPOCH QUERY DIFF ROW" (DIFF +n:
n more copies of the row in the answer, -n: n fewer; ROW as CSV), after a
header line; with --json one object per row (epoch, query, diff, columns,
row).
`

func runWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo client watch", watchUsage+environment, stderr)
	gf := registerGateway(fs)
	id := fs.String("job", "", "job id (required)")
	asJSON := fs.Bool("json", false, "one JSON object per state and line (with --answers: per changed row)")
	answers := fs.Bool("answers", false, "a standing job's versions as they are published, as changed rows")
	from := fs.Int64("from", 0, "with --answers: the first epoch whose change is printed (default 1)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := cli.Required(fs, "job"); err != nil {
		return err
	}
	if *from < 0 {
		return cli.Usagef(fs, "--from %d: %v", *from, errNoEpoch)
	}
	if *from != 0 && !*answers {
		return cli.Usagef(fs, "--from is for --answers")
	}
	gw, err := gf.open()
	if err != nil {
		return err
	}
	defer gw.Close()
	if *answers {
		if err := gw.WatchAnswers(ctx, *id, *from, printAnswers(stdout, *asJSON)); err != nil {
			if rpc.IsJobDeleted(err) {
				return cancelled(err)
			}
			if job := failedJob(ctx, gw, *id, err); job != nil {
				return cli.Mark(fmt.Errorf("job %s failed: %s", *id, job.Message), cli.ErrJobFailed)
			}
			return explain(gf.server, err)
		}
		return nil
	}
	var werr error
	show := func(j *wololov1.Job) { printJob(stdout, j) }
	if *asJSON {
		show = func(j *wololov1.Job) {
			if err := WriteJSON(stdout, NewJobReport(*id, j)); err != nil && werr == nil {
				werr = err
			}
		}
	}
	job, err := gw.Watch(ctx, *id, show)
	if rpc.IsJobDeleted(err) {
		return cancelled(err)
	}
	if err != nil {
		return withLostHint(explain(gf.server, err), err, gf.again(), *id, nil)
	}
	if werr != nil {
		return werr
	}
	if job.State == wololov1.JobState_JOB_STATE_FAILED {
		return withLostHint(cli.Mark(fmt.Errorf("job %s failed: %s", job.JobId, job.Message), cli.ErrJobFailed), nil, gf.again(), *id, job)
	}
	return nil
}
