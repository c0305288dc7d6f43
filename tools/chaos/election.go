package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/lifetime"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/roles/local"
)

// Defaults of an election chaos run.
const (
	DefaultElectionKills   = 10
	DefaultElectionOut     = "out/chaos-election"
	DefaultDoubleKills     = 0.2
	DefaultRightAfter      = 0.2
	DefaultFailoverTimeout = 30 * time.Second
	DefaultFailoverTarget  = 3 * time.Second
	// ElectionKillPace is how long the upload is stretched per planned
	// kill, so that the kills land while the job runs.
	ElectionKillPace = 2500 * time.Millisecond
)

// electionTimeout bounds a run (the job and the kills) when
// ElectionOptions.Timeout is zero.
const electionTimeout = 10 * time.Minute

// electionChunk is the largest upload frame the shaping proxy forwards.
const electionChunk = 64 << 10

// ElectionOptions describe one run of the election chaos tool.
type ElectionOptions struct {
	// Binary is the wololo binary the processes run; os.Executable() if
	// empty.
	Binary string
	// The job that runs meanwhile: both input files and the directory for
	// its outputs (q1.csv..q4.csv, or NAME.csv for each of Queries).
	Matches, Players, Out string
	// Queries, if any, are the job's own SQL queries, compared as
	// Options.Queries are (a default query with the reference, any other
	// with the SQL engine's in-process answer).
	Queries []sqljob.Query
	// Kills is how many times the leading master is killed.
	Kills int
	// Seed picks the kinds of kill, the pauses and the second victims.
	Seed int64
	// Double is the fraction of kills that also kill a second, randomly
	// chosen live master at the same moment (used as given: 0 is none).
	Double float64
	// RightAfter is the fraction of kills that hit the leader as soon as
	// the masters agree on it, without the usual pause of 0.3 to 1.5 s
	// (used as given: 0 is none).
	RightAfter float64
	// Masters is how many masters run; 3 if zero.
	Masters int
	// UploadRate paces the upload through the shaping proxy in bytes per
	// second: 0 stretches it over Kills × ElectionKillPace; negative
	// skips the proxy.
	UploadRate int64
	// FailoverTimeout bounds the wait for a new agreed leader after a
	// kill, and for a killed master to run again;
	// DefaultFailoverTimeout if zero.
	FailoverTimeout time.Duration
	// Target is the failover time the summary compares the maximum with
	// (it does not fail the run); DefaultFailoverTarget if zero.
	Target time.Duration
	// TempDir is where the cluster's fresh data directory is made;
	// os.TempDir() if empty.
	TempDir string
	// Keep keeps the cluster's data directory even when the run passes.
	Keep bool
	// Timeout bounds the whole run (the job and the kills); 10 minutes if
	// zero.
	Timeout time.Duration
	// Log receives the local runner's events; silent if nil.
	Log hclog.Logger
	// Stdout receives the kill lines and the summary.
	Stdout io.Writer
	// Progress receives the client's upload progress and retries.
	Progress io.Writer
	// Standing makes the job a standing one fed in Epochs epochs
	// (DefaultEpochs if 0), every version checked, as Options.Standing.
	Standing bool
	Epochs   int
	// Partition, when the target can cut a master off its network (the
	// docker target), ends the run by cutting the leader off for this
	// long: the others must elect and act, the cut-off one must stop.
	Partition time.Duration
}

// ElectionKill is one kill of the leading master (and maybe another).
type ElectionKill struct {
	N int
	// At is the moment of the kill, since the job was submitted.
	At   time.Duration
	Kind string // "leader", "leader+master-X", "right-after-election", "right-after-election+master-X"
	// Victims are the killed instances, the leader first, and their pids.
	Victims []string
	PIDs    []int
	// Leader and Term are the killed leader's id and term.
	Leader int
	Term   uint64
	// LeaderAge is how long the masters had agreed on that leader when it
	// was killed.
	LeaderAge time.Duration
	// JobRunning reports whether the job was still running at the kill.
	JobRunning bool
	// Failover is the time from the kill until every master that answers
	// Status, the victims of this kill left out, named the same new
	// leader, which said it leads and acts.
	Failover  time.Duration
	Completed bool
	NewLeader int
	NewTerm   uint64
	// Rejoin is the time from the kill until every master that answers,
	// the restarted victims included, named one acting leader. A victim
	// that comes back listens, and keeps the promise it may have made to
	// the leader it had, before it names the new one. It is timed by the
	// wait before the next kill (RejoinOK false when that kill came right
	// after an election, which does not wait for it).
	Rejoin   time.Duration
	RejoinOK bool
	// Back is the time from the kill until every killed master ran again
	// (BackOK false if one never did within FailoverTimeout).
	Back   time.Duration
	BackOK bool
	// Cut marks the partition step: the leader was cut off its network
	// (not killed) for ElectionOptions.Partition.
	Cut bool
}

// ElectionReport is what an election chaos run did and found.
type ElectionReport struct {
	JobID string
	Kills []ElectionKill
	// Failovers are the completed failover times, in kill order; P50, P99
	// and Max are their nearest-rank percentiles. Rejoins and RejoinMax
	// are the same for the rejoin times.
	Failovers     []time.Duration
	P50, P99, Max time.Duration
	Rejoins       []time.Duration
	RejoinMax     time.Duration
	// MeetsTarget reports whether Max stayed under ElectionOptions.Target.
	MeetsTarget bool
	// StatusViolations come from polling every master's Status (two ids
	// leading and acting in one term); LogViolations from the masters'
	// logs (see CheckMasterLogs). Violations is both.
	StatusViolations []string
	LogViolations    []string
	Violations       []string
	// StatusRounds is how many times the poller asked every master.
	StatusRounds int
	// Intervals are the acting intervals read from the logs; LogNotes
	// the logs' oddities that are not violations.
	Intervals []ActingInterval
	LogNotes  []string
	// The job: Equal reports whether its outputs matched (q1..q4 the
	// reference's).
	Equal     bool
	Diffs     []string
	SubmitErr error
	// Versions are the checks of a standing job's versions (Standing).
	Versions  []VersionCheck
	RefDir    string
	Rate      int64
	Elapsed   time.Duration // submit to results on disk
	DataDir   string        // kept unless the run passed
	Processes []local.Proc
	StopErr   error
	// Problems are why the run failed ("" none).
	Problems []string
}

// Election runs the election chaos tool once: a local cluster with its
// masters and one job; the leading master is SIGKILLed Kills times while
// the job runs (sometimes with a second master, sometimes right after its
// election); each failover is timed; the masters' Status and logs are
// checked for two masters leading or acting at once. The error says why
// the run failed (a violation, a wrong or failed job, a failover that never
// completed, a master that never came back); the report comes back either
// way once the cluster started.
func Election(ctx context.Context, o ElectionOptions) (*ElectionReport, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	out := o.Stdout
	var extra []string
	size, dataDir, err := prepare(o.Matches, o.Players, o.TempDir, "wololo-chaos-election-")
	if err != nil {
		return nil, fmt.Errorf("chaos election: %w", err)
	}
	rep := &ElectionReport{DataDir: dataDir}
	fmt.Fprintf(out, "chaos election: seed %d, %d kills of the leading master among %d (about %.0f%% double, %.0f%% right after an election); data and logs in %s\n",
		o.Seed, o.Kills, o.Masters, 100*o.Double, 100*o.RightAfter, dataDir)

	cl, err := local.Start(ctx, local.Options{
		Binary: o.Binary, DataDir: dataDir, FreePorts: true, Masters: o.Masters,
		ExtraArgs: extra, LogLevel: "info", Log: o.Log.Named("local"),
		MasterArgs: []string{"--log-json"}, // the log check reads JSON (election_log.go)
	})
	if err != nil {
		return rep, fmt.Errorf("chaos election: start the cluster: %w (logs in %s)", err, dataDir)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			rep.StopErr = cl.Stop()
			rep.Processes = cl.Processes()
		}
	}
	defer stop()

	readLog := func(instance string) ([]byte, error) { return os.ReadFile(cl.LogFile(instance)) }
	return electionDrive(ctx, o, cl, cl.GatewayAddr(), rep, stop, size, readLog, dataDir+"/<instance>.log (kept)")
}

// electionDrive runs the job against gateway while it kills the leading
// master of tgt, then checks the masters' Status history and logs
// (readLog) and the outputs; stop is called once the job is over, before
// the logs are read.
func electionDrive(ctx context.Context, o ElectionOptions, tgt target, gateway string, rep *ElectionReport, stop func(), size int64, readLog func(string) ([]byte, error), logsAt string) (*ElectionReport, error) {
	out := o.Stdout
	dataDir := rep.DataDir
	var err error
	defer stop()
	var want *answers
	var st *standingJob
	if o.Standing { // its answers worked out before the job starts, as Local's are
		if want, err = expected(o.Matches, o.Players, o.Queries, tgt.Topology()); err != nil {
			return rep, fmt.Errorf("chaos election: the expected answers: %w", err)
		}
		if st, err = newStandingJob(o.Matches, o.Players, o.Epochs, o.Queries, tgt.Topology(), want, filepath.Join(dataDir, "standing"), out); err != nil {
			return rep, fmt.Errorf("chaos election: %w", err)
		}
	}
	server := gateway
	clientTLS, err := tgt.ClientTLS(clientName)
	if err != nil {
		return rep, err
	}
	submitTLS := clientTLS
	if o.UploadRate >= 0 {
		rate := o.UploadRate
		if rate == 0 {
			target := time.Duration(max(o.Kills, 1)) * ElectionKillPace
			rate = int64(math.Ceil(float64(size) / target.Seconds()))
		}
		sh, err := newShaper(server, clientTLS, rate, electionChunk)
		if err != nil {
			return rep, fmt.Errorf("chaos election: upload proxy: %w", err)
		}
		defer sh.Close()
		server, rep.Rate, submitTLS = sh.Addr(), rate, nil // the shaper presents the credential
		fmt.Fprintf(out, "chaos election: upload of %.2f MB paced at %.1f kB/s (about %s)\n",
			float64(size)/1e6, float64(rate)/1e3, secs(time.Duration(float64(size)/float64(rate)*float64(time.Second))))
	}

	runCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	start := time.Now()
	rep.JobID = fmt.Sprintf("chaos-election-s%d-%d", o.Seed, start.UnixNano()%1_000_000_000)

	// The Status poller runs from before the first kill until the job and
	// the kills are over.
	watch := &statusWatch{acting: map[uint64]map[int]time.Time{}}
	pollCtx, stopPolling := context.WithCancel(runCtx)
	var pollWG sync.WaitGroup
	pollWG.Add(1)
	go func() {
		defer pollWG.Done()
		watch.run(pollCtx, tgt)
	}()

	type submitResult struct {
		err error
		at  time.Duration
	}
	var jobDone atomic.Bool
	submitted := make(chan submitResult, 1)
	go func() {
		_, err := runJob(runCtx, client.SubmitOptions{
			Server: server, TLS: submitTLS, Matches: o.Matches, Players: o.Players, Out: o.Out, JobID: rep.JobID,
			Progress: o.Progress, UploadAttempts: 100, Queries: o.Queries,
		}, st, out, start)
		jobDone.Store(true)
		submitted <- submitResult{err, time.Since(start)}
	}()

	k := &leaderKiller{
		o: o, cl: tgt, out: out, start: start, jobDone: &jobDone,
		rng: rand.New(rand.NewPCG(uint64(o.Seed), 0x656c656374)),
	}
	var problems []string
	rep.Kills, problems = k.run(runCtx)
	res := <-submitted
	rep.SubmitErr, rep.Elapsed = res.err, res.at
	if res.err == nil {
		fmt.Fprintf(out, "chaos election: +%s job %s finished: results in %s\n", secs(res.at), rep.JobID, o.Out)
	}
	stopPolling()
	pollWG.Wait()
	rep.StatusRounds = watch.rounds
	rep.StatusViolations = watch.violations()

	// The logs are complete once every process exited.
	stop()
	logs := map[string][]byte{}
	for _, in := range tgt.Topology().MasterInstances() {
		b, err := readLog(in.Name())
		if err != nil {
			problems = append(problems, fmt.Sprintf("read the log of %s: %v", in.Name(), err))
			continue
		}
		logs[in.Name()] = b
	}
	check := CheckMasterLogs(logs, time.Now())
	rep.LogViolations, rep.Intervals = check.Violations, check.Intervals
	for _, ml := range check.Logs {
		rep.LogNotes = append(rep.LogNotes, ml.Notes...)
	}
	rep.Violations = append(append([]string(nil), rep.StatusViolations...), rep.LogViolations...)
	if o.Kills > 0 && len(check.Intervals) == 0 {
		problems = append(problems, "the masters' logs show no acting interval at all: the log check has nothing to check (do the masters log JSON, with --log-json? did the log lines change?)")
	}

	for _, kl := range rep.Kills {
		if kl.Completed {
			rep.Failovers = append(rep.Failovers, kl.Failover)
		}
		if kl.RejoinOK {
			rep.Rejoins = append(rep.Rejoins, kl.Rejoin)
		}
	}
	rep.P50, rep.P99 = percentile(rep.Failovers, 50), percentile(rep.Failovers, 99)
	rep.Max = percentile(rep.Failovers, 100)
	rep.RejoinMax = percentile(rep.Rejoins, 100)
	rep.MeetsTarget = len(rep.Failovers) > 0 && rep.Max < o.Target

	if len(rep.Violations) > 0 {
		problems = append(problems, fmt.Sprintf("%d violations of one leader per term / one acting master at a time", len(rep.Violations)))
	}
	if res.err != nil {
		problems = append(problems, fmt.Sprintf("submit failed: %v", res.err))
	} else {
		if want == nil {
			want, err = expected(o.Matches, o.Players, o.Queries, tgt.Topology())
		}
		if err == nil {
			rep.Equal, rep.Diffs, rep.RefDir, err = compare(want, o.Out, filepath.Join(dataDir, "reference"))
		}
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("reference: %v", err))
		case !rep.Equal:
			problems = append(problems, "outputs differ from the reference")
		}
		var wrong []string
		rep.Versions, wrong = st.verdict(o.Out, filepath.Join(dataDir, "reference"))
		problems = append(problems, wrong...)
	}
	rep.Problems = problems
	printElectionSummary(out, o, rep)
	if len(problems) > 0 {
		fmt.Fprintf(out, "chaos election: FAIL\n  - %s\n", strings.Join(problems, "\n  - "))
		fmt.Fprintf(out, "chaos election: the processes' logs: %s\n", logsAt)
		return rep, errors.New(problems[0])
	}
	fmt.Fprintf(out, "chaos election: PASS: %d kills, %d failovers, no violation, %s%s\n", len(rep.Kills), len(rep.Failovers), outputsMatch(o.Queries), versionsMatch(rep.Versions))
	if !o.Keep {
		os.RemoveAll(dataDir)
	}
	return rep, nil
}

func (o *ElectionOptions) defaults() error {
	if o.Matches == "" || o.Players == "" || o.Out == "" {
		return errors.New("chaos election: the matches and players files and an output directory are required")
	}
	if o.Kills < 0 {
		return fmt.Errorf("chaos election: kills must be at least 0, got %d", o.Kills)
	}
	if o.Double < 0 || o.Double > 1 || o.RightAfter < 0 || o.RightAfter > 1 {
		return fmt.Errorf("chaos election: the double and right-after fractions must be within [0, 1], got %g and %g", o.Double, o.RightAfter)
	}
	if o.Masters == 0 {
		o.Masters = 3
	}
	if o.Standing && o.Epochs == 0 {
		o.Epochs = DefaultEpochs
	}
	if o.Standing && o.Epochs < 1 {
		return fmt.Errorf("chaos election: a standing job needs at least 1 epoch, got %d", o.Epochs)
	}
	if o.Masters < 2 {
		return fmt.Errorf("chaos election: a failover needs at least 2 masters, got %d", o.Masters)
	}
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("chaos election: find the wololo binary: %w", err)
		}
		o.Binary = exe
	}
	if o.FailoverTimeout <= 0 {
		o.FailoverTimeout = DefaultFailoverTimeout
	}
	if o.Target <= 0 {
		o.Target = DefaultFailoverTarget
	}
	if o.Timeout <= 0 {
		o.Timeout = electionTimeout
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

// statusWatch records, for every term, which masters said through Status
// that they lead it and act.
type statusWatch struct {
	mu     sync.Mutex
	acting map[uint64]map[int]time.Time // term -> id -> first seen
	rounds int
}

// statusEvery is the poller's period.
const statusEvery = 50 * time.Millisecond

func (w *statusWatch) run(ctx context.Context, cl deployment) {
	for ctx.Err() == nil {
		views := masterViews(ctx, cl, 500*time.Millisecond)
		now := time.Now()
		w.mu.Lock()
		if ctx.Err() == nil {
			w.rounds++
		}
		for _, v := range views {
			if v.Err != nil || v.Role != "leader" || !v.Acting {
				continue
			}
			ids := w.acting[v.Term]
			if ids == nil {
				ids = map[int]time.Time{}
				w.acting[v.Term] = ids
			}
			if _, seen := ids[v.ID]; !seen {
				ids[v.ID] = now
			}
		}
		w.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(statusEvery):
		}
	}
}

func (w *statusWatch) violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return actingTermViolations(w.acting)
}

// actingTermViolations lists the terms in which more than one id said it
// leads and acts.
func actingTermViolations(acting map[uint64]map[int]time.Time) []string {
	var terms []uint64
	for t, ids := range acting {
		if len(ids) > 1 {
			terms = append(terms, t)
		}
	}
	slices.Sort(terms)
	var out []string
	for _, t := range terms {
		var ids []int
		for id := range acting[t] {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		var who []string
		for _, id := range ids {
			who = append(who, fmt.Sprintf("id %d (first at %s)", id, clock(acting[t][id])))
		}
		out = append(out, fmt.Sprintf("term %d: Status showed %d masters leading and acting in it: %s", t, len(ids), strings.Join(who, ", ")))
	}
	return out
}

// leaderKiller delivers the kills and times the failovers.
type leaderKiller struct {
	o       ElectionOptions
	cl      target
	out     io.Writer
	rng     *rand.Rand
	start   time.Time
	jobDone *atomic.Bool

	leader   int       // the leader the masters last agreed on
	leaderAt time.Time // when that agreement was first seen
}

// pollEvery is how often the killer asks the masters while it waits.
const pollEvery = 20 * time.Millisecond

func (k *leaderKiller) run(ctx context.Context) ([]ElectionKill, []string) {
	var kills []ElectionKill
	masters := k.cl.Topology().MasterInstances()
	retries := 0
	for n := 1; n <= k.o.Kills; n++ {
		// Every draw happens on every kill, so the schedule is a function
		// of the seed alone.
		rightAfter := k.rng.Float64() < k.o.RightAfter
		double := k.rng.Float64() < k.o.Double && len(masters) >= 3
		pause := 300*time.Millisecond + time.Duration(k.rng.Float64()*float64(1200*time.Millisecond))
		pick := k.rng.IntN(1 << 30)

		// Every master runs again (the last kill's victims are back).
		wctx, cancel := context.WithTimeout(ctx, k.o.FailoverTimeout)
		err := k.waitAllRunning(wctx, masters)
		cancel()
		if err != nil {
			return kills, []string{fmt.Sprintf("before kill %d: %v", n, err)}
		}
		// Right after an election: at once, as soon as the leader leads
		// and acts and no master names another (a victim that just came
		// back may still be listening, or bound by its promise to the
		// leader it had, and name none yet). Otherwise: once every master
		// that answers agrees, after a pause.
		if !rightAfter {
			wctx, cancel := context.WithTimeout(ctx, k.o.FailoverTimeout)
			_, _, err := k.waitLeader(wctx, nil, false, nil)
			cancel()
			if err != nil {
				return kills, []string{fmt.Sprintf("before kill %d: %v", n, err)}
			}
			k.rejoined(kills)
			if !sleepCtx(ctx, pause) {
				return kills, []string{fmt.Sprintf("kill %d: %v", n, ctx.Err())}
			}
		}
		wctx, cancel = context.WithTimeout(ctx, k.o.FailoverTimeout)
		leader, term, err := k.waitLeader(wctx, nil, rightAfter, nil)
		cancel()
		if err != nil {
			return kills, []string{fmt.Sprintf("before kill %d: %v", n, err)}
		}
		victims := []string{masterName(leader)}
		if double {
			var others []string
			for _, in := range masters {
				if in.Index != leader && k.running(in.Name()) {
					others = append(others, in.Name())
				}
			}
			if len(others) > 0 {
				victims = append(victims, others[pick%len(others)])
			}
		}
		kl := ElectionKill{N: n, Leader: leader, Term: term, JobRunning: !k.jobDone.Load()}
		var killedAt time.Time
		for _, v := range victims {
			pid, err := k.cl.Signal(v, syscall.SIGKILL)
			if err != nil {
				if len(kl.PIDs) == 0 {
					break // the leader died by itself in between: try again
				}
				continue // the second victim died by itself: a single kill after all
			}
			if len(kl.PIDs) == 0 {
				killedAt = time.Now()
			}
			kl.Victims, kl.PIDs = append(kl.Victims, v), append(kl.PIDs, pid)
		}
		if len(kl.PIDs) == 0 {
			if retries++; retries > 5 {
				return kills, []string{fmt.Sprintf("kill %d: %s was never running when it was to be killed", n, victims[0])}
			}
			fmt.Fprintf(k.out, "chaos election: %s was no longer running when it was to be killed; trying again\n", victims[0])
			n-- // the same kill again
			continue
		}
		retries = 0
		kl.At, kl.LeaderAge = killedAt.Sub(k.start), killedAt.Sub(k.leaderAt)
		kl.Kind = "leader"
		if rightAfter {
			kl.Kind = "right-after-election"
		}
		if len(kl.Victims) > 1 {
			kl.Kind += "+" + kl.Victims[1]
		}
		killed := map[int]bool{}
		for _, v := range kl.Victims {
			in, _ := deploy.ParseInstance(v)
			killed[in.Index] = true
		}

		// The failover: every answering master but the victims names the
		// same new leader, which leads and acts. A victim restarted by then
		// answers too, but it listens first and may be bound by a promise
		// to the leader it had (election's rule 4): its rejoin is timed
		// apart.
		fctx, cancel := context.WithTimeout(ctx, k.o.FailoverTimeout)
		newLeader, newTerm, err := k.waitLeader(fctx, killed, false, killed)
		cancel()
		if err == nil {
			kl.Completed, kl.Failover, kl.NewLeader, kl.NewTerm = true, k.leaderAt.Sub(killedAt), newLeader, newTerm
		}
		// The victims run again (restarted by the new leader).
		bctx, cancel := context.WithTimeout(ctx, k.o.FailoverTimeout)
		berr := k.waitAllRunning(bctx, masters)
		cancel()
		if berr == nil {
			kl.Back, kl.BackOK = time.Since(killedAt), true
		}

		kills = append(kills, kl)
		k.printKill(kl)
		switch {
		case !kl.Completed:
			return kills, []string{fmt.Sprintf("kill %d: no new leader agreed within %s: %v", n, k.o.FailoverTimeout, err)}
		case !kl.BackOK:
			return kills, []string{fmt.Sprintf("kill %d: not every killed master came back within %s: %v", n, k.o.FailoverTimeout, berr)}
		}
	}
	if len(kills) > 0 {
		wctx, cancel := context.WithTimeout(ctx, k.o.FailoverTimeout)
		if _, _, err := k.waitLeader(wctx, nil, false, nil); err == nil {
			k.rejoined(kills)
		}
		cancel()
	}
	if k.o.Partition > 0 {
		c, ok := k.cl.(cutter)
		if !ok {
			return kills, []string{"a partition was asked for, but this deployment cannot cut a master off its network"}
		}
		kl, problem := k.partition(ctx, c, masters)
		kills = append(kills, kl)
		k.printKill(kl)
		if problem != "" {
			return kills, []string{problem}
		}
	}
	return kills, nil
}

// cutter cuts an instance off its network while its process runs on.
type cutter interface {
	Cut(instance string) (restore func() error, err error)
}

// partition cuts the agreed leader off the network for o.Partition: the
// others must agree on a new acting leader meanwhile (timed like a
// failover), and once the link is back every master must agree again. The
// log check then shows whether the cut-off leader stopped acting before
// the new one started: at most one side may act.
func (k *leaderKiller) partition(ctx context.Context, c cutter, masters []deploy.Instance) (ElectionKill, string) {
	kl := ElectionKill{N: k.o.Kills + 1, Kind: "cut-off", Cut: true, JobRunning: !k.jobDone.Load()}
	wctx, cancel := context.WithTimeout(ctx, k.o.FailoverTimeout)
	err := k.waitAllRunning(wctx, masters)
	var leader int
	var term uint64
	if err == nil {
		leader, term, err = k.waitLeader(wctx, nil, false, nil)
	}
	cancel()
	if err != nil {
		return kl, fmt.Sprintf("before the partition: %v", err)
	}
	victim := masterName(leader)
	restore, err := c.Cut(victim)
	if err != nil {
		return kl, fmt.Sprintf("partition: %v", err)
	}
	cutAt := time.Now()
	kl.Leader, kl.Term, kl.Victims, kl.PIDs = leader, term, []string{victim}, []int{0}
	kl.At, kl.LeaderAge = cutAt.Sub(k.start), cutAt.Sub(k.leaderAt)
	fctx, cancel := context.WithTimeout(ctx, k.o.FailoverTimeout)
	newLeader, newTerm, ferr := k.waitLeader(fctx, map[int]bool{leader: true}, false, nil)
	cancel()
	if ferr == nil {
		kl.Completed, kl.Failover, kl.NewLeader, kl.NewTerm = true, k.leaderAt.Sub(cutAt), newLeader, newTerm
	}
	sleepCtx(ctx, time.Until(cutAt.Add(k.o.Partition)))
	if err := restore(); err != nil {
		return kl, fmt.Sprintf("end the partition: %v", err)
	}
	bctx, cancel := context.WithTimeout(ctx, k.o.FailoverTimeout)
	berr := k.waitAllRunning(bctx, masters)
	if berr == nil {
		_, _, berr = k.waitLeader(bctx, nil, false, nil)
	}
	cancel()
	if berr == nil {
		kl.Back, kl.BackOK = time.Since(cutAt), true
	}
	switch {
	case ferr != nil:
		return kl, fmt.Sprintf("partition: no other master took over while %s was cut off: %v", victim, ferr)
	case berr != nil:
		return kl, fmt.Sprintf("partition: the masters did not agree again after %s was reconnected: %v", victim, berr)
	}
	return kl, ""
}

// rejoined times the rejoin of the last kill, now that every master agrees.
func (k *leaderKiller) rejoined(kills []ElectionKill) {
	if len(kills) == 0 {
		return
	}
	kl := &kills[len(kills)-1]
	if kl.RejoinOK || !kl.Completed {
		return
	}
	kl.Rejoin, kl.RejoinOK = time.Since(k.start.Add(kl.At)), true
	fmt.Fprintf(k.out, "kill %2d/%d  every master, %s included, agrees on %s after %s\n",
		kl.N, k.o.Kills, strings.Join(kl.Victims, ", "), masterName(kl.NewLeader), secs(kl.Rejoin))
}

func (k *leaderKiller) printKill(kl ElectionKill) {
	var victims []string
	for i, v := range kl.Victims {
		if kl.Cut {
			victims = append(victims, v+" cut off "+secs(k.o.Partition))
			continue
		}
		victims = append(victims, fmt.Sprintf("%s pid %d", v, kl.PIDs[i]))
	}
	job := "job running"
	if !kl.JobRunning {
		job = "job over"
	}
	failover := "NEVER"
	if kl.Completed {
		failover = fmt.Sprintf("%-7s -> %s term %d", secs(kl.Failover), masterName(kl.NewLeader), kl.NewTerm)
	}
	back := "NOT BACK"
	if kl.BackOK {
		back = "back after " + secs(kl.Back)
	}
	step := fmt.Sprintf("kill %2d/%d", kl.N, k.o.Kills)
	if kl.Cut {
		step = "partition  "
	}
	fmt.Fprintf(k.out, "%s  +%-8s %-34s %-32s (term %d, leader for %s, %s)  failover %s; %s\n",
		step, secs(kl.At), strings.Join(victims, ", "), kl.Kind, kl.Term, secs(kl.LeaderAge), job, failover, back)
}

// waitLeader waits until every master that answers Status names the same
// leader, not one of excluded, and that leader says it leads and acts;
// the masters in ignore are left out, and with undecided so are masters
// that answer but name no leader. It returns the leader and its term. The
// first time it sees a leader other than the last one it saw, it notes
// the moment (leaderAt).
func (k *leaderKiller) waitLeader(ctx context.Context, excluded map[int]bool, undecided bool, ignore map[int]bool) (int, uint64, error) {
	for {
		views := masterViews(ctx, k.cl, 500*time.Millisecond)
		now := time.Now()
		considered := views
		if len(ignore) > 0 {
			considered = nil
			for _, v := range views {
				if !ignore[v.ID] {
					considered = append(considered, v)
				}
			}
		}
		if undecided {
			considered = decided(considered)
		}
		agreed := agreedLeader(considered)
		if id := agreed; id != 0 && !excluded[id] {
			if id != k.leader {
				k.leader, k.leaderAt = id, now
			}
			for _, v := range views {
				if v.ID == id {
					return id, v.Term, nil
				}
			}
		}
		if !sleepCtx(ctx, pollEvery) {
			return 0, 0, fmt.Errorf("no agreed acting leader: %s (%w)", describeViews(views), ctx.Err())
		}
	}
}

// decided leaves out the masters that answer without naming a leader.
func decided(views []MasterView) []MasterView {
	var out []MasterView
	for _, v := range views {
		if v.Err == nil && v.Leader == 0 {
			continue
		}
		out = append(out, v)
	}
	return out
}

// waitAllRunning waits until the runner shows a live process for every
// master.
func (k *leaderKiller) waitAllRunning(ctx context.Context, masters []deploy.Instance) error {
	for {
		var down []string
		for _, in := range masters {
			if !k.running(in.Name()) {
				down = append(down, in.Name())
			}
		}
		if len(down) == 0 {
			return nil
		}
		if !sleepCtx(ctx, pollEvery) {
			return fmt.Errorf("%s not running (%w)", strings.Join(down, ", "), ctx.Err())
		}
	}
}

func (k *leaderKiller) running(instance string) bool {
	for _, p := range k.cl.Processes() {
		if p.Instance == instance && !p.Replaced {
			return p.Alive
		}
	}
	return false
}

// describeViews is the masters' answers in one line, for a timeout.
func describeViews(views []MasterView) string {
	var parts []string
	for _, v := range views {
		if v.Err != nil {
			parts = append(parts, v.Instance+": no answer")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %s, leader %d, term %d, acting %v", v.Instance, v.Role, v.Leader, v.Term, v.Acting))
	}
	return strings.Join(parts, "; ")
}

func masterName(id int) string {
	return deploy.Instance{Stage: deploy.MasterStage, Index: id}.Name()
}

// sleepCtx waits d unless ctx ends first (then it returns false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	return lifetime.Sleep(ctx, d) == nil
}

// percentile is the nearest-rank p-th percentile (0 < p <= 100) of ds;
// 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := append([]time.Duration(nil), ds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// secs formats a duration in seconds with milliseconds.
func secs(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

func printElectionSummary(w io.Writer, o ElectionOptions, rep *ElectionReport) {
	double, right, during := 0, 0, 0
	for _, kl := range rep.Kills {
		if len(kl.Victims) > 1 {
			double++
		}
		if strings.HasPrefix(kl.Kind, "right-after-election") {
			right++
		}
		if kl.JobRunning {
			during++
		}
	}
	kills, partition := len(rep.Kills), ""
	if kills > 0 && rep.Kills[kills-1].Cut {
		kills, partition = kills-1, " and a partition of the leader"
	}
	fmt.Fprintf(w, "chaos election: %d of %d kills%s (%d double, %d right after an election, %d while the job ran); %d failovers completed\n",
		kills, o.Kills, partition, double, right, during, len(rep.Failovers))
	if len(rep.Failovers) > 0 {
		verdict := "met"
		if !rep.MeetsTarget {
			verdict = "NOT met"
		}
		fmt.Fprintf(w, "chaos election: failover p50 %s, p99 %s, max %s (target max < %s: %s)\n",
			secs(rep.P50), secs(rep.P99), secs(rep.Max), o.Target, verdict)
		fmt.Fprintf(w, "chaos election: every master, restarted victims included, agreeing (%d timed): p50 %s, max %s\n",
			len(rep.Rejoins), secs(percentile(rep.Rejoins, 50)), secs(rep.RejoinMax))
	}
	masters := map[string]bool{}
	for _, iv := range rep.Intervals {
		masters[iv.Instance] = true
	}
	fmt.Fprintf(w, "chaos election: violations: %d (Status: %d rounds of every master; logs: %d acting intervals of %d masters)\n",
		len(rep.Violations), rep.StatusRounds, len(rep.Intervals), len(masters))
	for _, v := range rep.Violations {
		fmt.Fprintf(w, "  VIOLATION %s\n", v)
	}
	for _, n := range rep.LogNotes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	switch {
	case rep.SubmitErr != nil:
		fmt.Fprintf(w, "chaos election: job: FAIL: %v\n", rep.SubmitErr)
	case rep.Equal:
		fmt.Fprintf(w, "chaos election: job: PASS, %s (%s)\n", outputsMatch(o.Queries), secs(rep.Elapsed))
	default:
		fmt.Fprintf(w, "chaos election: job: FAIL, outputs differ from the reference:\n    %s\n", strings.Join(rep.Diffs, "\n    "))
	}
	printVersions(w, "chaos election", rep.Versions)
	if len(rep.Processes) > 0 {
		killed := map[string]int{}
		for _, kl := range rep.Kills {
			for _, v := range kl.Victims {
				killed[v]++
			}
		}
		var unexpected []string
		for _, p := range rep.Processes {
			if !p.Replaced && p.Restarts > killed[p.Instance] {
				unexpected = append(unexpected, fmt.Sprintf("%s %d", p.Instance, p.Restarts-killed[p.Instance]))
			}
		}
		if len(unexpected) > 0 {
			fmt.Fprintf(w, "chaos election: restarts beyond the kills (a process died by itself, or stayed silent until the masters replaced it, as a cut-off master does): %s\n", strings.Join(unexpected, ", "))
		}
	}
	if rep.StopErr != nil {
		fmt.Fprintf(w, "chaos election: stopping the cluster: %v\n", rep.StopErr)
	}
}
