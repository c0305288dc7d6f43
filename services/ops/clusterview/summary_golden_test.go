package clusterview

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// TestGoldenSummary keeps the state of a deployment of the default
// topology (every process's Status answer, or why there is none, and the
// gateway's jobs) as testdata/summary.txt changes it, summarises it at each
// "snapshot" against the snapshot before, and compares every summary
// (processes, stages, streams, masters, jobs and where each job stands per
// stage) with testdata/summary.golden. Rewrite it with -update after a
// change meant to alter the summaries.
func TestGoldenSummary(t *testing.T) {
	c := &scriptCluster{top: deploy.Default(), answers: map[string]*Answer{}}
	t0 := time.Unix(1000, 0)
	testkit.GoldenScript(t, "summary.txt", "summary.golden", func(w io.Writer, cmd testkit.Command) error {
		return c.do(w, t0, cmd.Args)
	})
}

type scriptCluster struct {
	top     deploy.Topology
	answers map[string]*Answer
	jobs    []*wololov1.ClusterJob
	prev    Sample
}

// status is the instance's answer, made serving if it had none.
func (c *scriptCluster) status(instance string) *wololov1.GetResponse {
	a := c.answers[instance]
	if a == nil {
		a = &Answer{Instance: instance}
		c.answers[instance] = a
	}
	if a.Status == nil {
		a.Status, a.Err = &wololov1.GetResponse{Instance: instance}, nil
	}
	return a.Status
}

// jobOf is the instance's progress on a job, added if it had none.
func (c *scriptCluster) jobOf(instance, job string) *wololov1.JobProgress {
	st := c.status(instance)
	for _, j := range st.Jobs {
		if j.JobId == job {
			return j
		}
	}
	j := &wololov1.JobProgress{JobId: job}
	st.Jobs = append(st.Jobs, j)
	return j
}

// fields reads "name=value" arguments, values as int64 unless floats
// names them.
func fields(args []string, ints map[string]*int64, floats map[string]*float64) error {
	for _, a := range args {
		name, value, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("want name=value, not %q", a)
		}
		var err error
		switch {
		case ints[name] != nil:
			*ints[name], err = strconv.ParseInt(value, 10, 64)
		case floats[name] != nil:
			*floats[name], err = strconv.ParseFloat(value, 64)
		default:
			return fmt.Errorf("unknown field %q", name)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", a, err)
		}
	}
	return nil
}

func (c *scriptCluster) do(w io.Writer, t0 time.Time, args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("want COMMAND ARGS...")
	}
	in := args[1]
	switch args[0] {
	case "serving", "recovering":
		c.status(in).Recovering = args[0] == "recovering"
	case "unreachable":
		c.answers[in] = &Answer{Instance: in, Err: errors.New(strings.Join(args[2:], " "))}
	case "progress":
		// progress INSTANCE JOB rows-in=N rows-out=N stall=S [finished]
		if len(args) < 3 {
			return fmt.Errorf("progress INSTANCE JOB FIELDS")
		}
		j := c.jobOf(in, args[2])
		rest := args[3:]
		j.Finished = slices.Contains(rest, "finished")
		rest = slices.DeleteFunc(slices.Clone(rest), func(s string) bool { return s == "finished" })
		return fields(rest, map[string]*int64{"in": &j.RowsIn, "out": &j.RowsOut}, map[string]*float64{"stall": &j.BackpressureSeconds})
	case "output":
		// output INSTANCE JOB STREAM->RECEIVER rows=N bytes=N depth=N last=N acked=N
		if len(args) < 4 {
			return fmt.Errorf("output INSTANCE JOB STREAM->RECEIVER FIELDS")
		}
		stream, receiver, _ := strings.Cut(args[3], "->")
		j := c.jobOf(in, args[2])
		var o *wololov1.OutputChannel
		for _, x := range j.Outputs {
			if x.Stream == stream && x.Receiver == receiver {
				o = x
			}
		}
		if o == nil {
			o = &wololov1.OutputChannel{Stream: stream, Receiver: receiver}
			j.Outputs = append(j.Outputs, o)
		}
		var last, acked int64
		if err := fields(args[4:], map[string]*int64{"rows": &o.Rows, "bytes": &o.Bytes, "depth": &o.OutboxDepth, "last": &last, "acked": &acked}, nil); err != nil {
			return err
		}
		o.LastSeq, o.Acked = uint64(last), uint64(acked)
	case "master":
		// master INSTANCE ROLE leader=N term=N restarts-done=N [acting] [restarted=INSTANCE:N...]
		if len(args) < 3 {
			return fmt.Errorf("master INSTANCE ROLE FIELDS")
		}
		id, err := deploy.ParseInstance(in)
		if err != nil {
			return err
		}
		ms := &wololov1.MasterStatus{Id: int32(id.Index), ElectionRole: args[2]}
		c.status(in).Master = ms
		var leader, term int64
		var rest []string
		for _, a := range args[3:] {
			switch {
			case a == "acting":
				ms.Acting = true
			case strings.HasPrefix(a, "restarted="):
				name, n, _ := strings.Cut(strings.TrimPrefix(a, "restarted="), ":")
				count, err := strconv.Atoi(n)
				if err != nil {
					return fmt.Errorf("%s: %w", a, err)
				}
				ms.Processes = append(ms.Processes, &wololov1.SupervisedProcess{Instance: name, Restarts: int32(count)})
			default:
				rest = append(rest, a)
			}
		}
		if err := fields(rest, map[string]*int64{"leader": &leader, "term": &term, "restarts-done": &ms.RestartsDone}, nil); err != nil {
			return err
		}
		ms.Leader, ms.Term = int32(leader), uint64(term)
	case "job":
		// job ID NAME STATE uploaded=N total=N [queries=A,B]: STATE is what
		// the gateway reports (gatewayFacts), which the view names again;
		// the queries' names pass through.
		if len(args) < 4 {
			return fmt.Errorf("job ID NAME STATE FIELDS")
		}
		idx := slices.IndexFunc(c.jobs, func(j *wololov1.ClusterJob) bool { return j.JobId == in })
		if idx < 0 {
			c.jobs = append(c.jobs, &wololov1.ClusterJob{JobId: in})
			idx = len(c.jobs) - 1
		}
		j := c.jobs[idx]
		facts, ok := gatewayFacts[args[3]]
		if !ok {
			return fmt.Errorf("job state %q: want uploading, running, done or failed", args[3])
		}
		j.Name, j.JobState, j.InputComplete = args[2], facts.state, facts.complete
		rest := args[4:]
		if n := len(rest); n > 0 && strings.HasPrefix(rest[n-1], "queries=") {
			j.Queries, rest = strings.Split(strings.TrimPrefix(rest[n-1], "queries="), ","), rest[:n-1]
		}
		return fields(rest, map[string]*int64{"uploaded": &j.BytesUploaded, "total": &j.BytesTotal}, nil)
	case "snapshot":
		d, err := time.ParseDuration(in)
		if err != nil {
			return err
		}
		c.snapshot(w, t0.Add(d))
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
	return nil
}

// snapshot summarises the cluster at now and writes the summary.
func (c *scriptCluster) snapshot(w io.Writer, now time.Time) {
	var answers []Answer
	for _, in := range append(c.top.Instances(), c.top.MasterInstances()...) {
		if a := c.answers[in.Name()]; a != nil {
			answers = append(answers, *a)
		}
	}
	snap, cur := Summarize(c.top, answers, c.jobs, c.prev, now)
	c.prev = cur
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	fmt.Fprintf(w, "interval %ss\n", num(snap.IntervalSeconds))
	for _, p := range snap.Processes {
		line := fmt.Sprintf("process %s (stage %s): %s", p.Instance, p.Stage, p.State)
		if p.Error != "" {
			line += ": " + p.Error
		}
		fmt.Fprintln(w, line)
	}
	for _, s := range snap.Stages {
		chain := ""
		fmt.Fprintf(w, "stage %s%s: %s; %d instances (%d serving, %d recovering, %d unreachable); rows in %s/s, out %s/s; backpressure %s; outbox %d, max lag %d; restarts %d\n",
			s.Name, chain, s.Health, s.Instances, s.Serving, s.Recovering, s.Unreachable, num(s.RowsInPerSecond), num(s.RowsOutPerSecond), num(s.Backpressure), s.OutboxDepth, s.MaxLagBatches, s.Restarts)
	}
	for _, s := range snap.Streams {
		fmt.Fprintf(w, "stream %s %s -> %s: %d rows, %s rows/s, %s bytes/s; outbox %d, max lag %d\n",
			s.Name, s.From, s.To, s.Rows, num(s.RowsPerSecond), num(s.BytesPerSecond), s.OutboxDepth, s.MaxLagBatches)
	}
	for _, m := range snap.Masters {
		if !m.Reachable {
			fmt.Fprintf(w, "master %s: unreachable\n", m.Instance)
			continue
		}
		fmt.Fprintf(w, "master %s: %s, leader %d, term %d, acting %v, %d restarts done\n", m.Instance, m.ElectionRole, m.Leader, m.Term, m.Acting, m.RestartsDone)
	}
	for _, j := range snap.Jobs {
		fmt.Fprintf(w, "job %s (%s): %s, progress %s, eta %ss, %d instances finished", j.JobId, j.Name, j.State, num(j.Progress), num(j.EtaSeconds), j.InstancesFinished)
		if len(j.Queries) > 0 {
			fmt.Fprintf(w, ", queries %s", strings.Join(j.Queries, ","))
		}
		fmt.Fprintln(w)
		for _, sp := range JobStages(c.top, snap, j.JobId) {
			line := fmt.Sprintf("  at %s: %d instances, %d rows in, finished %v", sp.Stage, sp.Instances, sp.RowsIn, sp.Finished)
			if len(sp.Unreachable) > 0 {
				line += ", unreachable " + strings.Join(sp.Unreachable, " ")
			}
			fmt.Fprintln(w, line)
		}
	}
}

// gatewayFacts are what a gateway reports of a job in each state the
// script names: its lifecycle and whether both files are in the graph.
var gatewayFacts = map[string]struct {
	state    wololov1.JobState
	complete bool
}{
	"uploading": {wololov1.JobState_JOB_STATE_UPLOADING, false},
	"running":   {wololov1.JobState_JOB_STATE_RUNNING, true},
	"done":      {wololov1.JobState_JOB_STATE_DONE, true},
	"failed":    {wololov1.JobState_JOB_STATE_FAILED, true},
}
