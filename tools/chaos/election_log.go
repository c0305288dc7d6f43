package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wololo/wololo/deploy"
)

// This file reads the masters' log files after an election chaos run and
// checks them; it is pure (bytes in, findings out) so that it can be
// table-tested and fuzzed.
//
// A master logs, through hclog (text, or JSON with --log-json):
//
//	2026-11-23T12:19:33.604Z [INFO]  master: election state: instance=master-2 id=2 role=leader leader=2 term=7
//	2026-11-23T12:19:33.609Z [INFO]  master: acting started: instance=master-2 id=2 term=7
//	2026-11-23T12:19:40.001Z [INFO]  master: acting stopped: instance=master-2 id=2 term=7 role=follower
//
// and the local runner writes its own markers into the same file:
//
//	---- wololo local 2026-11-23T12:19:33.756168631Z: start #2 of master-3: wololo master ...
//	---- wololo local 2026-11-23T12:19:33.399797374Z: pid 9566 of master-3 exited (killed by signal 9 (killed)) after 5.936s
//
// The election driver (election/driver) writes "acting started" after it
// set its state and "acting stopped" after it cleared it, both under the
// lock that Acting takes, so every moment in which the master could have answered Acting()=true lies
// inside a logged interval (one that ends at the process's exit when it
// was killed).

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

// logResolution is the coarsest timestamp precision in the files: hclog
// writes milliseconds (truncated), the runner nanoseconds. Overlaps are
// computed on times truncated to it, which can hide an overlap shorter than
// a millisecond but never shows one that did not happen: if the truncated
// end of A is after the truncated start of B, then B started before A ended.
const logResolution = time.Millisecond

// hclogTimeFormat is hclog's default timestamp layout (text format).
const hclogTimeFormat = "2006-01-02T15:04:05.000Z0700"

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
	var kv string
	switch {
	case messageAt(line, "acting started: ", &kv):
		ev.kind = evActingStarted
	case messageAt(line, "acting stopped: ", &kv):
		ev.kind = evActingStopped
	case messageAt(line, "election state: ", &kv):
		ev.kind = evState
	default:
		return ev, false, ""
	}
	ts, _, _ := strings.Cut(line, " ")
	at, err := parseLogTime(ts)
	if err != nil {
		return ev, false, fmt.Sprintf("unreadable timestamp %q", ts)
	}
	ev.at = at
	fields := parseKV(kv)
	if err := ev.fill(fields); err != "" {
		return ev, false, err
	}
	return ev, true, ""
}

// messageAt finds an hclog message: it follows the logger's name and ": "
// (or starts the line's text after the level). kv gets what follows it.
func messageAt(line, msg string, kv *string) bool {
	i := strings.Index(line, ": "+msg)
	if i < 0 {
		i = strings.Index(line, "]  "+msg)
		if i < 0 {
			return false
		}
		*kv = line[i+3+len(msg):]
		return true
	}
	*kv = line[i+2+len(msg):]
	return true
}

// fill takes the id, term, role and leader from a line's fields.
func (ev *logEvent) fill(fields map[string]string) string {
	if s, ok := fields["id"]; ok {
		id, err := strconv.Atoi(s)
		if err != nil || id < 0 {
			return fmt.Sprintf("bad id %q", s)
		}
		ev.id = id
	}
	s, ok := fields["term"]
	if !ok {
		return "no term"
	}
	t, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Sprintf("bad term %q", s)
	}
	ev.term = t
	ev.role = fields["role"]
	if s, ok := fields["leader"]; ok {
		if l, err := strconv.Atoi(s); err == nil {
			ev.leader = l
		}
	}
	if ev.kind == evState && ev.role == "" {
		return "election state without a role"
	}
	return ""
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
	at, err := parseLogTime(ts)
	if err != nil {
		return ev, false, fmt.Sprintf("unreadable runner timestamp %q", ts)
	}
	ev.at = at
	return ev, true, ""
}

// parseJSONLine reads an hclog JSON line (--log-json).
func parseJSONLine(line string, ev logEvent) (logEvent, bool, string) {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return ev, false, ""
	}
	msg, _ := m["@message"].(string)
	switch msg {
	case "acting started":
		ev.kind = evActingStarted
	case "acting stopped":
		ev.kind = evActingStopped
	case "election state":
		ev.kind = evState
	default:
		return ev, false, ""
	}
	ts, _ := m["@timestamp"].(string)
	at, err := parseLogTime(ts)
	if err != nil {
		return ev, false, fmt.Sprintf("unreadable timestamp %q", ts)
	}
	ev.at = at
	fields := map[string]string{}
	for k, v := range m {
		switch v := v.(type) {
		case string:
			fields[k] = v
		case float64:
			fields[k] = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	if problem := ev.fill(fields); problem != "" {
		return ev, false, problem
	}
	return ev, true, ""
}

// parseLogTime reads hclog's and the runner's timestamps.
func parseLogTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, hclogTimeFormat, "2006-01-02T15:04:05.000000Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a timestamp: %q", s)
}

// parseKV splits hclog's "k=v k2="quoted value"" pairs. A value that is not
// a valid quoted string is taken as it stands.
func parseKV(s string) map[string]string {
	out := map[string]string{}
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return out
		}
		eq := strings.IndexByte(s, '=')
		sp := strings.IndexAny(s, " \t")
		if eq < 0 || (sp >= 0 && sp < eq) { // a word without '=': skip it
			if sp < 0 {
				return out
			}
			s = s[sp:]
			continue
		}
		key := s[:eq]
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			end := quotedEnd(s)
			if uq, err := strconv.Unquote(s[:end]); err == nil {
				val = uq
			} else {
				val = s[:end]
			}
			s = s[end:]
		} else {
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			val, s = s[:end], s[end:]
		}
		out[key] = val
	}
}

// quotedEnd is the length of the double-quoted string s starts with
// (through its closing quote), or len(s) if it is not closed.
func quotedEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(s)
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
