package gateway

import (
	"slices"
	"sort"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/ops/clusterview"
)

// ClusterJobs describes every job the gateway holds, for the operators'
// view of the deployment (services/ops/clusterview): its internal id, its
// owner and name, its queries' names, where its lifecycle stands and how much of its input is
// in the graph, and its state named from those facts ("uploading",
// "running", "done" or "failed": clusterview.JobStateOf, the one naming of
// it), which the view shows and the gateway's metrics label each job with
// (wololo_gateway_job_state{state=...}). It does not count as client activity.
func (g *Gateway) ClusterJobs() []*wololov1.ClusterJob {
	g.jobs.mu.Lock()
	all := make([]*job, 0, len(g.jobs.byID))
	for _, j := range g.jobs.byID {
		all = append(all, j)
	}
	g.jobs.mu.Unlock()
	sort.Slice(all, func(a, b int) bool { return all[a].created.Before(all[b].created) })
	out := make([]*wololov1.ClusterJob, 0, len(all))
	for _, j := range all {
		out = append(out, j.summary())
	}
	return out
}

// summary is the job as ClusterJobs describes it.
func (j *job) summary() *wololov1.ClusterJob {
	j.mu.Lock()
	defer j.mu.Unlock()
	end := time.Now()
	if !j.finished.IsZero() {
		end = j.finished
	}
	s := &wololov1.ClusterJob{JobId: j.id, Client: j.owner, Name: j.name, BytesTotal: j.bytes, ElapsedSeconds: end.Sub(j.created).Seconds()}
	s.BytesUploaded = j.uploaded()
	s.JobState, s.InputComplete = j.state, j.inputClosed()
	s.State = clusterview.JobStateOf(s)
	s.Queries = slices.Clone(j.queries)
	if st := j.standing; st != nil {
		s.Standing, s.EpochsPublished = true, st.versions.published
		for _, q := range st.versions.latest {
			s.Latest = append(s.Latest, &wololov1.QueryVersion{Name: q.Name, Rows: q.Rows, Added: q.Added, Removed: q.Removed})
		}
	}
	return s
}
