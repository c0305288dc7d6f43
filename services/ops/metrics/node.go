package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// NodeSource is where a graph node's collector reads, at scrape time:
// the process's Status (its jobs only once it has recovered, as Status
// reports them), and what a job's streams are called in metrics.
type NodeSource struct {
	Status func() *wololov1.GetResponse
	// Streams, given a job, is what its streams are called in metrics and
	// whether they must be renamed (stage.Runtime.MetricStreams): a job
	// of SQL queries has streams named after its client's queries and
	// keys, which no series may show. Nil: every job's streams keep their
	// names (the tests' collectors).
	Streams func(job string) (names map[string]string, rename bool)
}

// UnnamedStream is the stream label of a renamed job's stream that its
// names do not list: it shows nothing of the stream's own name.
const UnnamedStream = "unknown"

// streamLabel is the stream label of stream, given what the job's
// streams are called (NodeSource.Streams).
func streamLabel(stream string, names map[string]string, rename bool) string {
	if !rename {
		return stream
	}
	if n, ok := names[stream]; ok {
		return n
	}
	return UnnamedStream
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(Namespace+"_"+name, help, labels, nil)
}

// The node's metric families.
var (
	descJobs        = desc("jobs", "Jobs this process holds.")
	descJobFinished = desc("job_finished", "1 once the job has finished at this process.", LabelJob)
	descRowsIn      = desc("job_rows_in_total", "Rows of the job applied from every input, replays of the state log after a restart included.", LabelJob)
	descRowsOut     = desc("job_rows_out_total", "Rows of the job emitted by its operators, chained operators' internal hand-offs excluded.", LabelJob)

	descSentBatches = desc("channel_sent_batches_total", "Batches committed to an output channel (numbered once, resends not counted).", LabelJob, "stream", "receiver")
	descSentRows    = desc("channel_sent_rows_total", "Rows committed to an output channel.", LabelJob, "stream", "receiver")
	descSentBytes   = desc("channel_sent_bytes_total", "Encoded bytes of the row batches committed to an output channel.", LabelJob, "stream", "receiver")
	descOutbox      = desc("outbox_depth_batches", "Batches of an output channel committed and not yet acknowledged.", LabelJob, "stream", "receiver")
	descLag         = desc("channel_lag_batches", "Last sequence number of an output channel minus the receiver's watermark as its last acknowledgement said.", LabelJob, "stream", "receiver")
	descConnected   = desc("channel_connected", "1 while the output channel's stream is up.", LabelJob, "stream", "receiver")

	descRecvBatches = desc("channel_received_batches_total", "Batches of an input channel applied and committed (duplicates and replays not counted).", LabelJob, "stream", "sender")
	descRecvRows    = desc("channel_received_rows_total", "Rows of an input channel applied and committed.", LabelJob, "stream", "sender")
	descRecvBytes   = desc("channel_received_bytes_total", "Encoded bytes of the row batches of an input channel applied and committed.", LabelJob, "stream", "sender")
	descWatermark   = desc("channel_watermark", "Highest sequence number of an input channel applied.", LabelJob, "stream", "sender")

	descStallWaits   = desc("backpressure_waits_total", "Times the job's emitters (stage actor, upload) waited for room in a full outbox.", LabelJob)
	descStallSeconds = desc("backpressure_wait_seconds_total", "Time the job's emitters waited for room in a full outbox.", LabelJob)

	descCommits     = desc("store_commits_total", "Store commits (application steps) written.")
	descCommitBytes = desc("store_committed_bytes_total", "Bytes the store's commits wrote.")
	descSyncs       = desc("store_syncs_total", "Syncs of the store to stable storage (fewer than commits when commits were grouped).")

	descIncarnation = desc("process_incarnation", "This start's incarnation number (grows with every start, even on an empty store: at least the start's Unix time in ms).")
	descRecovering  = desc("process_recovering", "1 while the process loads its store and replays its state.")
	descAnnounced   = desc("process_announced", "1 once this incarnation has announced itself to every receiver.")
	descFenced      = desc("fenced_senders", "Sender instances this process refuses now as older incarnations than the newest it has seen of them: zombies, or real instances after a forged claim above them (Status lists which).")
	descRecovery    = desc("recovery_seconds", "How long this start's recovery took, by phase: load (reading the store), replay (rebuilding the jobs from it).", "phase")
)

// nodeCollector is a graph node's collector.
type nodeCollector struct{ src NodeSource }

// NewNodeCollector returns the collector of a graph node.
func NewNodeCollector(src NodeSource) prometheus.Collector { return nodeCollector{src} }

func (nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		descJobs, descJobFinished, descRowsIn, descRowsOut,
		descSentBatches, descSentRows, descSentBytes, descOutbox, descLag, descConnected,
		descRecvBatches, descRecvRows, descRecvBytes, descWatermark,
		descStallWaits, descStallSeconds, descCommits, descCommitBytes, descSyncs,
		descIncarnation, descRecovering, descAnnounced, descRecovery, descFenced,
	} {
		ch <- d
	}
}

func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	st := c.src.Status()
	gauge(descIncarnation, float64(st.GetIncarnation()))
	gauge(descRecovering, Bool(st.GetRecovering()))
	gauge(descAnnounced, Bool(st.GetAnnounced()))
	gauge(descFenced, float64(len(st.GetFenced())))
	counter(descCommits, float64(st.GetStore().GetCommits()))
	counter(descCommitBytes, float64(st.GetStore().GetBytes()))
	counter(descSyncs, float64(st.GetStore().GetSyncs()))
	if st.GetRecovering() {
		return // no job, and no recovery time, until it has recovered
	}
	gauge(descRecovery, st.GetRecoveryLoadSeconds(), "load")
	gauge(descRecovery, st.GetRecoveryReplaySeconds(), "replay")
	jobs := st.GetJobs()
	gauge(descJobs, float64(len(jobs)))
	for _, j := range jobs {
		id := j.GetJobId()
		var names map[string]string
		var rename bool
		if c.src.Streams != nil {
			names, rename = c.src.Streams(id)
		}
		gauge(descJobFinished, Bool(j.GetFinished()), id)
		counter(descRowsIn, float64(j.GetRowsIn()), id)
		counter(descRowsOut, float64(j.GetRowsOut()), id)
		counter(descStallWaits, float64(j.GetBackpressureWaits()), id)
		counter(descStallSeconds, j.GetBackpressureSeconds(), id)
		for _, o := range j.GetOutputs() {
			l := []string{id, streamLabel(o.GetStream(), names, rename), o.GetReceiver()}
			counter(descSentBatches, float64(o.GetBatches()), l...)
			counter(descSentRows, float64(o.GetRows()), l...)
			counter(descSentBytes, float64(o.GetBytes()), l...)
			gauge(descOutbox, float64(o.GetOutboxDepth()), l...)
			gauge(descLag, float64(Lag(o)), l...)
			gauge(descConnected, Bool(o.GetConnected()), l...)
		}
		for _, in := range j.GetInputs() {
			l := []string{id, streamLabel(in.GetStream(), names, rename), in.GetSender()}
			counter(descRecvBatches, float64(in.GetBatches()), l...)
			counter(descRecvRows, float64(in.GetRows()), l...)
			counter(descRecvBytes, float64(in.GetBytes()), l...)
			gauge(descWatermark, float64(in.GetWatermark()), l...)
		}
	}
}

// Bool is a gauge's value of a flag: 1 or 0.
func Bool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Lag is how many batches of an output channel its receiver has not
// acknowledged: its last sequence number less the last acknowledgement.
func Lag(o *wololov1.OutputChannel) uint64 {
	return o.GetLastSeq() - min(o.GetAcked(), o.GetLastSeq())
}
