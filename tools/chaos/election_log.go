package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wololo/wololo/deploy"
)

// This file reads the masters' log files after an election chaos run and
// checks them; it is pure (bytes in, findings out) so that it can be
// table-tested and fuzzed.
//
// It reads structured data only: the masters' hclog JSON lines (a master
// logs JSON with --log-json, which the election chaos tool and the compose
// file give it), decoded with encoding/json, by message and keys:
//
//	{"@level":"info","@message":"election state","@module":"master","@timestamp":"2026-11-23T12:19:33.604012Z","id":2,"instance":"master-2","leader":2,"role":"leader","term":7}
//	{"@level":"info","@message":"acting started","@module":"master","@timestamp":"2026-11-23T12:19:33.609101Z","id":2,"instance":"master-2","term":7}
//	{"@level":"info","@message":"acting stopped","@module":"master","@timestamp":"2026-11-23T12:19:40.001337Z","id":2,"instance":"master-2","role":"follower","term":7}
//
// and the markers the local runner writes into the same file (or the
// docker target inserts at each container death), which are the runner's
// own format, not a master's:
//
//	---- wololo local 2026-11-23T12:19:33.756168631Z: start #2 of master-3: wololo master ...
//	---- wololo local 2026-11-23T12:19:33.399797374Z: pid 9566 of master-3 exited (killed by signal 9 (killed)) after 5.936s
//
// Every other line (a master's text log, a panic, a continuation line) is
// ignored. The election driver (election/driver) writes "acting started"
// after it set its state and "acting stopped" after it cleared it, both
// under the lock that Acting takes, so every moment in which the master
// could have answered Acting()=true lies inside a logged interval (one
// that ends at the process's exit when it was killed). When a tick ended
// acting (a lease ran out), the line carries "stopped-at", the moment that
// tick was due, and the interval ends there if that is earlier than the
// line: Acting feeds every due tick before it answers, so it answered false
// from then on, however late a starved process wrote the line.

// ActingInterval is a span of time in which one master may have acted
// (restarted processes), as its log tells it.
type ActingInterval struct {
	Instance string
	ID       int
	Term     uint64
	Start    time.Time
	End      time.Time
	// EndReason says what closed the interval: "acting stopped", "process
	// exited", "process restarted" (a start marker without an exit marker
	// before it), "acting started again" or "end of run".
	EndReason string
	// StartLine and EndLine are 1-based line numbers in the log file
	// (EndLine is 0 when the run's end closed the interval).
	StartLine, EndLine int
}

// LeaderClaim is an "election state" line in which a master says it leads.
type LeaderClaim struct {
	Instance string
	ID       int
	Term     uint64
	At       time.Time
	Line     int
}

// MasterLog is what one master's log file says about the election.
type MasterLog struct {
	Instance  string
	Intervals []ActingInterval
	Claims    []LeaderClaim
	// Starts and Exits count the runner's start and exit markers.
	Starts, Exits int
	// Notes are oddities that are not violations by themselves: election
	// lines that could not be read, an "acting stopped" without a start.
	Notes []string
}

// LogCheck is the verdict on every master's log of one run.
type LogCheck struct {
	Logs []MasterLog
	// Intervals are every master's acting intervals, by start time.
	Intervals []ActingInterval
	// Violations break the election's promises: two masters acting in the
	// same term, two masters' acting intervals overlapping in time, two
	// masters claiming leadership of the same term.
	Violations []string
}

// logResolution is the precision overlaps are computed at: times are
// truncated to it, which can hide an overlap shorter than a millisecond
// but never shows one that did not happen (if the truncated end of A is
// after the truncated start of B, then B started before A ended). hclog's
// JSON writes microseconds and the runner nanoseconds, but the runner
// marks an exit only once it has reaped the process, a little after the
// death; a millisecond, the precision of hclog's text timestamps that this
// check was first written against, keeps that lag from showing as an
// overlap.
const logResolution = time.Millisecond

// runnerMarker starts every line the local runner writes into a log file.
const runnerMarker = "---- wololo local "

type logEventKind int

const (
	evActingStarted logEventKind = iota + 1
	evActingStopped
	evState
	evExit
	evStart
)

// logEvent is one line of interest.
type logEvent struct {
	kind   logEventKind
	at     time.Time
	line   int
	id     int // 0: not given
	term   uint64
	role   string
	leader int
}

// ParseMasterLog reads one master's log file. end closes an interval that
// is still open at the end of the file (the run's end; the master was
// still acting when the logs were read). instance is the master's name
// (master-N); its N stands for the id on lines that give none.
func ParseMasterLog(instance string, data []byte, end time.Time) MasterLog {
	ml := MasterLog{Instance: instance}
	selfID := 0
	if in, err := deploy.ParseInstance(instance); err == nil && in.Stage == deploy.MasterStage {
		selfID = in.Index
	}
	var open *ActingInterval
	closeOpen := func(at time.Time, reason string, line int) {
		if open == nil {
			return
		}
		if at.Before(open.Start) {
			at = open.Start
		}
		open.End, open.EndReason, open.EndLine = at, reason, line
		ml.Intervals = append(ml.Intervals, *open)
		open = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		ev, ok, problem := parseLogLine(sc.Text(), n)
		if problem != "" {
			ml.Notes = append(ml.Notes, fmt.Sprintf("%s:%d: %s", instance, n, problem))
		}
		if !ok {
			continue
		}
		if ev.id == 0 {
			ev.id = selfID
		}
		switch ev.kind {
		case evActingStarted:
			if open != nil {
				if open.Term == ev.term {
					continue // the same interval, logged twice
				}
				closeOpen(ev.at, "acting started again", n)
			}
			open = &ActingInterval{Instance: instance, ID: ev.id, Term: ev.term, Start: ev.at, StartLine: n}
		case evActingStopped:
			if open == nil {
				ml.Notes = append(ml.Notes, fmt.Sprintf("%s:%d: acting stopped (term %d) without acting started", instance, n, ev.term))
				continue
			}
			if open.Term != ev.term {
				ml.Notes = append(ml.Notes, fmt.Sprintf("%s:%d: acting stopped for term %d while acting in term %d", instance, n, ev.term, open.Term))
			}
			closeOpen(ev.at, "acting stopped", n)
		case evState:
			if ev.role == "leader" {
				ml.Claims = append(ml.Claims, LeaderClaim{Instance: instance, ID: ev.id, Term: ev.term, At: ev.at, Line: n})
			}
		case evExit:
			ml.Exits++
			closeOpen(ev.at, "process exited", n)
		case evStart:
			ml.Starts++
			closeOpen(ev.at, "process restarted", n)
		}
	}
	if err := sc.Err(); err != nil {
		ml.Notes = append(ml.Notes, fmt.Sprintf("%s: reading stopped after line %d: %v", instance, n, err))
	}
	closeOpen(end, "end of run", 0)
	return ml
}

// parseLogLine recognises one line. ok is false for lines of no interest;
// problem is set for a line that should have been of interest but could
// not be read.
func parseLogLine(line string, n int) (ev logEvent, ok bool, problem string) {
	line = strings.TrimRight(line, "\r")
	ev.line = n
	if rest, found := strings.CutPrefix(line, runnerMarker); found {
		return parseRunnerLine(rest, ev)
	}
	if strings.HasPrefix(line, "{") {
		return parseJSONLine(line, ev)
	}
	return ev, false, ""
}

// parseRunnerLine reads what follows "---- wololo local ": a timestamp,
// ": ", then "start #N of X: ..." or "pid P of X exited (...) after D".
// The runner's other lines ("start failed") carry no timestamp and are of
// no interest.
func parseRunnerLine(rest string, ev logEvent) (logEvent, bool, string) {
	ts, what, found := strings.Cut(rest, ": ")
	if !found {
		return ev, false, ""
	}
	switch {
	case strings.HasPrefix(what, "start #"):
		ev.kind = evStart
	case strings.HasPrefix(what, "pid ") && strings.Contains(what, " exited"):
		ev.kind = evExit
	default:
		return ev, false, ""
	}
	at, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ev, false, fmt.Sprintf("unreadable runner timestamp %q", ts)
	}
	ev.at = at
	return ev, true, ""
}

// jsonLogLine is what the check reads of an hclog JSON line. The values
// are decoded one by one, so that one of the wrong type is a note that
// names it.
type jsonLogLine struct {
	Message   string          `json:"@message"`
	Timestamp string          `json:"@timestamp"`
	ID        json.RawMessage `json:"id"`
	Term      json.RawMessage `json:"term"`
	Role      json.RawMessage `json:"role"`
	Leader    json.RawMessage `json:"leader"`
	// StoppedAt, on an "acting stopped" line that a tick caused, is when
	// that tick was due: acting ended then, however late the line was
	// written (election/driver's StoppedAtKey).
	StoppedAt string `json:"stopped-at"`
}

// parseJSONLine reads an hclog JSON line (--log-json).
func parseJSONLine(line string, ev logEvent) (logEvent, bool, string) {
	var l jsonLogLine
	if err := json.Unmarshal([]byte(line), &l); err != nil {
		return ev, false, ""
	}
	switch l.Message {
	case "acting started":
		ev.kind = evActingStarted
	case "acting stopped":
		ev.kind = evActingStopped
	case "election state":
		ev.kind = evState
	default:
		return ev, false, ""
	}
	at, err := time.Parse(time.RFC3339Nano, l.Timestamp)
	if err != nil {
		return ev, false, fmt.Sprintf("unreadable timestamp %q", l.Timestamp)
	}
	ev.at = at
	if ev.kind == evActingStopped && l.StoppedAt != "" {
		stopped, err := time.Parse(time.RFC3339Nano, l.StoppedAt)
		if err != nil {
			return ev, false, fmt.Sprintf("unreadable stopped-at %q", l.StoppedAt)
		}
		if stopped.Before(at) {
			ev.at = stopped
		}
	}
	if l.ID != nil {
		if err := json.Unmarshal(l.ID, &ev.id); err != nil || ev.id < 0 {
			return ev, false, fmt.Sprintf("bad id %s", l.ID)
		}
	}
	if l.Term == nil {
		return ev, false, "no term"
	}
	if err := json.Unmarshal(l.Term, &ev.term); err != nil {
		return ev, false, fmt.Sprintf("bad term %s", l.Term)
	}
	if l.Role != nil {
		if err := json.Unmarshal(l.Role, &ev.role); err != nil {
			return ev, false, fmt.Sprintf("bad role %s (a name, like \"leader\")", l.Role)
		}
	}
	if l.Leader != nil {
		_ = json.Unmarshal(l.Leader, &ev.leader) // informative only
	}
	if ev.kind == evState && ev.role == "" {
		return ev, false, "election state without a role"
	}
	return ev, true, ""
}

// CheckMasterLogs parses every master's log (instance name -> contents)
// and lists the violations: two ids acting in the same term, two ids'
// acting intervals overlapping in time (by a millisecond or more, the
// logs' resolution), two ids claiming leadership of the same term.
func CheckMasterLogs(logs map[string][]byte, end time.Time) LogCheck {
	var names []string
	for name := range logs {
		names = append(names, name)
	}
	sort.Strings(names)
	var lc LogCheck
	for _, name := range names {
		ml := ParseMasterLog(name, logs[name], end)
		lc.Logs = append(lc.Logs, ml)
		lc.Intervals = append(lc.Intervals, ml.Intervals...)
	}
	sort.SliceStable(lc.Intervals, func(i, j int) bool { return lc.Intervals[i].Start.Before(lc.Intervals[j].Start) })
	lc.Violations = append(lc.Violations, sameTermActing(lc.Intervals)...)
	lc.Violations = append(lc.Violations, overlappingActing(lc.Intervals)...)
	var claims []LeaderClaim
	for _, ml := range lc.Logs {
		claims = append(claims, ml.Claims...)
	}
	lc.Violations = append(lc.Violations, sameTermClaims(claims)...)
	return lc
}

// sameTermActing: an id per term.
func sameTermActing(intervals []ActingInterval) []string {
	return twoIDsInOneTerm(intervals, func(iv ActingInterval) (uint64, int) { return iv.Term, iv.ID },
		func(f, iv ActingInterval) string {
			return fmt.Sprintf("term %d: two masters acted in it: id %d (%s line %d, from %s) and id %d (%s line %d, from %s)",
				iv.Term, f.ID, f.Instance, f.StartLine, clock(f.Start), iv.ID, iv.Instance, iv.StartLine, clock(iv.Start))
		})
}

// twoIDsInOneTerm reports, once per pair of ids, every term in which
// records of two different ids appear, in the order of records.
func twoIDsInOneTerm[R any](records []R, key func(R) (term uint64, id int), describe func(first, other R) string) []string {
	first := map[uint64]R{}
	reported := map[[3]uint64]bool{}
	var out []string
	for _, r := range records {
		term, id := key(r)
		f, seen := first[term]
		if !seen {
			first[term] = r
			continue
		}
		_, fid := key(f)
		pair := [3]uint64{term, uint64(min(fid, id)), uint64(max(fid, id))}
		if fid == id || reported[pair] {
			continue
		}
		reported[pair] = true
		out = append(out, describe(f, r))
	}
	return out
}

// overlappingActing: no two ids acting at once. intervals are sorted by
// start.
func overlappingActing(intervals []ActingInterval) []string {
	var out []string
	for i, a := range intervals {
		for _, b := range intervals[i+1:] {
			if a.ID == b.ID {
				continue
			}
			s := later(a.Start, b.Start).Truncate(logResolution)
			e := earlier(a.End, b.End).Truncate(logResolution)
			if e.After(s) {
				out = append(out, fmt.Sprintf("id %d and id %d acted at the same time for %s: id %d in term %d from %s to %s (%s, %s line %d), id %d in term %d from %s to %s (%s, %s line %d)",
					a.ID, b.ID, e.Sub(s), a.ID, a.Term, clock(a.Start), clock(a.End), a.EndReason, a.Instance, a.StartLine,
					b.ID, b.Term, clock(b.Start), clock(b.End), b.EndReason, b.Instance, b.StartLine))
			}
		}
	}
	return out
}

// sameTermClaims: one leader per term.
func sameTermClaims(claims []LeaderClaim) []string {
	sort.SliceStable(claims, func(i, j int) bool { return claims[i].At.Before(claims[j].At) })
	return twoIDsInOneTerm(claims, func(c LeaderClaim) (uint64, int) { return c.Term, c.ID },
		func(f, c LeaderClaim) string {
			return fmt.Sprintf("term %d: two masters claimed to lead it: id %d (%s line %d, at %s) and id %d (%s line %d, at %s)",
				c.Term, f.ID, f.Instance, f.Line, clock(f.At), c.ID, c.Instance, c.Line, clock(c.At))
		})
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// clock formats a log time for a violation line.
func clock(t time.Time) string { return t.UTC().Format("15:04:05.000000") }
