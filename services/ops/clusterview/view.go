// Package clusterview builds the one view of a whole deployment that the
// gateway serves (wololo.v1.Cluster/Get) and that `wololo top` and the
// gateway's web page draw: every process's and every master's Status,
// summed per task and per stream between tasks, with rates over the time
// since the previous snapshot, the masters' election, and the gateway's
// jobs with their progress.
//
// Summarize is pure: Status answers and job summaries in, a snapshot out.
// Gatherer does the I/O around it (one Status call per process, at most
// one gathering at a time, a short cache so that many viewers cost the
// processes no more than one). It reads; it changes nothing anywhere.
package clusterview

import (
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/ops/metrics"
)

// Process states of a snapshot.
const (
	Serving     = "serving"
	Recovering  = "recovering"
	Unreachable = "unreachable"
)

// Stage health.
const (
	HealthOK         = "ok"
	HealthBackedUp   = "backed-up"
	HealthRecovering = "recovering"
	HealthDegraded   = "degraded"
	HealthDown       = "down"
)

// Job states.
const (
	JobUploading = "uploading"
	JobRunning   = "running"
	JobDone      = "done"
	JobFailed    = "failed"
)

// BackedUp is the share of an interval a stage's emitters must have waited
// for room, per instance, for the stage to count as backed up.
const BackedUp = 0.5

// Answer is one process's reply to Status/Get, or why there is none.
type Answer struct {
	Instance string
	Status   *wololov1.GetResponse // nil: unreachable
	Err      error
}

// Sample is what a snapshot's rates are computed from: counters at a
// moment, per aggregate (a stage's rows in, a stream's rows) and, within
// it, per instance and job, so that a restarted process (its counters
// start again) or a dropped job (its counters vanish) never makes a rate
// negative or jump. The zero Sample (no previous snapshot) gives no rates.
type Sample struct {
	At       time.Time
	counters map[string]map[string]float64 // aggregate → "instance/job" → value
	seen     map[string]bool               // the instances that answered
	uploaded map[string]int64              // per job
}

func (s Sample) add(agg, instance, job string, v float64) {
	m := s.counters[agg]
	if m == nil {
		m = map[string]float64{}
		s.counters[agg] = m
	}
	m[instance+"/"+job] += v
}

// rate is an aggregate's increase per second since prev: per instance and
// job, the increase of its counter, or all of it when it went down (the
// process restarted) or is new (a new job); nothing for an instance that
// did not answer last time.
func (s Sample) rate(prev Sample, agg string, secs float64) float64 {
	if secs <= 0 || prev.counters == nil {
		return 0
	}
	total := 0.0
	for key, v := range s.counters[agg] {
		instance, _, _ := strings.Cut(key, "/")
		if !prev.seen[instance] {
			continue
		}
		before, ok := prev.counters[agg][key]
		switch {
		case !ok, v < before:
			total += v
		default:
			total += v - before
		}
	}
	return total / secs
}

// Summarize builds a snapshot of top (a planned topology) from every
// process's answer and the gateway's jobs (kept in the gateway's order,
// oldest first), with rates against prev, and returns it with the sample
// the next one is to be compared with.
func Summarize(top deploy.Topology, answers []Answer, jobs []*wololov1.ClusterJob, prev Sample, now time.Time) (*wololov1.ClusterGetResponse, Sample) {
	cur := Sample{At: now, counters: map[string]map[string]float64{}, seen: map[string]bool{}, uploaded: map[string]int64{}}
	secs := 0.0
	if prev.counters != nil && now.After(prev.At) {
		secs = now.Sub(prev.At).Seconds()
	}
	out := &wololov1.ClusterGetResponse{Taken: timestamppb.New(now), IntervalSeconds: secs}

	byName := map[string]*wololov1.GetResponse{}
	restarts := map[string]int32{} // per instance, the largest any master reports
	for _, a := range answers {
		p := &wololov1.ClusterProcess{Instance: a.Instance, State: Unreachable, Status: a.Status}
		if in, err := deploy.ParseInstance(a.Instance); err == nil {
			p.Stage = in.Stage
		}
		switch {
		case a.Status == nil:
			if a.Err != nil {
				p.Error = a.Err.Error()
			}
		case a.Status.GetRecovering():
			p.State = Recovering
		default:
			p.State = Serving
		}
		if a.Status != nil {
			byName[a.Instance] = a.Status
			cur.seen[a.Instance] = true
			for _, sp := range a.Status.GetMaster().GetProcesses() {
				restarts[sp.GetInstance()] = max(restarts[sp.GetInstance()], sp.GetRestarts())
			}
		}
		out.Processes = append(out.Processes, p)
	}

	// Streams between tasks, and the counters they are summed from: the
	// jobs' plans' channels, by name, as they are first seen.
	streams := map[string]*wololov1.ClusterStream{}
	finished := map[string]int32{}
	for _, stage := range top.Stages {
		cs := &wololov1.ClusterStage{Name: stage.Name}
		for i := 0; i < stage.Replicas; i++ {
			name := deploy.Instance{Stage: stage.Name, Index: i}.Name()
			cs.Instances++
			cs.Restarts += restarts[name]
			st, ok := byName[name]
			switch {
			case !ok:
				cs.Unreachable++
				continue
			case st.GetRecovering():
				cs.Recovering++
			default:
				cs.Serving++
			}
			for _, j := range st.GetJobs() {
				if j.GetFinished() {
					finished[j.GetJobId()]++
				}
				cur.add("in/"+stage.Name, name, j.GetJobId(), float64(j.GetRowsIn()))
				cur.add("out/"+stage.Name, name, j.GetJobId(), float64(j.GetRowsOut()))
				cur.add("stall/"+stage.Name, name, j.GetJobId(), j.GetBackpressureSeconds())
				for _, o := range j.GetOutputs() {
					lag := int64(metrics.Lag(o))
					cs.OutboxDepth += o.GetOutboxDepth()
					cs.MaxLagBatches = max(cs.MaxLagBatches, lag)
					s := streams[o.GetStream()]
					if s == nil {
						// A channel of a job's plan, by name: listed
						// once per name, whatever the jobs.
						to, err := deploy.ParseInstance(o.GetReceiver())
						if err != nil {
							continue
						}
						s = &wololov1.ClusterStream{Name: o.GetStream(), From: stage.Name, To: to.Stage}
						streams[s.Name] = s
						out.Streams = append(out.Streams, s)
					}
					{
						s.Rows += o.GetRows()
						s.OutboxDepth += o.GetOutboxDepth()
						s.MaxLagBatches = max(s.MaxLagBatches, lag)
						cur.add("rows/"+s.Name, name, j.GetJobId(), float64(o.GetRows()))
						cur.add("bytes/"+s.Name, name, j.GetJobId(), float64(o.GetBytes()))
					}
				}
			}
		}
		cs.RowsInPerSecond = cur.rate(prev, "in/"+stage.Name, secs)
		cs.RowsOutPerSecond = cur.rate(prev, "out/"+stage.Name, secs)
		cs.Backpressure = cur.rate(prev, "stall/"+stage.Name, secs) / float64(max(cs.Instances, 1))
		switch {
		case cs.Unreachable == cs.Instances:
			cs.Health = HealthDown
		case cs.Unreachable > 0:
			cs.Health = HealthDegraded
		case cs.Recovering > 0:
			cs.Health = HealthRecovering
		case cs.Backpressure >= BackedUp:
			cs.Health = HealthBackedUp
		default:
			cs.Health = HealthOK
		}
		out.Stages = append(out.Stages, cs)
	}
	for _, s := range out.Streams {
		s.RowsPerSecond = cur.rate(prev, "rows/"+s.Name, secs)
		s.BytesPerSecond = cur.rate(prev, "bytes/"+s.Name, secs)
	}

	for _, in := range top.MasterInstances() {
		m := &wololov1.ClusterMaster{Instance: in.Name()}
		if st, ok := byName[in.Name()]; ok && st.GetMaster() != nil {
			ms := st.GetMaster()
			m.Reachable, m.ElectionRole, m.Term, m.Leader, m.Acting, m.RestartsDone = true, ms.GetElectionRole(), ms.GetTerm(), ms.GetLeader(), ms.GetActing(), ms.GetRestartsDone()
		}
		out.Masters = append(out.Masters, m)
	}

	for _, j := range jobs {
		cj := proto.Clone(j).(*wololov1.ClusterJob)
		cj.InstancesFinished = finished[cj.JobId]
		cj.State = JobStateOf(cj)
		cur.uploaded[cj.JobId] = cj.BytesUploaded
		cj.EtaSeconds = -1
		switch {
		case cj.State == JobDone:
			cj.Progress, cj.EtaSeconds = 1, 0
		case cj.BytesTotal > 0:
			cj.Progress = float64(cj.BytesUploaded) / float64(cj.BytesTotal)
			if before, ok := prev.uploaded[cj.JobId]; ok && secs > 0 && cj.State == JobUploading {
				if speed := float64(cj.BytesUploaded-before) / secs; speed > 0 {
					cj.EtaSeconds = float64(cj.BytesTotal-cj.BytesUploaded) / speed
				}
			}
		}
		out.Jobs = append(out.Jobs, cj)
	}
	return out, cur
}

// JobStateOf names where a job stands (ClusterJob.state: JobUploading,
// JobRunning, JobDone or JobFailed) from the facts its gateway reports,
// its job_state and input_complete. It is the one naming of a job's
// state: the gateway's ClusterJobs fills State with it, so that every
// reader of a ClusterJob (this view, the gateway's metrics) has it, and
// Summarize names it again from the facts.
func JobStateOf(j *wololov1.ClusterJob) string {
	switch {
	case j.GetJobState() == wololov1.JobState_JOB_STATE_DONE:
		return JobDone
	case j.GetJobState() == wololov1.JobState_JOB_STATE_FAILED:
		return JobFailed
	case j.GetInputComplete():
		return JobRunning
	default:
		return JobUploading
	}
}
