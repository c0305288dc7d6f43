package gateway

// Counters counts what the gateway does, for /metrics
// (services/ops/metrics.Gateway is one): its upload calls, the bytes and
// records they committed, and how its jobs ended. Its methods are called
// outside the gateway's locks, once per upload call, commit and job end.
// Config.Counters nil counts nothing.
type Counters interface {
	// JobCreated counts a new job (not a resumed one).
	JobCreated()
	// JobEnded counts how a job ended, once per job: OutcomeDone,
	// OutcomeFailed, or OutcomeDeleted (deleted, by its client or for
	// inactivity, before it was done or failed). A job recovered from the
	// store as done or failed is not counted again.
	JobEnded(outcome string)
	// Upload counts one upload call of file (matches, players) that took
	// the file's upload slot, by how it ended: UploadComplete,
	// UploadPaused (the client closed its stream; it resumes from the
	// last acknowledged offset) or UploadBroken (an error ended it).
	Upload(file, outcome string)
	// Committed counts what one commit of an upload of file added: bytes
	// of the file, data records read (malformed ones included) and
	// malformed records skipped.
	Committed(file string, bytes, records, malformed int64)
}

// How a job ends (Counters.JobEnded).
const (
	OutcomeDone    = "done"
	OutcomeFailed  = "failed"
	OutcomeDeleted = "deleted"
)

// How an upload call ends (Counters.Upload).
const (
	UploadComplete = "complete"
	UploadPaused   = "paused"
	UploadBroken   = "broken"
)

// noCounters counts nothing.
type noCounters struct{}

func (noCounters) JobCreated()                           {}
func (noCounters) JobEnded(string)                       {}
func (noCounters) Upload(string, string)                 {}
func (noCounters) Committed(string, int64, int64, int64) {}
