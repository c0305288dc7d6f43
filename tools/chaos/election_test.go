package chaos

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/election"
	"github.com/wololo/wololo/election/driver"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/base/datagen"
)

// masterLine is the line a master logs for msg with --log-json: hclog's
// JSON, at 12:00 on 2026-11-23 plus s seconds.
func masterLine(s float64, id int, msg string, args ...any) string {
	var b bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Name: "master", Output: &b, JSONFormat: true, TimeFn: func() time.Time { return at(s) }})
	log.With("instance", "master-"+itoa(id)).Info(msg, args...)
	return strings.TrimSuffix(b.String(), "\n")
}

// runnerAt is the runner's marker time (nanoseconds).
func runnerAt(s float64) string {
	return at(s).Format(time.RFC3339Nano)
}

func at(s float64) time.Time {
	return time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC).Add(time.Duration(s * float64(time.Second)))
}

// The election driver's three lines, as it logs them.
func started(s float64, id int, term int) string {
	return masterLine(s, id, "acting started", "id", election.ID(id), "term", election.Term(term))
}

func stoppedLine(s float64, id int, term int) string {
	return masterLine(s, id, "acting stopped", "id", election.ID(id), "term", election.Term(term), "role", election.RoleFollower.String())
}

// leaseEndLine is "acting stopped" as the driver logs it when a tick ended
// acting: written at s, the tick due at due.
func leaseEndLine(s, due float64, id int, term int) string {
	return masterLine(s, id, "acting stopped", "id", election.ID(id), "term", election.Term(term), "role", election.RoleLeader.String(),
		driver.StoppedAtKey, at(due).Format(time.RFC3339Nano))
}

func state(s float64, id int, role string, leader, term int) string {
	return masterLine(s, id, "election state", "id", election.ID(id), "role", role, "leader", election.ID(leader), "term", election.Term(term))
}

func exited(s float64, id int) string {
	return "---- wololo local " + runnerAt(s) + ": pid 4242 of master-" + itoa(id) + " exited (killed by signal 9 (killed)) after 1.234s"
}

func startMarker(s float64, id, n int) string {
	return "---- wololo local " + runnerAt(s) + ": start #" + itoa(n) + " of master-" + itoa(id) + ": wololo master --id " + itoa(id)
}

func itoa(n int) string { return strconv.Itoa(n) }

func logText(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

func TestParseMasterLog(t *testing.T) {
	end := at(100)
	type iv struct {
		id     int
		term   uint64
		start  float64
		end    float64
		reason string
	}
	tests := []struct {
		name      string
		instance  string
		log       []byte
		want      []iv
		claims    []uint64 // terms of the leader claims
		starts    int
		exits     int
		wantNotes []string // substrings, one per note
	}{
		{
			name:     "acting stopped closes the interval",
			instance: "master-2",
			log: logText(
				startMarker(0, 2, 1),
				masterLine(0.1, 2, "election: listening for a leader", "id", 2, "peers", []election.ID{1, 2, 3}, "term", election.Term(0)),
				state(1, 2, "leader", 2, 4),
				started(1.002, 2, 4),
				stoppedLine(3.5, 2, 4),
				state(3.5, 2, "follower", 3, 5),
			),
			want:   []iv{{2, 4, 1.002, 3.5, "acting stopped"}},
			claims: []uint64{4},
			starts: 1,
		},
		{
			name:     "a kill ends the interval at the exit marker",
			instance: "master-3",
			log: logText(
				startMarker(0, 3, 1),
				state(1, 3, "leader", 3, 2),
				started(1.1, 3, 2),
				exited(2.0001234, 3),
				startMarker(2.3, 3, 2),
				state(3.1, 3, "follower", 2, 4),
			),
			want:   []iv{{3, 2, 1.1, 2.0001234, "process exited"}},
			claims: []uint64{2},
			starts: 2, exits: 1,
		},
		{
			name:     "still acting at the end of the run",
			instance: "master-1",
			log:      logText(started(5, 1, 6)),
			want:     []iv{{1, 6, 5, 100, "end of run"}},
		},
		{
			name:     "a start marker without an exit marker ends it",
			instance: "master-1",
			log:      logText(started(5, 1, 6), startMarker(7, 1, 2)),
			want:     []iv{{1, 6, 5, 7, "process restarted"}},
			starts:   1,
		},
		{
			name:     "a new term closes the old one; the same term twice is one interval",
			instance: "master-1",
			log:      logText(started(5, 1, 6), started(5.5, 1, 6), started(6, 1, 9), stoppedLine(8, 1, 9)),
			want:     []iv{{1, 6, 5, 6, "acting started again"}, {1, 9, 6, 8, "acting stopped"}},
		},
		{
			name:      "acting stopped without acting started is a note",
			instance:  "master-1",
			log:       logText(stoppedLine(8, 1, 9)),
			wantNotes: []string{"without acting started"},
		},
		{
			name:      "acting stopped for another term is a note and still closes",
			instance:  "master-1",
			log:       logText(started(5, 1, 6), stoppedLine(8, 1, 7)),
			want:      []iv{{1, 6, 5, 8, "acting stopped"}},
			wantNotes: []string{"acting stopped for term 7 while acting in term 6"},
		},
		{
			name:     "the id comes from the instance name when a line has none",
			instance: "master-3",
			log:      logText(masterLine(1, 3, "acting started", "term", 8)),
			want:     []iv{{3, 8, 1, 100, "end of run"}},
		},
		{
			name:     "other keys, CRLF, a time zone offset, nanoseconds",
			instance: "master-2",
			log: []byte(`{"@message":"acting started","@timestamp":"2026-11-23T13:00:01.000000+01:00","instance":"master-2","note":"a \"term\":9 b=c","id":2,"term":4}` + "\r\n" +
				`{"term":4,"role":"follower","id":2,"@timestamp":"2026-11-23T12:00:02.000000001Z","@message":"acting stopped"}` + "\r\n"),
			want: []iv{{2, 4, 1, 2.000000001, "acting stopped"}},
		},
		{
			name:     "a term above 2^53 is read exactly",
			instance: "master-1",
			log:      logText(`{"@message":"acting started","@timestamp":"2026-11-23T12:00:01.000000Z","id":1,"term":18446744073709551615}`),
			want:     []iv{{1, 18446744073709551615, 1, 100, "end of run"}},
		},
		{
			name:     "JSON written by hand",
			instance: "master-2",
			log: logText(
				`{"@level":"info","@message":"election state","@module":"master","@timestamp":"2026-11-23T12:00:01.000000Z","id":2,"instance":"master-2","leader":2,"role":"leader","term":4}`,
				`{"@level":"info","@message":"acting started","@module":"master","@timestamp":"2026-11-23T12:00:01.500000Z","id":2,"instance":"master-2","term":4}`,
				`{"@level":"info","@message":"acting stopped","@module":"master","@timestamp":"2026-11-23T12:00:03.000000Z","id":2,"instance":"master-2","term":4,"role":"follower"}`,
			),
			want:   []iv{{2, 4, 1.5, 3, "acting stopped"}},
			claims: []uint64{4},
		},
		{
			name:     "unreadable election lines are notes; other lines are ignored",
			instance: "master-2",
			log: logText(
				`{"@message":"acting started","@timestamp":"yesterday","id":2,"term":4}`,
				masterLine(1, 2, "acting started", "id", 2, "term", "four"),
				masterLine(1, 2, "acting started", "id", 2),
				masterLine(1, 2, "election state", "id", 2, "leader", 2, "term", 4),
				masterLine(1, 2, "election state", "id", 2, "role", election.RoleLeader, "leader", 2, "term", 4),
				masterLine(1, 2, "acting stopped", "id", "two", "term", 4),
				masterLine(1, 2, "restarted", "process", "q2-grouper-0", "reason", "exited: killed", "leader", 2, "term", 4),
				"2026-11-23T12:00:01.000Z [INFO]  master: acting started: instance=master-2 id=2 term=4",
				"---- wololo local: start failed: no such file",
				"---- wololo local soon: pid 1 of master-2 exited (exit status 0) after 1s",
				"{not json",
				`{"@message":["acting started"]}`,
				"",
			),
			wantNotes: []string{"unreadable timestamp", "bad term", "no term", "without a role", "bad role 2", "bad id", "unreadable runner timestamp"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ml := ParseMasterLog(tt.instance, tt.log, end)
			var got []iv
			for _, i := range ml.Intervals {
				if i.Instance != tt.instance {
					t.Errorf("interval of %q, want %q", i.Instance, tt.instance)
				}
				got = append(got, iv{i.ID, i.Term, i.Start.Sub(at(0)).Seconds(), i.End.Sub(at(0)).Seconds(), i.EndReason})
			}
			var want []iv
			for _, w := range tt.want {
				// Compare at the resolution the lines carry.
				w.start = at(w.start).Sub(at(0)).Seconds()
				w.end = at(w.end).Sub(at(0)).Seconds()
				want = append(want, w)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("intervals:\n got %+v\nwant %+v", got, want)
			}
			var claims []uint64
			for _, c := range ml.Claims {
				claims = append(claims, c.Term)
			}
			if !reflect.DeepEqual(claims, tt.claims) {
				t.Errorf("claims: got terms %v, want %v", claims, tt.claims)
			}
			if ml.Starts != tt.starts || ml.Exits != tt.exits {
				t.Errorf("markers: got %d starts, %d exits; want %d, %d", ml.Starts, ml.Exits, tt.starts, tt.exits)
			}
			if len(ml.Notes) != len(tt.wantNotes) {
				t.Fatalf("notes: got %d %q, want %d like %q", len(ml.Notes), ml.Notes, len(tt.wantNotes), tt.wantNotes)
			}
			for i, w := range tt.wantNotes {
				if !strings.Contains(ml.Notes[i], w) {
					t.Errorf("note %d: got %q, want it to contain %q", i, ml.Notes[i], w)
				}
			}
		})
	}
}

func TestCheckMasterLogs(t *testing.T) {
	end := at(100)
	tests := []struct {
		name string
		logs map[string][]byte
		want []string // substrings, one per violation, in order
	}{
		{
			name: "a clean failover: killed leader, successor acts after the exit",
			logs: map[string][]byte{
				"master-3": logText(state(1, 3, "leader", 3, 2), started(1.1, 3, 2), exited(5, 3), startMarker(5.4, 3, 2), state(6, 3, "follower", 2, 4)),
				"master-2": logText(state(1.05, 2, "follower", 3, 2), state(5.2, 2, "leader", 2, 4), started(5.3, 2, 4)),
				"master-1": logText(state(5.25, 1, "follower", 2, 4)),
			},
		},
		{
			name: "handover within the same millisecond is no overlap",
			logs: map[string][]byte{
				"master-3": logText(started(1, 3, 2), exited(5.0009, 3)),
				"master-2": logText(started(5.0001, 2, 4)),
			},
		},
		{
			name: "overlap in time",
			logs: map[string][]byte{
				"master-3": logText(started(1, 3, 2), stoppedLine(5.5, 3, 2)),
				"master-2": logText(started(5.2, 2, 4), stoppedLine(9, 2, 4)),
			},
			want: []string{"id 3 and id 2 acted at the same time for 300ms"},
		},
		{
			name: "a lease that ran out before its line was written (a starved master): its stopped-at counts",
			logs: map[string][]byte{
				"master-3": logText(started(1, 3, 2), leaseEndLine(5.5, 5.1, 3, 2)),
				"master-2": logText(started(5.2, 2, 4), stoppedLine(9, 2, 4)),
			},
		},
		{
			name: "a stopped-at after the line's own time is not believed",
			logs: map[string][]byte{
				"master-3": logText(started(1, 3, 2), leaseEndLine(5.5, 6, 3, 2)),
				"master-2": logText(started(5.2, 2, 4), stoppedLine(9, 2, 4)),
			},
			want: []string{"id 3 and id 2 acted at the same time for 300ms"},
		},
		{
			name: "a successor that started before the old leader was killed",
			logs: map[string][]byte{
				"master-3": logText(started(1, 3, 2), exited(5.5, 3)),
				"master-2": logText(started(5.2, 2, 4)),
			},
			want: []string{"acted at the same time for 300ms"},
		},
		{
			name: "an interval open at the end overlaps a later one",
			logs: map[string][]byte{
				"master-1": logText(started(1, 1, 3)),
				"master-2": logText(started(50, 2, 4), stoppedLine(60, 2, 4)),
			},
			want: []string{"acted at the same time for 10s"},
		},
		{
			name: "two ids acting in one term, at different times",
			logs: map[string][]byte{
				"master-1": logText(started(1, 1, 3), stoppedLine(2, 1, 3)),
				"master-2": logText(started(5, 2, 3), stoppedLine(6, 2, 3)),
			},
			want: []string{"term 3: two masters acted in it: id 1"},
		},
		{
			name: "two ids claiming one term",
			logs: map[string][]byte{
				"master-1": logText(state(1, 1, "leader", 1, 3)),
				"master-2": logText(state(2, 2, "leader", 2, 3), state(3, 2, "leader", 2, 3)),
				"master-3": logText(state(4, 3, "leader", 3, 3)),
			},
			want: []string{"term 3: two masters claimed to lead it: id 1 (master-1 line 1", "term 3: two masters claimed to lead it: id 1 (master-1 line 1, at 12:00:01.000000) and id 3"},
		},
		{
			name: "the same master acting twice in a term, or twice in a row, is fine",
			logs: map[string][]byte{
				"master-2": logText(started(1, 2, 4), exited(2, 2), startMarker(2.1, 2, 2), started(3, 2, 4), stoppedLine(4, 2, 4), started(5, 2, 7)),
				"master-1": logText(state(1, 1, "follower", 2, 4)),
			},
		},
		{
			name: "all three at once",
			logs: map[string][]byte{
				"master-1": logText(state(1, 1, "leader", 1, 3), started(1, 1, 3)),
				"master-2": logText(state(2, 2, "leader", 2, 3), started(2, 2, 3)),
			},
			want: []string{"term 3: two masters acted", "acted at the same time for 1m38s", "term 3: two masters claimed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lc := CheckMasterLogs(tt.logs, end)
			if len(lc.Logs) != len(tt.logs) {
				t.Errorf("%d logs parsed, want %d", len(lc.Logs), len(tt.logs))
			}
			for i := 1; i < len(lc.Intervals); i++ {
				if lc.Intervals[i].Start.Before(lc.Intervals[i-1].Start) {
					t.Errorf("intervals not sorted by start: %v", lc.Intervals)
				}
			}
			if len(lc.Violations) != len(tt.want) {
				t.Fatalf("got %d violations %q, want %d like %q", len(lc.Violations), lc.Violations, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(lc.Violations[i], w) {
					t.Errorf("violation %d: got %q, want it to contain %q", i, lc.Violations[i], w)
				}
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	tests := []struct {
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 50, 7 * time.Millisecond},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(40, 10, 30, 20), 50, 20 * time.Millisecond},
		{ms(40, 10, 30, 20), 75, 30 * time.Millisecond},
		{ms(40, 10, 30, 20), 99, 40 * time.Millisecond},
		{ms(40, 10, 30, 20), 100, 40 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 50, 5 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{ms(5, 1), 1, 1 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(tt.ds, tt.p); got != tt.want {
			t.Errorf("percentile(%v, %g) = %v, want %v", tt.ds, tt.p, got, tt.want)
		}
	}
}

func TestActingTermViolations(t *testing.T) {
	seen := at(1)
	tests := []struct {
		name   string
		acting map[uint64]map[int]time.Time
		want   []string
	}{
		{"none", nil, nil},
		{"one id per term", map[uint64]map[int]time.Time{2: {3: seen}, 4: {2: seen}, 5: {3: seen}}, nil},
		{"two ids in one term", map[uint64]map[int]time.Time{2: {3: seen}, 4: {2: seen, 1: seen}},
			[]string{"term 4: Status showed 2 masters leading and acting in it: id 1 (first at 12:00:01.000000), id 2"}},
		{"sorted by term", map[uint64]map[int]time.Time{9: {1: seen, 3: seen}, 4: {2: seen, 1: seen}},
			[]string{"term 4:", "term 9:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := actingTermViolations(tt.acting)
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %d like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("violation %d: got %q, want it to start with %q", i, got[i], w)
				}
			}
		})
	}
}

// FuzzParseMasterLog: the parser never panics, every interval ends at or
// after its start, and the checker copes with whatever it is given.
func FuzzParseMasterLog(f *testing.F) {
	f.Add(logText(startMarker(0, 2, 1), state(1, 2, "leader", 2, 4), started(1.1, 2, 4), exited(2, 2)))
	f.Add(logText(started(5, 1, 6), stoppedLine(3, 1, 6), stoppedLine(8, 1, 9)))
	f.Add([]byte(`{"@message":"acting started","@timestamp":"2026-11-23T12:00:01.5Z","id":2,"term":4}` + "\n"))
	f.Add([]byte(`{"@message":"acting started","@timestamp":"2026-11-23T12:00:01.000000Z","id":"2 ","term":-1}` + "\n"))
	f.Add([]byte(`{"@message":"election state","@timestamp":"2026-11-23T12:00:01Z","id":1e3,"role":7,"term":1.5}` + "\n"))
	f.Add([]byte("---- wololo local x: pid exited\n---- wololo local 2026-11-23T12:00:01Z: start #\n"))
	f.Add([]byte{})
	end := at(100)
	f.Fuzz(func(t *testing.T, data []byte) {
		ml := ParseMasterLog("master-2", data, end)
		for _, iv := range ml.Intervals {
			if iv.End.Before(iv.Start) {
				t.Fatalf("interval ends before it starts: %+v", iv)
			}
		}
		CheckMasterLogs(map[string][]byte{"master-1": data, "master-2": data, "bad name": data}, end)
	})
}

// TestChaosElection is the election chaos tool on real processes: ten
// kills of the leading master (some double, some right after an election)
// during a job. It asserts no violation, every failover done, every
// killed master back and the exact job; the failover times are only
// logged (a loaded machine makes them longer).
func TestChaosElection(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos election: skipped with -short (builds the binary and kills the leading master of OS processes ten times)")
	}
	bin := testkit.WololoBinary(t)
	dir := t.TempDir()
	if _, err := datagen.WriteDir(datagen.Config{Matches: 5000, Seed: 11}, dir); err != nil {
		t.Fatal(err)
	}
	w := testkit.Writer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// No TempDir: a failed run's data directory and logs stay in the
	// system's temp dir.
	rep, err := Election(ctx, ElectionOptions{
		Binary: bin, Matches: filepath.Join(dir, "matches.csv"), Players: filepath.Join(dir, "match_players.csv"),
		Out: t.TempDir(), Kills: 10, Seed: 1, Double: DefaultDoubleKills, RightAfter: DefaultRightAfter,
		Stdout: w, Progress: w, Log: hclog.New(&hclog.LoggerOptions{Name: "chaos", Level: hclog.Error, Output: w}),
	})
	if rep == nil {
		t.Fatalf("chaos election: %v", err)
	}
	t.Logf("failover over %d kills: p50 %s, p99 %s, max %s", len(rep.Failovers), secs(rep.P50), secs(rep.P99), secs(rep.Max))
	if err != nil {
		t.Errorf("chaos election: %v (logs in %s)", err, rep.DataDir)
	}
	if len(rep.Violations) > 0 {
		t.Errorf("violations: %q", rep.Violations)
	}
	if len(rep.Kills) != 10 {
		t.Errorf("%d kills, want 10", len(rep.Kills))
	}
	for _, kl := range rep.Kills {
		if !kl.Completed {
			t.Errorf("kill %d: the failover never completed", kl.N)
		}
		if !kl.BackOK {
			t.Errorf("kill %d: a killed master never came back", kl.N)
		}
	}
	if rep.SubmitErr != nil || !rep.Equal {
		t.Errorf("job: submit error %v, outputs equal %v, diffs %q", rep.SubmitErr, rep.Equal, rep.Diffs)
	}
	if len(rep.Intervals) == 0 {
		t.Errorf("no acting interval read from the masters' logs")
	}
	if rep.StatusRounds == 0 {
		t.Errorf("the Status poller never asked the masters")
	}
}
