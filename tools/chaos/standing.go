package chaos

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/wire/rpc"
)

// A --standing run's job is a standing job (docs/standing.md) fed the
// input in epochs: both files cut into Epochs parts at record boundaries
// (splitInput, into the run's data directory), submitted --standing with
// the first parts, the others appended one epoch each, then closed, all
// through the client package as `wololo client submit --standing`,
// `append` and `close` do. The kills are scheduled over the whole run as
// for a batch job: "upload" lasts until the last epoch's input is whole,
// its kills spread over the epochs (killer.epochs), the burst after it
// while the last version is made, the job closed and finished and its
// versions fetched. Then
// every version K (client results --epoch K) must be byte-equal to the
// expected answers over the rows of epochs 1..K (a batch job's over the
// prefix files), as must the version each submit or append wrote when it
// returned, and the final results those over the whole input.
//
// A --standing run loses disks as a batch run does (--disk-losses): a
// worker's lost store makes the gateway run the job again from its copies
// of the epochs (gateway/rebuildstanding.go), with nothing asked of the
// client; a gateway's takes the copies with it, and the job with them,
// so the harness does what a user would (run): it submits the job again
// with --standing and appends every epoch again, at most once per disk
// lost, and notes each time (Report.Rebuilds). Every version is checked
// all the same: those the job run again published and fetched.

// DefaultEpochs is how many epochs a --standing run's job has.
const DefaultEpochs = 4

// standingJob is the job of a --standing run: its epochs' files, and what
// each version must hold.
type standingJob struct {
	parts []epochFiles
	want  []*answers // want[k-1]: version k's, over the rows of epochs 1..k
	dir   string     // the parts, the prefixes, the versions as published
}

// newStandingJob splits the input into n epochs in dir and works out
// every version's expected answers, the last one's being whole (those
// over the whole input, worked out already).
func newStandingJob(matches, players string, n int, qs []sqljob.Query, top deploy.Topology, whole *answers, dir string, out io.Writer) (*standingJob, error) {
	start := time.Now()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	parts, prefixes, err := splitInputs(matches, players, dir, n)
	if err != nil {
		return nil, err
	}
	s := &standingJob{parts: parts, dir: dir}
	for k, p := range prefixes {
		want := whole
		if k < n-1 {
			if want, err = expected(p.matches, p.players, qs, top); err != nil {
				return nil, fmt.Errorf("the expected answers of version %d: %w", k+1, err)
			}
		}
		s.want = append(s.want, want)
	}
	fmt.Fprintf(out, "chaos: standing job of %d epochs: the input cut into %d parts at record boundaries in %s; every version's expected answers in %s\n",
		n, n, dir, time.Since(start).Round(time.Millisecond))
	return s, nil
}

// epochs is how many epochs the job has.
func (s *standingJob) epochs() int64 { return int64(len(s.parts)) }

// published is where the submit (k = 1) or the append of epoch k writes
// its version.
func (s *standingJob) published(k int64) string {
	return filepath.Join(s.dir, "published", strconv.FormatInt(k, 10))
}

// fetched is where version k, fetched once the job is done, is written:
// beside the final results in out.
func fetched(out string, k int64) string {
	return filepath.Join(out, "versions", strconv.FormatInt(k, 10))
}

// runJob runs a harness's job through the client package: a batch job's
// client.Submit of o, or with st the standing job's steps (st.run).
func runJob(ctx context.Context, o client.SubmitOptions, st *standingJob, out io.Writer, start time.Time) (*client.Summary, error) {
	if st == nil {
		return client.Submit(ctx, o)
	}
	return st.run(ctx, o, out, start)
}

// run drives the standing job as a user would with the client: submit
// --standing with epoch 1's files (o's server, id, queries and upload
// attempts), append each other epoch's, close, follow the job until it is
// done, then fetch its results into o.Out, as a batch job's are, and
// every version into o.Out/versions/K; the job is then released. The
// Summary is the final fetch's, its Job the finished job.
//
// A job lost on the way (lost): the gateway no longer has it, or it
// failed as lost and the gateway could not run it again, is run from
// the start again, at most o.Rebuilds times (one per disk lost), each
// time's why in the Summary's Rebuilds.
func (s *standingJob) run(ctx context.Context, o client.SubmitOptions, out io.Writer, start time.Time) (*client.Summary, error) {
	final, most := o.Out, o.Rebuilds
	o.Standing, o.Rebuilds = true, 0 // client.Submit does not submit a standing job again: this does, every epoch
	var again []string
	for {
		sum, err := s.runOnce(ctx, o, final, out, start)
		if sum != nil {
			sum.Rebuilds = again
		}
		if err == nil || ctx.Err() != nil || len(again) >= most {
			return sum, err
		}
		why, lost := lost(ctx, o)
		if !lost {
			return sum, err
		}
		again = append(again, why)
		fmt.Fprintf(out, "chaos: +%s job %s was lost (%s): submitting it again with --standing and appending its epochs again (%d of at most %d)\n",
			fmtDur(time.Since(start)), o.JobID, why, len(again), most)
	}
}

// lost says whether standing job o.JobID, whose run failed, was lost as
// a client sees it (client.Submit's lostJob): the gateway no longer has
// it (it lost its store), or it failed lost and the gateway did not run
// it again; such a failed job is deleted, so that its name is free to
// submit again.
func lost(ctx context.Context, o client.SubmitOptions) (string, bool) {
	gw, err := client.Open(o.Server, o.TLS, o.Reach)
	if err != nil {
		return "", false
	}
	defer gw.Close()
	job, err := gw.Get(ctx, o.JobID)
	switch {
	case status.Code(err) == codes.NotFound && !rpc.IsJobDeleted(err):
		return "the gateway no longer has it (its store lost)", true
	case err != nil || job.GetState() != wololov1.JobState_JOB_STATE_FAILED || !job.GetStateLost():
		return "", false
	}
	if err := gw.Delete(ctx, o.JobID); err != nil {
		return "", false
	}
	return job.GetMessage(), true
}

// runOnce is run's one attempt: the job submitted, appended, closed,
// followed and fetched.
func (s *standingJob) runOnce(ctx context.Context, o client.SubmitOptions, final string, out io.Writer, start time.Time) (*client.Summary, error) {
	o.Matches, o.Players, o.Out = s.parts[0].matches, s.parts[0].players, s.published(1)
	sum, err := client.Submit(ctx, o)
	if err != nil {
		return sum, fmt.Errorf("submit --standing (epoch 1): %w", err)
	}
	fmt.Fprintf(out, "chaos: +%s version 1 of %d published\n", fmtDur(time.Since(start)), s.epochs())
	for k := int64(2); k <= s.epochs(); k++ {
		o.Matches, o.Players, o.Out = s.parts[k-1].matches, s.parts[k-1].players, s.published(k)
		a, err := client.Append(ctx, o)
		if err != nil {
			return sum, fmt.Errorf("append epoch %d: %w", k, err)
		}
		if a.Epoch != k {
			return sum, fmt.Errorf("append epoch %d: the gateway opened epoch %d", k, a.Epoch)
		}
		fmt.Fprintf(out, "chaos: +%s version %d of %d published\n", fmtDur(time.Since(start)), k, s.epochs())
	}
	gw, err := client.Open(o.Server, o.TLS, o.Reach)
	if err != nil {
		return sum, err
	}
	defer gw.Close()
	gw.Notify = o.Progress
	epochs, err := gw.CloseJob(ctx, sum.JobID)
	if err != nil {
		return sum, fmt.Errorf("close: %w", err)
	}
	if epochs != s.epochs() {
		return sum, fmt.Errorf("close: the job has %d epochs, not the %d appended", epochs, s.epochs())
	}
	fmt.Fprintf(out, "chaos: +%s job %s closed after %d epochs\n", fmtDur(time.Since(start)), sum.JobID, epochs)
	job, err := gw.Watch(ctx, sum.JobID, nil)
	if err != nil {
		return sum, fmt.Errorf("follow the closed job: %w", err)
	}
	sum.Job = job
	if job.GetState() != wololov1.JobState_JOB_STATE_DONE {
		return sum, fmt.Errorf("the closed job ended %s: %s", client.StateWord(job.GetState()), job.GetMessage())
	}
	if sum.Files, sum.Epoch, err = gw.FetchVersion(ctx, sum.JobID, 0, final); err != nil {
		return sum, fmt.Errorf("fetch the results: %w", err)
	}
	for k := int64(1); k <= s.epochs(); k++ {
		_, got, err := gw.FetchVersion(ctx, sum.JobID, k, fetched(final, k))
		if err != nil {
			return sum, fmt.Errorf("results --epoch %d: %w", k, err)
		}
		if got != k {
			return sum, fmt.Errorf("results --epoch %d: the gateway sent version %d", k, got)
		}
	}
	if err := gw.Delete(ctx, sum.JobID); err != nil {
		fmt.Fprintf(out, "chaos: note: job %s could not be released at the gateway: %v\n", sum.JobID, err)
	}
	return sum, nil
}

// VersionCheck is how one version of a standing job compared with the
// answers over the rows of its epochs 1..Epoch.
type VersionCheck struct {
	Epoch int64
	// Published: what the submit or append wrote when it returned was
	// equal; Fetched: `client results --epoch Epoch` once the job was
	// done was.
	Published, Fetched bool
	// Diffs say how each file that was not differs, and where the
	// expected ones are.
	Diffs []string
}

// Equal reports whether both copies of the version were equal.
func (c VersionCheck) Equal() bool { return c.Published && c.Fetched }

// check compares every version, as published and as fetched into out,
// with its expected answers; the expected files of a version that
// differs are written under refDir/version-K.
func (s *standingJob) check(out, refDir string) ([]VersionCheck, error) {
	var checks []VersionCheck
	for k := int64(1); k <= s.epochs(); k++ {
		c := VersionCheck{Epoch: k}
		ref := filepath.Join(refDir, "version-"+strconv.FormatInt(k, 10))
		for _, v := range []struct {
			dir  string
			ok   *bool
			what string
		}{{s.published(k), &c.Published, "as published"}, {fetched(out, k), &c.Fetched, "results --epoch " + strconv.FormatInt(k, 10)}} {
			equal, diffs, _, err := compare(s.want[k-1], v.dir, ref)
			if err != nil {
				return checks, fmt.Errorf("version %d %s: %w", k, v.what, err)
			}
			*v.ok = equal
			for _, d := range diffs {
				c.Diffs = append(c.Diffs, v.what+": "+d)
			}
		}
		checks = append(checks, c)
	}
	return checks, nil
}

// verdict checks every version (check) and says what is wrong: one
// problem per version that differs, or why they could not be compared.
// A batch job (s nil) has no version.
func (s *standingJob) verdict(out, refDir string) ([]VersionCheck, []string) {
	if s == nil {
		return nil, nil
	}
	checks, err := s.check(out, refDir)
	var problems []string
	if err != nil {
		problems = append(problems, fmt.Sprintf("compare the versions: %v", err))
	}
	for _, c := range checks {
		if !c.Equal() {
			problems = append(problems, fmt.Sprintf("version %d differs from the answers over epochs 1..%d:\n    %s", c.Epoch, c.Epoch, strings.Join(c.Diffs, "\n    ")))
		}
	}
	return checks, problems
}

// printVersions lists each version's check, a line each, after prefix
// ("chaos", "chaos election").
func printVersions(w io.Writer, prefix string, checks []VersionCheck) {
	word := func(ok bool) string {
		if ok {
			return "equal"
		}
		return "DIFFERS"
	}
	for _, c := range checks {
		fmt.Fprintf(w, "%s: version %d (rows of epochs 1..%d): as published %s, results --epoch %d %s\n",
			prefix, c.Epoch, c.Epoch, word(c.Published), c.Epoch, word(c.Fetched))
	}
}

// versionsMatch is the verdict's word on the versions when they all
// matched ("" for a batch job).
func versionsMatch(checks []VersionCheck) string {
	if len(checks) == 0 {
		return ""
	}
	return fmt.Sprintf(", and all %d versions (as published and by results --epoch) byte-equal to the answers over their epochs", len(checks))
}

// The moments of a standing job's epochs a kill can land in before the
// job is closed (Kill.moment).
const (
	notInEpochs   = iota // a batch job's kill, or one after the close
	epochUploads         // the epoch's input not whole yet
	versionMade          // its input whole, its version not out
	betweenEpochs        // the last version out, no append yet
)

// moment is when a kill landed in a standing job's epochs.
func (k Kill) moment() int {
	switch {
	case k.Epoch == 0 || k.Phase != "upload":
		return notInEpochs
	case k.Committed < k.Epoch:
		return epochUploads
	case k.Published < k.Epoch:
		return versionMade
	}
	return betweenEpochs
}

// Moment names when a kill landed in a standing job's epochs: "epoch K
// uploading", "version K being made", "between epochs"; "" for a batch
// job's kill, or one after the close.
func (k Kill) Moment() string {
	switch k.moment() {
	case epochUploads:
		return fmt.Sprintf("epoch %d uploading", k.Epoch)
	case versionMade:
		return fmt.Sprintf("version %d being made", k.Epoch)
	case betweenEpochs:
		return "between epochs"
	}
	return ""
}

// printMoments counts the kills that landed in a standing job's epochs
// by moment (nothing for a batch job's).
func printMoments(w io.Writer, kills []Kill) {
	n := map[int]int{}
	for _, k := range kills {
		n[k.moment()]++
	}
	if in := len(kills) - n[notInEpochs]; in > 0 {
		fmt.Fprintf(w, "chaos: %d kills during the epochs: %d while an epoch uploaded, %d while a version was made, %d between epochs\n", in, n[epochUploads], n[versionMade], n[betweenEpochs])
	}
}
