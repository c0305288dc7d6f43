package master

import (
	"fmt"
	"sort"
	"time"

	"github.com/wololo/wololo/services/base/backoff"
)

// Policy tunes a Supervisor. Its backoff fields are a backoff.Policy's,
// under the names the masters have always used.
type Policy struct {
	// Timeout: an instance not seen alive for this long is dead.
	Timeout time.Duration
	// FirstBackoff and MaxBackoff bound the wait between restarts of one
	// instance; it doubles with every restart, and starts again from
	// FirstBackoff after one that stayed up for Stable.
	FirstBackoff, MaxBackoff, Stable time.Duration
	// LoopRestarts restarts within LoopWindow make a crash loop: reported,
	// and retried only at MaxBackoff.
	LoopRestarts int
	LoopWindow   time.Duration
	// RecoveryGrace is how long an instance may answer that it is
	// recovering (loading its store, replaying its state) before it is
	// restarted all the same: a recovery that slow is taken as stuck. Zero
	// gives no grace: an answer "recovering" then counts as no answer.
	RecoveryGrace time.Duration
}

// backoff is the backoff.Policy of every instance.
func (p Policy) backoff() backoff.Policy {
	return backoff.Policy{First: p.FirstBackoff, Max: p.MaxBackoff, Stable: p.Stable, LoopCount: p.LoopRestarts, LoopWindow: p.LoopWindow}
}

// DefaultDetection bounds the time from a process's last answer to its
// restart decision with DefaultPolicy and a Loop of DefaultEvery.
const DefaultDetection = 2 * time.Second

// DefaultPolicy detects a dead or silent process within DefaultDetection:
// silence of Timeout, judged at the next round, DefaultEvery later at most.
var DefaultPolicy = Policy{
	Timeout: DefaultDetection - DefaultEvery, FirstBackoff: 200 * time.Millisecond, MaxBackoff: 10 * time.Second,
	Stable: 30 * time.Second, LoopRestarts: 5, LoopWindow: time.Minute, RecoveryGrace: DefaultRecoveryGrace,
}

// DefaultRecoveryGrace is how long a process may say it is recovering
// before it is restarted (`wololo master --recovery-grace`). A replay takes
// seconds at full scale; a minute leaves room for a slow disk without
// letting a wedged recovery hold its instance forever.
const DefaultRecoveryGrace = time.Minute

// ReasonRecoveringTooLong starts the reason of a restart of a process that
// answered "recovering" for longer than Policy.RecoveryGrace.
const ReasonRecoveringTooLong = "recovering for longer than the grace"

// Cause is why an instance is restarted, in a word (a metric's label).
type Cause string

// The causes of a restart.
const (
	CauseExited            Cause = "exited"
	CauseSilent            Cause = "silent"
	CauseRecoveringTooLong Cause = "recovering-too-long"
)

// Action is a restart the Supervisor asks for.
type Action struct {
	Instance  string
	Cause     Cause
	Reason    string // "exited: ...", "not seen for 2.1s", or ReasonRecoveringTooLong and how long
	CrashLoop bool   // the instance restarts too often; say so loudly
	// KillFirst: the process may still exist (paused, wedged, cut off, or
	// stuck recovering); kill it before starting another.
	KillFirst bool
}

// InstanceState is what the Supervisor knows of an instance, for Status.
type InstanceState struct {
	Instance string
	LastSeen time.Time
	Alive    bool
	// Recovering: it answers, and says it is recovering (Alive too, within
	// the grace).
	Recovering bool
	Restarts   int
	CrashLoop  bool
}

type tracked struct {
	absent   bool // the runtime does not know it (not created yet, removed)
	lastSeen time.Time
	// recovering is when the instance first answered "recovering" in its
	// current stretch of recovery; zero once it serves (or is restarted).
	recovering time.Time
	exited     string // the runtime says the process ended, and how
	total      int
	backoff    *backoff.Backoff
	next       time.Time // no restart before
	restarted  time.Time // when it was last restarted
}

// Supervisor decides restarts from observations. It holds no clock and
// does no I/O; it is not safe for concurrent use.
type Supervisor struct {
	policy Policy
	inst   map[string]*tracked
}

// NewSupervisor watches the given instances, all taken as seen at now.
func NewSupervisor(p Policy, instances []string, now time.Time) *Supervisor {
	s := &Supervisor{policy: p, inst: map[string]*tracked{}}
	for _, in := range instances {
		s.inst[in] = &tracked{lastSeen: now, backoff: backoff.New(p.backoff())}
	}
	return s
}

// Seen records that an instance answered a probe at t: it serves.
func (s *Supervisor) Seen(instance string, t time.Time) {
	if tr, ok := s.inst[instance]; ok && t.After(tr.lastSeen) {
		tr.lastSeen, tr.exited, tr.recovering = t, "", time.Time{}
	}
}

// Recovering records that an instance answered a probe at t, saying it is
// recovering (it does not serve yet). It is alive, not silent, until it has
// been recovering for Policy.RecoveryGrace since its first such answer;
// then Due restarts it. With no grace it is as if it had not answered.
func (s *Supervisor) Recovering(instance string, t time.Time) {
	tr, ok := s.inst[instance]
	if !ok || s.policy.RecoveryGrace <= 0 || !t.After(tr.lastSeen) {
		return
	}
	tr.lastSeen, tr.exited = t, ""
	if tr.recovering.IsZero() {
		tr.recovering = t
	}
}

// Exited records that the runtime reports the instance's process gone.
func (s *Supervisor) Exited(instance, how string) {
	if tr, ok := s.inst[instance]; ok {
		tr.exited, tr.absent = how, false
	}
}

// Listed records whether the runtime knows the instance at all. One it
// does not know (a container not created yet, or removed by hand) cannot
// be started through it, so it is not restarted, only reported; once it
// appears it gets Timeout to show up.
func (s *Supervisor) Listed(instance string, listed bool, now time.Time) {
	tr, ok := s.inst[instance]
	if !ok {
		return
	}
	if tr.absent && listed {
		tr.lastSeen = now
	}
	tr.absent = !listed
}

// Grace gives every instance Timeout from now to be seen before it counts
// as silent: a master that starts to act has probed only what it could
// reach, and after a partition or its own restart that may be nothing, so
// a stale lastSeen is its blindness, not the process's. Exits the runtime
// reports are not affected.
func (s *Supervisor) Grace(now time.Time) {
	for _, tr := range s.inst {
		if now.After(tr.lastSeen) {
			tr.lastSeen = now
		}
	}
}

// Started records that a restart really happened at t (the grace of
// Timeout runs from there, not from when Due asked for it).
func (s *Supervisor) Started(instance string, t time.Time) {
	if tr, ok := s.inst[instance]; ok && t.After(tr.lastSeen) {
		tr.lastSeen = t
	}
}

// Due returns the restarts to do at now, and records them as done: the
// caller starts each through the Runtime. An instance restarted is given
// Timeout to show up before it can be declared dead again.
func (s *Supervisor) Due(now time.Time) []Action {
	var out []Action
	for name, tr := range s.inst {
		var cause Cause
		reason, kill := "", false
		switch {
		case tr.absent:
			continue
		case tr.exited != "":
			cause, reason = CauseExited, "exited: "+tr.exited
		case now.Sub(tr.lastSeen) > s.policy.Timeout:
			cause, reason, kill = CauseSilent, "not seen for "+now.Sub(tr.lastSeen).Round(10*time.Millisecond).String(), true
		case !tr.recovering.IsZero() && now.Sub(tr.recovering) > s.policy.RecoveryGrace:
			cause = CauseRecoveringTooLong
			reason = fmt.Sprintf("%s of %s (recovering for %s)", ReasonRecoveringTooLong, s.policy.RecoveryGrace, now.Sub(tr.recovering).Round(10*time.Millisecond))
			kill = true
		default:
			continue
		}
		if now.Before(tr.next) {
			continue
		}
		// Up since its last restart, if any: long enough, and the backoff
		// starts over.
		var up time.Duration
		if !tr.restarted.IsZero() {
			up = now.Sub(tr.restarted)
		}
		d := tr.backoff.Failed(now, up)
		tr.total++
		tr.next = now.Add(d.Delay)
		tr.restarted = now
		tr.exited, tr.recovering = "", time.Time{}
		tr.lastSeen = now // grace: Timeout to come up
		out = append(out, Action{Instance: name, Cause: cause, Reason: reason, CrashLoop: d.CrashLoop, KillFirst: kill})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Instance < out[j].Instance })
	return out
}

// States describes every instance at now, sorted by name.
func (s *Supervisor) States(now time.Time) []InstanceState {
	out := make([]InstanceState, 0, len(s.inst))
	for name, tr := range s.inst {
		alive := !tr.absent && tr.exited == "" && now.Sub(tr.lastSeen) <= s.policy.Timeout
		out = append(out, InstanceState{
			Instance: name, LastSeen: tr.lastSeen, Alive: alive, Recovering: alive && !tr.recovering.IsZero(),
			Restarts: tr.total, CrashLoop: tr.backoff.CrashLoop(),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Instance < out[j].Instance })
	return out
}
