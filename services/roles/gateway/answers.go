package gateway

import (
	"slices"
	"sort"
	"time"

	"github.com/wololo/wololo/services/dataflow/schema"
)

// DefaultMaxAnswerBytes is the most bytes a job's answers (its result
// files together) may be for the gateway to hold them (--max-answer-bytes);
// past it the job fails. It is one operator's --max-held-bytes
// (sqlops.DefaultMaxHeldBytes): a job of one query gets no less than it
// did, a job of sixteen no longer sixteen times as much.
const DefaultMaxAnswerBytes = 256 << 20

// DefaultClientMaxAnswerBytes is the most bytes of answers the gateway
// holds for one client, its finished jobs' together
// (--client-max-answer-bytes); past it the client's oldest finished jobs
// are dropped. Four jobs at --max-answer-bytes.
const DefaultClientMaxAnswerBytes = 1 << 30

// answers are a done job's results as the gateway holds them: each result
// file (NAME.csv) and its data rows, counted once when the results came
// in or were recovered (answersOf), never when a client asks, and their
// bytes together, which the bounds on held answers count.
type answers struct {
	files map[string][]byte
	rows  map[string]int64
	bytes int64
}

// countRows counts a result file's data rows (schema.ResultRows). It is
// a variable so that a test can see when rows are counted.
var countRows = schema.ResultRows

// answerBytes is the bytes of the result files names in records together.
// It reads only their lengths, so that a job over --max-answer-bytes costs
// nothing more to refuse.
func answerBytes(names []string, records map[string][]byte) int64 {
	var n int64
	for _, name := range names {
		n += int64(len(records[schema.ResultRecord(name)]))
	}
	return n
}

// answersOf makes the answers of the result files names in records,
// counting each one's rows. It takes time in proportion to the answers:
// call it with no lock held.
func answersOf(names []string, records map[string][]byte) *answers {
	a := &answers{files: make(map[string][]byte, len(names)), rows: make(map[string]int64, len(names))}
	for _, name := range names {
		data := records[schema.ResultRecord(name)]
		a.files[name] = data
		a.rows[name] = int64(countRows(data))
		a.bytes += int64(len(data))
	}
	return a
}

// heldAnswers is what evictAnswers needs to know of a finished job whose
// answers the gateway holds.
type heldAnswers struct {
	id       string
	bytes    int64
	finished time.Time
}

// evictAnswers decides which of a client's finished jobs (held, the new
// job not among them) to drop so that their answers and the new job's
// (fresh bytes) are at most limit together: the oldest finished first
// (then by id), none while they fit. It is pure. The new job is never
// among them: its answers alone fit (--max-answer-bytes is at most
// --client-max-answer-bytes), and it is the one the client is waiting for.
func evictAnswers(held []heldAnswers, fresh, limit int64) []string {
	total := fresh
	for _, h := range held {
		total += h.bytes
	}
	if total <= limit {
		return nil
	}
	held = slices.Clone(held)
	sort.Slice(held, func(a, b int) bool {
		if !held[a].finished.Equal(held[b].finished) {
			return held[a].finished.Before(held[b].finished)
		}
		return held[a].id < held[b].id
	})
	var out []string
	for _, h := range held {
		if total <= limit {
			break
		}
		out = append(out, h.id)
		total -= h.bytes
	}
	return out
}

// finish records a job's answers (the sink's final commit holds them) and
// drops, here and durably, the owner's oldest finished jobs whose answers
// would put the owner's past limit (--client-max-answer-bytes) with them
// (evictAnswers). The decision and the drops are made under js.mu, so two
// of a client's jobs finishing at once do not both count a job that one of
// them drops. It reports whether the job became done (it was neither done
// nor failed), and returns the dropped jobs, for their drop everywhere
// else. A failed job keeps no answers, and drops nothing.
func (js *jobs) finish(j *job, a *answers, finished time.Time, limit int64) (done bool, dropped []string) {
	js.mu.Lock()
	defer js.mu.Unlock()
	held, done := j.finish(a, finished)
	if !held {
		return false, nil
	}
	var others []heldAnswers
	for _, o := range js.byID {
		if o == j || o.owner != j.owner {
			continue
		}
		o.mu.Lock()
		if o.answers != nil {
			others = append(others, heldAnswers{id: o.id, bytes: o.answers.bytes, finished: o.finished})
		}
		o.mu.Unlock()
	}
	for _, id := range evictAnswers(others, a.bytes, limit) {
		if err := js.dropLocked(id); err != nil {
			js.log.Error("dropping a finished job for the answers of a newer one", "job", id, "owner", j.owner, "for", j.id, "error", err)
		} else {
			js.log.Info("finished job dropped: its client's answers held would pass its limit with a newer job's", "job", id, "owner", j.owner, "for", j.id, "limit", limit, "flag", "--client-max-answer-bytes")
		}
		dropped = append(dropped, id)
	}
	return done, dropped
}
