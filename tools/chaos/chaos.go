package chaos

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/roles/local"
)

// Defaults of a harness run.
const (
	DefaultKills       = 20
	DefaultInterval    = 250 * time.Millisecond
	DefaultUploadChunk = 64 << 10
	DefaultTimeout     = 10 * time.Minute
)

// Options describe one harness run.
type Options struct {
	// Binary is the wololo binary the processes run; os.Executable() if
	// empty.
	Binary string
	// Topology to run; deploy.Default() if it has no stages.
	Topology deploy.Topology
	// The job: both input files and the directory for its outputs
	// (q1.csv..q4.csv, or NAME.csv for each of Queries).
	Matches, Players, Out string
	// Queries, if any, are the job's own SQL queries (docs/sql.md): the
	// job runs their physical plan instead of the four default ones,
	// and writes NAME.csv for each. A default query (q1..q4 with the text of
	// queries/NAME.sql) must match the reference evaluator's answer, any
	// other the SQL engine's in-process one (sqlops.Answer).
	Queries []sqljob.Query
	// Kills is how many SIGKILLs to deliver during the job.
	Kills int
	// DiskLosses is how many of the kills also lose their victim's disk
	// (a gateway or worker, never a master): its data directory is
	// deleted before the restart, as on a new node (local only: a target
	// with LoseDisk). The job is then lost, and the client submits it
	// again from its files (client.SubmitOptions.Rebuilds). Negative: a
	// tenth of the kills.
	DiskLosses int
	// Seed picks the victims and the intervals.
	Seed int64
	// Interval is the mean time between kills during the upload; after it
	// the kills come in a burst (gaps of 1/20 to 1/5 of it), and once the
	// job is done the rest at once. DefaultInterval if zero.
	Interval time.Duration
	// UploadRate is the pace of the upload through the shaping proxy in
	// bytes per second: 0 picks one so that the upload lasts about as long
	// as the kills planned for it; a negative rate skips the proxy (the
	// client talks to the gateway directly, at full speed).
	UploadRate int64
	// UploadChunk is the largest upload frame the proxy forwards;
	// DefaultUploadChunk if zero.
	UploadChunk int
	// TempDir is where the cluster's fresh data directory is made;
	// os.TempDir() if empty.
	TempDir string
	// Keep keeps the cluster's data directory even when the run passes
	// (it is always kept when it fails).
	Keep bool
	// Timeout bounds the job; DefaultTimeout if zero.
	Timeout time.Duration
	// Log receives the runner's events (exits, restarts); silent if nil.
	Log hclog.Logger
	// Stdout receives the kill lines, phase changes and the verdict.
	Stdout io.Writer
	// Progress receives the client's upload progress and retries.
	Progress io.Writer
	// DryRun sends the null signal (0) instead of SIGKILL: the schedule
	// runs against a healthy job and nothing is harmed.
	DryRun bool
	// Masters run beside the graph and do every restart (the leading one
	// is among the victims); the topology's count if negative; 0 leaves
	// restarts to the local runner.
	Masters int

	// Standing makes the job a standing one fed in Epochs epochs
	// (DefaultEpochs if 0), every version checked (standing.go).
	Standing bool
	Epochs   int

	// freeze, if set, pauses one worker halfway through the upload kills
	// (the masters must notice and restart it).
	freeze pauser
}

// diskLoser is a target that can lose an instance's disk: SIGKILL it and
// restart it on an empty data directory (local.Cluster.LoseDisk).
type diskLoser interface {
	LoseDisk(instance string) (int, error)
}

// pickDiskLosses picks which kills (numbered from 1, in the order they
// land) also lose their victim's disk: n of those whose planned victim is
// not a master, at random.
func pickDiskLosses(top deploy.Topology, victims []string, n int, rng *rand.Rand) map[int]bool {
	var can []int
	for i, v := range victims {
		if in, err := deploy.ParseInstance(v); v != LeaderTarget && err == nil && in.Stage != deploy.MasterStage {
			can = append(can, i+1)
		}
	}
	rng.Shuffle(len(can), func(i, j int) { can[i], can[j] = can[j], can[i] })
	lose := map[int]bool{}
	for _, k := range can[:min(n, len(can))] {
		lose[k] = true
	}
	return lose
}

// pauser freezes an instance's process without killing it.
type pauser interface {
	Pause(instance string) (int, error)
}

func newRNG(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x636861_6f73)) }

// Kill is one SIGKILL the harness delivered.
type Kill struct {
	N        int
	At       time.Duration // since the job was submitted
	Instance string
	Stage    string
	PID      int
	Phase    string // the job's phase when it landed: upload, after-upload, done
	// Disk: the victim's data directory was deleted before its restart
	// (Options.DiskLosses).
	Disk bool
	// Epoch, Committed and Published are, for a standing job, its
	// epochs, those whose input is whole and its versions out when the
	// kill landed, as the monitor last saw them (Moment names them).
	Epoch, Committed, Published int64
}

// Report is what a run did.
type Report struct {
	JobID   string
	Kills   []Kill
	Planned int
	// PlannedInUpload are the kills planned during the upload, paced with
	// it: all of them must land (those after it race the job's end).
	PlannedInUpload int
	Stages          map[string]int // kills per stage
	Phases          map[string]int // kills per phase
	UploadAt        time.Duration  // when both files were in (0 if never seen)
	DoneAt          time.Duration  // when the job was seen done (0 if never)
	Elapsed         time.Duration  // submit to results on disk
	Rate            int64          // upload pace in bytes/s (0: direct)
	Frames          int64          // upload frames the proxy forwarded
	// Equal reports whether every output matched what it should be (the
	// reference's, or for a query of the user's the SQL engine's
	// in-process answer); Diffs describes each file that did not.
	Equal     bool
	Diffs     []string
	SubmitErr error
	// Versions are the checks of a standing job's versions (Standing),
	// one per epoch.
	Versions  []VersionCheck
	DataDir   string // the cluster's data directory (kept unless the run passed)
	Processes []local.Proc
	Restarts  int
	JobLost   bool // the gateway stopped knowing the job after a restart
	// Rebuilds are why the job was lost (a disk lost) and submitted
	// again by the client, each time; Replays the gateway's rebuilds of
	// the (last) job (Job.rebuilds): a lost shard alone from the batches
	// it kept, or the whole job again from its retained input.
	Rebuilds []string
	Replays  []string
	RefDir   string
	LogsAt   string // where the processes' logs are, for a failed run
	// Frozen is the instance paused during the run ("" if none), and
	// FrozenFor how long it stayed frozen until the masters replaced it
	// (0: they never did).
	Frozen     string
	FrozenFor  time.Duration
	StopErr    error
	Incomplete []string // why the run does not count, besides the outputs
}

// phases of the job, as the monitor sees them.
const (
	phaseCreate int32 = iota
	phaseUpload
	phaseRunning
	phaseDone
	phaseFailed
	phaseLost
)

var phaseNames = []string{"create", "upload", "after-upload", "done", "failed", "lost"}

// Local runs the harness once on a local cluster. The returned error says why the run failed
// (results differ, submit failed, fewer kills than asked, ...); the Report
// is returned either way once the cluster started.
func Local(ctx context.Context, o Options) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	out := o.Stdout
	want, err := o.expect()
	if err != nil {
		return nil, err
	}
	var extra []string
	size, dataDir, err := prepare(o.Matches, o.Players, o.TempDir, "wololo-chaos-")
	if err != nil {
		return nil, err
	}
	rep := &Report{DataDir: dataDir, Stages: map[string]int{}, Phases: map[string]int{}, LogsAt: dataDir + "/<instance>.log (kept)"}

	rng := newRNG(o.Seed)
	pre, post := plan(o.Topology, o.Kills, rng)
	rep.Planned, rep.PlannedInUpload = len(pre)+len(post), len(pre)
	fmt.Fprintf(out, "chaos: seed %d, %d kills planned (%d during the upload, %d after it), mean interval %s; data and logs in %s\n",
		o.Seed, rep.Planned, len(pre), len(post), o.Interval, dataDir)
	if missing := uncovered(o.Topology, append(append([]string(nil), pre...), post...)); len(missing) > 0 {
		fmt.Fprintf(out, "chaos: warning: %d kills cannot cover every kind of process; never killed: %s\n", o.Kills, strings.Join(missing, ", "))
	}

	cl, err := local.Start(ctx, local.Options{
		Binary: o.Binary, Topology: o.Topology, DataDir: dataDir, FreePorts: true,
		Log: o.Log.Named("local"), ExtraArgs: extra, LogLevel: "info", Masters: o.Masters,
	})
	if err != nil {
		return rep, fmt.Errorf("start the cluster: %w (logs in %s)", err, dataDir)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		rep.StopErr = cl.Stop()
		rep.Processes = cl.Processes()
		for _, p := range rep.Processes {
			if !p.Replaced {
				rep.Restarts += p.Restarts
			}
		}
	}

	return drive(ctx, o, want, cl, cl.GatewayAddr(), rep, stop, size, pre, post, rng)
}

// target is what a harness run kills: the processes of a local cluster, or
// the containers of a compose project (docker.go).
type target interface {
	// Signal signals the instance's current process and returns its pid;
	// an error wrapping local.ErrNotRunning when it is down.
	Signal(instance string, sig syscall.Signal) (int, error)
	// Processes describes every instance's current process.
	Processes() []local.Proc
	// LogTail is the end of an instance's log.
	LogTail(instance string, lines int) string
	// Addr is where an instance serves gRPC, from here.
	Addr(instance string) string
	// Topology is the deployed topology.
	Topology() deploy.Topology
	// ClientTLS is the client credential name's TLS config for the
	// gateway's public port; OperatorTLS an operator's for an instance's
	// Status. Nil for a deployment run with --insecure.
	ClientTLS(name string) (*tls.Config, error)
	OperatorTLS(instance string) (*tls.Config, error)
}

// clientName is the client credential the harnesses submit as.
const clientName = "client"

// drive runs the job against gateway while it kills the planned victims
// of tgt, then checks the outputs; finish is called once the job is over
// (it stops a local cluster) and before the summary.
func drive(ctx context.Context, o Options, want *answers, tgt target, gateway string, rep *Report, finish func(), size int64, pre, post []string, rng *rand.Rand) (*Report, error) {
	out := o.Stdout
	stop := finish
	defer stop()
	dataDir := rep.DataDir
	var err error
	var st *standingJob
	if o.Standing {
		if st, err = newStandingJob(o.Matches, o.Players, o.Epochs, o.Queries, o.Topology, want, filepath.Join(dataDir, "standing"), out); err != nil {
			return rep, err
		}
	}
	// The pauses before the kills during the upload are drawn now, so that
	// the upload can be paced to outlast them.
	gaps := make([]time.Duration, len(pre))
	var planned time.Duration
	for i := range gaps {
		gaps[i] = gap(rng, o.Interval)
		planned += gaps[i]
	}
	server := gateway
	clientTLS, err := tgt.ClientTLS(clientName)
	if err != nil {
		return rep, err
	}
	submitTLS := clientTLS
	var sh *shaper
	if o.UploadRate >= 0 {
		rate := o.UploadRate
		if rate == 0 {
			// Stretch the upload over those pauses, plus half an interval
			// for each kill to find and signal its target, plus one
			// interval of slack.
			target := planned + time.Duration(len(pre))*o.Interval/2 + o.Interval
			rate = int64(math.Ceil(float64(size) / target.Seconds()))
		}
		if sh, err = newShaper(server, clientTLS, rate, o.UploadChunk); err != nil {
			return rep, fmt.Errorf("upload proxy: %w", err)
		}
		defer sh.Close()
		server, rep.Rate, submitTLS = sh.Addr(), rate, nil // the shaper presents the credential
		fmt.Fprintf(out, "chaos: upload of %.2f MB paced at %.0f kB/s in frames of at most %d kB through %s\n",
			float64(size)/1e6, float64(rate)/1e3, o.UploadChunk>>10, sh.Addr())
	}

	rep.JobID = fmt.Sprintf("chaos-s%d-%d", o.Seed, time.Now().UnixNano()%1_000_000_000)
	start := time.Now()
	jobCtx, jobCancel := context.WithCancel(ctx)
	defer jobCancel()
	mon := &monitor{start: start, out: out}
	if st != nil {
		mon.standing = st.epochs()
		mon.total = size // the file reports declare the epochs so far
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		mon.run(jobCtx, gateway, clientTLS, rep.JobID)
	}()
	k := &killer{cl: tgt, top: o.Topology, rng: rng, mon: mon, out: out, start: start, interval: o.Interval, gaps: gaps, sig: syscall.SIGKILL, freeze: o.freeze}
	if st != nil {
		k.epochs = int(st.epochs())
	}
	if o.DryRun {
		k.sig = syscall.Signal(0)
		fmt.Fprintf(out, "chaos: dry run: the kills below are the null signal; nothing dies\n")
	}
	if _, ok := tgt.(diskLoser); ok && o.DiskLosses > 0 && !o.DryRun {
		// A generator of its own: the kills' schedule stays the seed's.
		k.lose = pickDiskLosses(o.Topology, append(append([]string(nil), pre...), post...), o.DiskLosses, newRNG(o.Seed^0x6469736b))
		fmt.Fprintf(out, "chaos: %d of the kills also lose their victim's disk (kills %s): the gateway rebuilds a lost shard alone from the batches it kept, or runs the lost job again from its retained input, or the client submits it again\n", len(k.lose), killNumbers(k.lose))
	} else if o.DiskLosses > 0 && !o.DryRun {
		fmt.Fprintf(out, "chaos: note: this harness cannot lose a disk; --disk-losses ignored\n")
	}
	go func() {
		defer wg.Done()
		k.run(jobCtx, pre, post)
	}()

	sctx, scancel := context.WithTimeout(ctx, o.Timeout)
	var stuck atomic.Pointer[string]
	wg.Add(1)
	go func() { // give up early on a process that keeps dying by itself
		defer wg.Done()
		if msg := watchdog(jobCtx, tgt, k); msg != "" {
			stuck.Store(&msg)
			scancel()
		}
	}()
	sum, err := runJob(sctx, client.SubmitOptions{
		Server: server, TLS: submitTLS, Matches: o.Matches, Players: o.Players, Out: o.Out, JobID: rep.JobID,
		Progress: o.Progress, UploadAttempts: 100, Queries: o.Queries,
		// Each lost disk loses the job at most once: the job submitted
		// again runs under a new id, which the lost store never held.
		Rebuilds: len(k.lose), Notices: out,
	}, st, out, start)
	scancel()
	rep.Elapsed = time.Since(start)
	jobCancel()
	wg.Wait()
	if fz := k.frozenInstance(); fz != "" {
		rep.Frozen = fz
		for wait := time.Now(); k.frozenFor() == 0 && time.Since(wait) < 30*time.Second && ctx.Err() == nil; {
			time.Sleep(100 * time.Millisecond)
		}
		rep.FrozenFor = k.frozenFor()
	}
	rep.SubmitErr = err
	rep.Kills = k.kills
	if sum != nil {
		rep.Rebuilds, rep.Replays = sum.Rebuilds, sum.Job.GetRebuilds()
	}
	if sh != nil {
		rep.Frames = sh.frames.Load()
	}
	for _, kl := range rep.Kills {
		rep.Stages[kl.Stage]++
		rep.Phases[kl.Phase]++
	}
	rep.UploadAt, rep.DoneAt, rep.JobLost = mon.uploadAt, mon.doneAt, mon.lost.Load()
	if err == nil {
		fmt.Fprintf(out, "chaos: +%s job %s finished: results in %s\n", fmtDur(rep.Elapsed), sum.JobID, o.Out)
	}

	var problems []string
	if msg := stuck.Load(); msg != nil {
		problems = append(problems, *msg)
	}
	if err != nil {
		problems = append(problems, fmt.Sprintf("submit failed: %v", err))
		if rep.JobLost {
			problems = append(problems, "the gateway stopped knowing the job after a restart (job state not durable)")
		}
	} else {
		rep.Equal, rep.Diffs, rep.RefDir, err = compare(want, o.Out, filepath.Join(dataDir, "reference"))
		if err != nil {
			problems = append(problems, fmt.Sprintf("compare the outputs: %v", err))
		} else if !rep.Equal {
			problems = append(problems, "outputs differ from "+want.from+":\n    "+strings.Join(rep.Diffs, "\n    "))
		}
		var wrong []string
		rep.Versions, wrong = st.verdict(o.Out, filepath.Join(dataDir, "reference"))
		problems = append(problems, wrong...)
	}
	if o.freeze != nil && rep.Frozen == "" {
		rep.Incomplete = append(rep.Incomplete, "no worker was paused")
	}
	if rep.Frozen != "" && rep.FrozenFor == 0 {
		problems = append(problems, fmt.Sprintf("the paused %s was not restarted by the masters within 30 s of the job's end", rep.Frozen))
	}
	// The kills planned during the upload are paced with it, so they must
	// all land. Those after it race the graph's last flush and the
	// client's fetch, a fraction of a second on a small dataset: one of
	// them landing is required (below), the rest are only counted.
	switch {
	case len(rep.Kills) < len(pre):
		rep.Incomplete = append(rep.Incomplete, fmt.Sprintf("only %d of %d kills landed before the job ended, fewer than the %d planned during the upload (lower --upload-rate or --interval)", len(rep.Kills), o.Kills, len(pre)))
	case len(rep.Kills) < o.Kills:
		fmt.Fprintf(out, "chaos: note: %d of %d kills landed; the job ended %s after its upload, before the last %d\n",
			len(rep.Kills), o.Kills, fmtDur(rep.DoneAt-rep.UploadAt), o.Kills-len(rep.Kills))
	}
	// The client may see the end of its upload only once the job is done:
	// when a gateway killed at the upload's last frame comes back, the
	// graph can finish in the seconds the client spends reconnecting, and
	// its resume finds the upload and the job complete at once. Then there
	// was no time after the upload for a kill to land in, and asking for
	// one fails a run that showed nothing wrong (seen once in CI: upload
	// and job done both at +14.062 s).
	switch {
	case len(post) == 0 || err != nil || rep.Phases["after-upload"]+rep.Phases["done"] > 0:
	case rep.DoneAt > rep.UploadAt && rep.DoneAt-rep.UploadAt < minPostWindow:
		// The graph finished within a moment of the upload (seen in CI:
		// 77 ms, after a rebuild from the retained input had replayed
		// the rows as the upload went): no kill after it could land.
		fmt.Fprintf(out, "chaos: note: the job was done %s after its upload, too soon for a kill after it to land\n", fmtDur(rep.DoneAt-rep.UploadAt))
	case rep.DoneAt > rep.UploadAt:
		rep.Incomplete = append(rep.Incomplete, "no kill landed after the upload finished")
	default:
		fmt.Fprintf(out, "chaos: note: the client saw its upload end only when the job was done (a gateway restart at its last frame), so no kill could land after the upload\n")
	}
	if missing := uncoveredKills(o.Topology, rep.Kills); len(missing) > 0 && o.Kills >= len(o.Topology.Stages) {
		rep.Incomplete = append(rep.Incomplete, "never killed: "+strings.Join(missing, ", "))
	}
	problems = append(problems, rep.Incomplete...)

	stop()
	printSummary(out, o, rep)
	if len(problems) > 0 {
		fmt.Fprintf(out, "chaos: FAIL\n  - %s\n", strings.Join(problems, "\n  - "))
		fmt.Fprintf(out, "chaos: the processes' logs: %s\n", rep.LogsAt)
		return rep, errors.New(problems[0])
	}
	fmt.Fprintf(out, "chaos: PASS: %d kills, %s%s\n", len(rep.Kills), outputsMatch(o.Queries), versionsMatch(rep.Versions))
	if !o.Keep {
		os.RemoveAll(dataDir)
	}
	return rep, nil
}

// minPostWindow is the least time from the upload's end to the job's
// below which no kill after the upload is required: the monitor sees each
// state through WatchJob, and the killer looks every 10 ms, after its
// victim is up again.
const minPostWindow = 250 * time.Millisecond

// expect works out the run's expected outputs before anything starts, so
// that a query the SQL engine refuses fails the run before any process
// starts or dies.
func (o *Options) expect() (*answers, error) {
	start := time.Now()
	want, err := expected(o.Matches, o.Players, o.Queries, o.Topology)
	if err != nil {
		return nil, fmt.Errorf("the expected answers: %w", err)
	}
	fmt.Fprintf(o.Stdout, "chaos: %d expected output files, %s, in %s\n", len(want.names), want.from, time.Since(start).Round(time.Millisecond))
	return want, nil
}

func (o *Options) defaults() error {
	if o.Matches == "" || o.Players == "" || o.Out == "" {
		return errors.New("chaos: the matches and players files and an output directory are required")
	}
	if o.Kills < 0 {
		return fmt.Errorf("chaos: kills must be at least 0, got %d", o.Kills)
	}
	if o.Standing {
		if o.Epochs == 0 {
			o.Epochs = DefaultEpochs
		}
		if o.Epochs < 1 {
			return fmt.Errorf("chaos: a standing job needs at least 1 epoch, got %d", o.Epochs)
		}
	}
	if o.DiskLosses < 0 {
		o.DiskLosses = o.Kills / 10
	}
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		o.Binary = exe
	}
	if len(o.Topology.Stages) == 0 {
		o.Topology = deploy.Default()
	}
	if o.Masters >= 0 {
		o.Topology.Masters = o.Masters
	}
	o.Masters = o.Topology.Masters
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.UploadChunk <= 0 {
		o.UploadChunk = DefaultUploadChunk
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	return nil
}

// prepare checks a run's two input files, returning their total size, and
// makes its own fresh directory (named prefix + a random suffix) under
// tempDir for the cluster's data and logs, or the run's outputs.
func prepare(matches, players, tempDir, prefix string) (size int64, dir string, err error) {
	for _, f := range []string{matches, players} {
		info, err := os.Stat(f)
		if err != nil {
			return 0, "", err
		}
		size += info.Size()
	}
	if err := os.MkdirAll(tempDir, 0o755); err != nil {
		return 0, "", err
	}
	if dir, err = os.MkdirTemp(tempDir, prefix); err != nil {
		return 0, "", err
	}
	return size, dir, nil
}

// LeaderTarget in a plan stands for whichever master leads when the kill
// lands (found through the masters' Status).
const LeaderTarget = "leader"

// plan picks the victims: pre for the upload, post for after it. pre
// starts with one instance of every stage (when it is long enough), then
// picks instances uniformly; post cycles through the instances of the
// stages that still have work once the files are in (all but the filters).
// With masters, about one kill in ten (at least one, from 4 kills up) is
// the leading master's, and one more after the upload from 8 kills up.
func plan(top deploy.Topology, n int, rng *rand.Rand) (pre, post []string) {
	var stages []deploy.Stage
	var all, late []string
	for _, s := range top.Stages {
		stages = append(stages, s)
		for i := 0; i < s.Replicas; i++ {
			name := deploy.Instance{Stage: s.Name, Index: i}.Name()
			all = append(all, name)
			if s.Role != "filter" {
				late = append(late, name)
			}
		}
	}
	nPost := 0
	if n >= 2 {
		nPost = max(2, n/4)
	}
	nPre := n - nPost
	preLeaders, postLeaders := 0, 0
	if top.Masters > 0 && n >= 4 {
		preLeaders = max(1, n/10)
		if n >= 8 {
			postLeaders = 1
		}
	}
	for _, i := range rng.Perm(len(stages)) {
		if len(pre) == nPre-preLeaders {
			break
		}
		pre = append(pre, deploy.Instance{Stage: stages[i].Name, Index: rng.IntN(stages[i].Replicas)}.Name())
	}
	for len(pre) < nPre-preLeaders {
		pre = append(pre, all[rng.IntN(len(all))])
	}
	for range preLeaders {
		pre = append(pre, LeaderTarget)
	}
	rng.Shuffle(len(pre), func(i, j int) { pre[i], pre[j] = pre[j], pre[i] })
	order := rng.Perm(len(late))
	for i := 0; len(post) < nPost-postLeaders; i++ {
		post = append(post, late[order[i%len(order)]])
	}
	if postLeaders > 0 {
		at := rng.IntN(len(post) + 1)
		post = append(post[:at], append([]string{LeaderTarget}, post[at:]...)...)
	}
	return pre, post
}

// uncovered lists the stages none of the instances belongs to.
func uncovered(top deploy.Topology, instances []string) []string {
	seen := map[string]bool{}
	for _, name := range instances {
		if in, err := deploy.ParseInstance(name); err == nil {
			seen[in.Stage] = true
		}
	}
	var out []string
	for _, s := range top.Stages {
		if !seen[s.Name] {
			out = append(out, s.Name)
		}
	}
	return out
}

func uncoveredKills(top deploy.Topology, kills []Kill) []string {
	var names []string
	for _, k := range kills {
		names = append(names, k.Instance)
	}
	return uncovered(top, names)
}

// monitor follows the job's phase through the gateway's GetJob, directly
// (not through the shaping proxy).
type monitor struct {
	start time.Time
	out   io.Writer

	// standing is a standing job's epochs (0 for a batch job): its
	// input is in once the last one's is whole, though its state is
	// running from its first epoch's on. After that come the last
	// version, the close and the end, where the job has little left to
	// do: the burst of kills after the upload starts there.
	standing int64
	total    int64 // the input's bytes, if not the file reports' sum
	// epochs, committed and published are a standing job's epochs so
	// far, those whose input is whole and its versions out (Job.epochs,
	// epochs_committed, epochs_published).
	epochs, committed, published atomic.Int64

	phase    atomic.Int32
	pct      atomic.Int64 // upload percent
	lost     atomic.Bool
	uploadAt time.Duration // written by run only, read after it ended
	doneAt   time.Duration
}

func (m *monitor) run(ctx context.Context, gateway string, tlsConfig *tls.Config, id string) {
	conn, err := client.Dial(gateway, tlsConfig)
	if err != nil {
		fmt.Fprintf(m.out, "chaos: monitor: %v\n", err)
		return
	}
	defer conn.Close()
	jobs := wololov1.NewJobServiceClient(conn)
	seen := false
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		r, err := jobs.GetJob(cctx, &wololov1.GetJobRequest{JobId: id})
		cancel()
		switch {
		case err == nil:
			seen = true
			m.observe(r.Job)
		case status.Code(err) == codes.NotFound && seen && m.phase.Load() < phaseDone:
			if !m.lost.Swap(true) {
				fmt.Fprintf(m.out, "chaos: +%s the gateway no longer knows job %s (it restarted without it)\n", fmtDur(time.Since(m.start)), id)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(25 * time.Millisecond):
		}
	}
}

func (m *monitor) observe(j *wololov1.Job) {
	if j.GetStanding() {
		m.epochs.Store(j.GetEpochs())
		m.committed.Store(j.GetEpochsCommitted())
		m.published.Store(j.GetEpochsPublished())
	}
	var done, total int64
	for _, f := range []*wololov1.FileReport{j.Matches, j.Players} {
		if f != nil {
			done += f.Offset
			total += f.Size
		}
	}
	if m.total > 0 {
		total = m.total
	}
	if total > 0 {
		m.pct.Store(min(100, 100*done/total))
	}
	var p int32
	switch j.State {
	case wololov1.JobState_JOB_STATE_UPLOADING:
		p = phaseUpload
	case wololov1.JobState_JOB_STATE_RUNNING:
		p = phaseRunning
	case wololov1.JobState_JOB_STATE_DONE:
		p = phaseDone
	case wololov1.JobState_JOB_STATE_FAILED:
		p = phaseFailed
	default:
		return
	}
	if m.standing > 0 && j.GetOpen() && j.GetEpochsCommitted() < m.standing && p == phaseRunning {
		p = phaseUpload // appends to come
	}
	old := m.phase.Load()
	if old >= phaseFailed && p < phaseFailed {
		// A job lost and submitted again by the client (a lost disk):
		// its phases start over.
		fmt.Fprintf(m.out, "chaos: +%s job %s submitted again; following it from the start\n", fmtDur(time.Since(m.start)), j.JobId)
		m.uploadAt, m.doneAt, old = 0, 0, phaseCreate
	}
	if p <= old {
		return // phases only move forward (a restarted gateway may report an older view briefly)
	}
	m.phase.Store(p)
	at := time.Since(m.start)
	switch p {
	case phaseUpload:
		fmt.Fprintf(m.out, "chaos: +%s job %s created; uploading\n", fmtDur(at), j.JobId)
	case phaseRunning:
		m.uploadAt = at
		what := "upload finished (both files in)"
		if m.standing > 0 {
			what = "the last epoch's input whole"
		}
		fmt.Fprintf(m.out, "chaos: +%s %s; the graph is finishing\n", fmtDur(at), what)
	case phaseDone:
		if m.uploadAt == 0 {
			m.uploadAt = at
		}
		m.doneAt = at
		fmt.Fprintf(m.out, "chaos: +%s job done; the client fetches the results\n", fmtDur(at))
	case phaseFailed:
		fmt.Fprintf(m.out, "chaos: +%s job FAILED: %s\n", fmtDur(at), j.Message)
	}
}

// SelfDeaths is how many times a process may die without being killed
// before the harness gives up on the run (a crash loop would otherwise run
// until the timeout).
const SelfDeaths = 8

// watchdog returns a description of the first instance that died
// SelfDeaths times more than it was killed, or "" when ctx ends first.
func watchdog(ctx context.Context, cl target, k *killer) string {
	for {
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(250 * time.Millisecond):
		}
		killed := k.perInstance()
		for _, p := range cl.Processes() {
			deaths := p.Restarts
			if !p.Alive {
				deaths++
			}
			if !p.Replaced && deaths-killed[p.Instance] >= SelfDeaths {
				return fmt.Sprintf("%s died %d times without being killed (a crash loop); the end of %s:\n%s",
					p.Instance, deaths-killed[p.Instance], p.LogFile, cl.LogTail(p.Instance, 12))
			}
		}
	}
}

// killer delivers the planned kills.
type killer struct {
	cl       target
	top      deploy.Topology
	rng      *rand.Rand
	mon      *monitor
	out      io.Writer
	start    time.Time
	interval time.Duration
	gaps     []time.Duration // the pause before each kill during the upload
	sig      syscall.Signal
	freeze   pauser
	lose     map[int]bool // the kills (by number) that also lose the victim's disk
	// epochs, for a standing job, spreads the kills during the upload
	// over its epochs: kill i of n waits for epoch 1 + i·epochs/n to open
	// (epochOf), and the last of an epoch's kills for its input to be
	// whole or its version out, to land while the version is made or
	// between epochs.
	epochs int

	mu      sync.Mutex
	kills   []Kill
	frozen  string        // the paused instance
	thawed  time.Duration // how long until the masters replaced it
	frozeAt time.Time
}

func (k *killer) frozenInstance() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.frozen
}

func (k *killer) frozenFor() time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.thawed
}

// stillFrozen reports whether instance is paused and not yet replaced.
func (k *killer) stillFrozen(instance string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return instance == k.frozen && k.thawed == 0
}

// freezeOne pauses a random live worker and watches, in the background,
// for the masters to replace it (a new process of the instance). When the
// kills so far left no worker alive, it waits up to freezeWait for one to
// come back (a swarm task takes over a second).
func (k *killer) freezeOne(ctx context.Context) {
	var workers []string
	for deadline := time.Now().Add(freezeWait); len(workers) == 0; {
		for _, p := range k.cl.Processes() {
			in, err := deploy.ParseInstance(p.Instance)
			if err != nil || !p.Alive || in.Stage == deploy.MasterStage || in.Stage == k.top.Gateway().Name {
				continue
			}
			workers = append(workers, p.Instance)
		}
		if len(workers) == 0 && (time.Now().After(deadline) || !sleepCtx(ctx, 100*time.Millisecond)) {
			return
		}
	}
	victim := workers[k.rng.IntN(len(workers))]
	pid, err := k.freeze.Pause(victim)
	if err != nil {
		fmt.Fprintf(k.out, "chaos: pause %s: %v\n", victim, err)
		return
	}
	k.mu.Lock()
	k.frozen, k.frozeAt = victim, time.Now()
	k.mu.Unlock()
	fmt.Fprintf(k.out, "pause       +%-8s %-18s pid %-7d (frozen until the masters replace it)\n", fmtDur(time.Since(k.start)), victim, pid)
	go func() { // outlives the job by up to two minutes: the report waits 30 s for it
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
			for _, p := range k.cl.Processes() {
				if p.Instance == victim && p.Alive && p.PID != pid {
					k.mu.Lock()
					k.thawed = time.Since(k.frozeAt)
					k.mu.Unlock()
					fmt.Fprintf(k.out, "chaos: +%s the paused %s was replaced by the masters after %s (pid %d)\n", fmtDur(time.Since(k.start)), victim, fmtDur(k.frozenFor()), p.PID)
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

// freezeWait bounds freezeOne's wait for a live worker to pause.
const freezeWait = 10 * time.Second

// perInstance counts the kills delivered so far per instance.
func (k *killer) perInstance() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	m := map[string]int{}
	for _, kl := range k.kills {
		m[kl.Instance]++
	}
	return m
}

func (k *killer) run(ctx context.Context, pre, post []string) {
	total := len(pre) + len(post)
	// During the upload: exponential gaps around the mean.
	for i, target := range pre {
		if k.freeze != nil && i == len(pre)/2 {
			k.freezeOne(ctx)
		}
		if e := k.epochOf(i, len(pre)); k.epochs > 0 && e < k.epochOf(i+1, len(pre)) {
			// The last kill of its epoch, at once: in an odd epoch once
			// its input is whole, while the version is made (or, when
			// that was quicker than the monitor, between epochs); in an
			// even one once the version is out, while the client fetches
			// it and appends the next epoch.
			count := &k.mon.committed
			if e%2 == 0 {
				count = &k.mon.published
			}
			if !k.await(ctx, count, e) {
				return
			}
		} else if !k.await(ctx, &k.mon.epochs, k.epochOf(i, len(pre))) || !sleepCtx(ctx, k.gaps[i]) {
			return
		}
		if !k.kill(ctx, target, total, false) {
			return
		}
	}
	// After it: wait for the files to be in, then kill in a quick burst
	// while the graph finishes and the results flush (on a small dataset
	// that takes a fraction of a second), and once the job is done, while
	// the client fetches the results, without pause.
	for k.mon.phase.Load() < phaseRunning {
		if !sleepCtx(ctx, 10*time.Millisecond) {
			return
		}
	}
	for i, target := range post {
		if i > 0 && k.mon.phase.Load() < phaseDone {
			lo, hi := k.interval/20, k.interval/5
			if !sleepCtx(ctx, lo+time.Duration(k.rng.Float64()*float64(hi-lo))) {
				return
			}
		}
		if !k.kill(ctx, target, total, true) {
			return
		}
	}
}

// epochOf is the epoch of a standing job whose time kill i of the n
// during the upload waits for (k.epochs of them; n+1 is past the last).
func (k *killer) epochOf(i, n int) int64 {
	if i >= n {
		return int64(k.epochs) + 1
	}
	return int64(1 + i*k.epochs/n)
}

// await waits until the monitor's count reaches epoch, or the job is
// closed; true at once for a batch job. False if ctx ended.
func (k *killer) await(ctx context.Context, count *atomic.Int64, epoch int64) bool {
	for k.epochs > 0 && count.Load() < epoch && k.mon.phase.Load() <= phaseUpload {
		if !sleepCtx(ctx, 5*time.Millisecond) {
			return false
		}
	}
	return true
}

// gap is an exponentially distributed pause with the given mean, clamped
// to [mean/4, 3·mean].
func gap(rng *rand.Rand, mean time.Duration) time.Duration {
	d := time.Duration(rng.ExpFloat64() * float64(mean))
	return min(max(d, mean/4), 3*mean)
}

// kill SIGKILLs target's current process. If it is down (being
// restarted), another live replica of its stage takes its place; a
// single-replica stage is waited for, and then killed after a random
// fraction of an interval (sometimes in the middle of its recovery). A late
// kill may instead take any live instance of a stage that still has work.
func (k *killer) kill(ctx context.Context, target string, total int, late bool) bool {
	if target == LeaderTarget {
		if target = k.leader(ctx); target == "" {
			return false
		}
	}
	for {
		if k.stillFrozen(target) {
			if alt := k.live(target, false); alt != "" { // another of its stage, else any
				target = alt
			} else if alt := k.live(target, true); alt != "" {
				target = alt
			} else if !sleepCtx(ctx, 100*time.Millisecond) {
				return false
			}
			continue
		}
		pid, disk, err := k.signal(target)
		if err == nil {
			in, _ := deploy.ParseInstance(target)
			phase := phaseNames[min(int(k.mon.phase.Load()), len(phaseNames)-1)]
			if phase == "create" {
				phase = "upload"
			}
			k.mu.Lock()
			kl := Kill{N: len(k.kills) + 1, At: time.Since(k.start), Instance: target, Stage: in.Stage, PID: pid, Phase: phase, Disk: disk,
				Epoch: k.mon.epochs.Load(), Committed: k.mon.committed.Load(), Published: k.mon.published.Load()}
			k.kills = append(k.kills, kl)
			k.mu.Unlock()
			detail := ""
			if phase == "upload" {
				detail = fmt.Sprintf(" %d%%", k.mon.pct.Load())
			}
			if k.epochs > 0 && phase == "upload" {
				detail += ", " + kl.Moment()
			}
			if disk {
				detail += ", disk lost"
			}
			fmt.Fprintf(k.out, "kill %3d/%d  +%-8s %-18s pid %-7d (%s%s)\n", kl.N, total, fmtDur(kl.At), target, pid, phase, detail)
			return true
		}
		if !errors.Is(err, local.ErrNotRunning) {
			fmt.Fprintf(k.out, "chaos: kill %s: %v\n", target, err)
			return false
		}
		if alt := k.live(target, late); alt != "" {
			target = alt
			continue
		}
		for !k.alive(target) {
			if !sleepCtx(ctx, 10*time.Millisecond) {
				return false
			}
		}
		if !sleepCtx(ctx, time.Duration(k.rng.Float64()*float64(k.interval/2))) {
			return false
		}
	}
}

// signal SIGKILLs target (k.sig), losing its disk too when this kill is
// one of k.lose and the target is not a master; disk reports whether it
// did.
func (k *killer) signal(target string) (pid int, disk bool, err error) {
	k.mu.Lock()
	lose := k.lose[len(k.kills)+1]
	k.mu.Unlock()
	if in, perr := deploy.ParseInstance(target); lose && perr == nil && in.Stage != deploy.MasterStage {
		pid, err = k.cl.(diskLoser).LoseDisk(target)
		return pid, err == nil, err
	}
	pid, err = k.cl.Signal(target, k.sig)
	return pid, false, err
}

// killNumbers lists the kills of a set by number, in order.
func killNumbers(set map[int]bool) string {
	var ns []string
	for _, n := range slices.Sorted(maps.Keys(set)) {
		ns = append(ns, strconv.Itoa(n))
	}
	return strings.Join(ns, ", ")
}

// leader waits until every master runs and they agree on an acting
// leader, and names it ("" if ctx ends first). Waiting for every master
// keeps leader kills in a row from taking the last one: the masters
// restart each other, so with none left nothing would ever be restarted
// (seed 123 of 30 kills on a 200k-match job killed all three within
// 0.4 s and stalled the job for good).
func (k *killer) leader(ctx context.Context) string {
	for {
		if k.mastersAlive() {
			if id := agreedLeader(masterViews(ctx, k.cl, 500*time.Millisecond)); id != 0 {
				return deploy.Instance{Stage: deploy.MasterStage, Index: id}.Name()
			}
		}
		if !sleepCtx(ctx, 20*time.Millisecond) {
			return ""
		}
	}
}

// mastersAlive reports whether every master's process runs.
func (k *killer) mastersAlive() bool {
	n := 0
	for _, p := range k.cl.Processes() {
		if in, err := deploy.ParseInstance(p.Instance); err != nil || in.Stage != deploy.MasterStage || p.Replaced {
			continue
		}
		if !p.Alive {
			return false
		}
		n++
	}
	return n > 0
}

func (k *killer) alive(instance string) bool {
	for _, p := range k.cl.Processes() {
		if p.Instance == instance && !p.Replaced {
			return p.Alive
		}
	}
	return false
}

// live picks a live instance of target's stage, or when late of any graph
// stage that still has work after the upload (not a filter, not a master:
// masters are killed as the leader, deliberately, and random picks among
// them could take out every supervisor at once); "" if none.
func (k *killer) live(target string, late bool) string {
	want, _ := deploy.ParseInstance(target)
	var live []string
	for _, p := range k.cl.Processes() {
		in, err := deploy.ParseInstance(p.Instance)
		if err != nil || !p.Alive || p.Replaced || k.stillFrozen(p.Instance) {
			continue
		}
		st, _ := k.top.Stage(in.Stage)
		if in.Stage == want.Stage || (late && in.Stage != deploy.MasterStage && st.Role != "filter") {
			live = append(live, p.Instance)
		}
	}
	if len(live) == 0 {
		return ""
	}
	return live[k.rng.IntN(len(live))]
}

func fmtDur(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

func printSummary(w io.Writer, o Options, rep *Report) {
	var stages []string
	for _, s := range o.Topology.Stages {
		stages = append(stages, fmt.Sprintf("%s %d", s.Name, rep.Stages[s.Name]))
	}
	if o.Topology.Masters > 0 {
		stages = append(stages, fmt.Sprintf("leading master %d", rep.Stages[deploy.MasterStage]))
	}
	var phases []string
	for _, p := range phaseNames[1:] {
		if n := rep.Phases[p]; n > 0 {
			phases = append(phases, fmt.Sprintf("%s %d", p, n))
		}
	}
	sort.Strings(phases)
	fmt.Fprintf(w, "chaos: %d kills by kind: %s\n", len(rep.Kills), strings.Join(stages, ", "))
	fmt.Fprintf(w, "chaos: %d kills by phase: %s; upload finished at +%s, job done at +%s, results on disk at +%s\n",
		len(rep.Kills), strings.Join(phases, ", "), fmtDur(rep.UploadAt), fmtDur(rep.DoneAt), fmtDur(rep.Elapsed))
	disks := 0
	for _, kl := range rep.Kills {
		if kl.Disk {
			disks++
		}
	}
	if disks > 0 {
		fmt.Fprintf(w, "chaos: %d kills lost their victim's disk; the gateway rebuilt the job %d times (a lost shard alone, or the whole job from its retained input), the client submitted it again %d times\n", disks, len(rep.Replays), len(rep.Rebuilds))
		for _, r := range rep.Replays {
			fmt.Fprintf(w, "chaos:   rebuilt by the gateway: %s\n", r)
		}
	}
	if rep.Frozen != "" {
		fmt.Fprintf(w, "chaos: paused %s; the masters replaced it after %s\n", rep.Frozen, fmtDur(rep.FrozenFor))
	}
	printMoments(w, rep.Kills)
	printVersions(w, "chaos", rep.Versions)
	if rep.Frames > 0 {
		fmt.Fprintf(w, "chaos: the proxy forwarded %d upload frames\n", rep.Frames)
	}
	if len(rep.Processes) > 0 {
		by := "the local runner"
		if o.Topology.Masters > 0 {
			by = "the masters"
		}
		fmt.Fprintf(w, "chaos: %d restarts by %s; processes at the end:\n", rep.Restarts, by)
		local.FormatProcesses(w, rep.Processes)
	}
	if rep.StopErr != nil {
		fmt.Fprintf(w, "chaos: stopping the cluster: %v\n", rep.StopErr)
	}
}
