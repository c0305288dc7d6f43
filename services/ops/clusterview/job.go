package clusterview

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
)

// JobStages is where the graph stands on one job (its internal id) in a
// snapshot of top: per stage, upstream first, its instances, those that
// did not answer, the rows its answering instances applied for the job,
// whether every instance finished it, and the job's channels from it
// that hold unacknowledged batches with their links' last errors
// (StageProgress.backlog, from the same Status answers: no call more). It
// is what a client is told of a job that runs (JobService's Job.stages),
// so that one waiting on a stopped shard, or on a channel its receiver
// never acknowledges, can say which.
func JobStages(top deploy.Topology, snap *wololov1.ClusterGetResponse, jobID string) []*wololov1.StageProgress {
	byName := map[string]*wololov1.ClusterProcess{}
	for _, p := range snap.GetProcesses() {
		byName[p.GetInstance()] = p
	}
	out := make([]*wololov1.StageProgress, 0, len(top.Stages))
	for _, stage := range top.Stages {
		sp := &wololov1.StageProgress{Stage: stage.Name, Instances: int32(stage.Replicas)}
		finished := 0
		for i := 0; i < stage.Replicas; i++ {
			name := deploy.Instance{Stage: stage.Name, Index: i}.Name()
			p := byName[name]
			if p == nil || p.GetState() == Unreachable {
				sp.Unreachable = append(sp.Unreachable, name)
				continue
			}
			for _, j := range p.GetStatus().GetJobs() {
				if j.GetJobId() != jobID {
					continue
				}
				sp.RowsIn += j.GetRowsIn()
				if j.GetFinished() {
					finished++
				}
				for _, o := range j.GetOutputs() {
					if o.GetOutboxDepth() > 0 {
						sp.Backlog = append(sp.Backlog, &wololov1.ChannelBacklog{Stream: o.GetStream(), Sender: name, Receiver: o.GetReceiver(),
							Unacknowledged: o.GetOutboxDepth(), Connected: o.GetConnected(), LastError: o.GetLastError()})
					}
				}
			}
		}
		sp.Finished = stage.Replicas > 0 && finished == stage.Replicas
		sp.Backlog, sp.BacklogMore = worstBacklog(sp.Backlog)
		out = append(out, sp)
	}
	return out
}

// backlogListed is how many channels a StageProgress lists in its
// backlog, to keep a job's progress report small.
const backlogListed = 8

// worstBacklog is the channels of b that a StageProgress lists: those with
// a last error first, then the most unacknowledged batches, at most
// backlogListed, and how many more there are.
func worstBacklog(b []*wololov1.ChannelBacklog) ([]*wololov1.ChannelBacklog, int32) {
	slices.SortStableFunc(b, func(x, y *wololov1.ChannelBacklog) int {
		if (x.GetLastError() != "") != (y.GetLastError() != "") {
			if x.GetLastError() != "" {
				return -1
			}
			return 1
		}
		return cmp.Compare(y.GetUnacknowledged(), x.GetUnacknowledged())
	})
	if len(b) <= backlogListed {
		return b, 0
	}
	return b[:backlogListed], int32(len(b) - backlogListed)
}

// DefaultQueries are the names of the default queries (queries.Names),
// q1..q4, and DefaultQueriesLabel how QueriesLabel shortens them: the
// first and the last.
var (
	DefaultQueries      = queries.Names
	DefaultQueriesLabel = DefaultQueries[0] + ".." + DefaultQueries[len(DefaultQueries)-1]
)

// queriesLabelMax is about how long a QueriesLabel gets before it names
// the rest by their number.
const queriesLabelMax = 40

// QueriesLabel is how an operator's view shows a job's queries (its
// ClusterJob.queries): "q1..q4" for the default queries, else their names
// joined by ",", the ones past about 40 characters counted ("a,b +3");
// "-" for none (a gateway that does not say).
func QueriesLabel(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	if slices.Equal(names, DefaultQueries) {
		return DefaultQueriesLabel
	}
	label := names[0]
	for i, n := range names[1:] {
		if len(label)+1+len(n) > queriesLabelMax {
			return fmt.Sprintf("%s +%d", label, len(names)-1-i)
		}
		label += "," + n
	}
	return label
}
