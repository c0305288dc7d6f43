package local

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/services/cmdline/logflags"
)

// TestMasterArgsGoToMastersOnly: MasterArgs end a master's command line
// and no graph process's; ExtraArgs the other way round.
func TestMasterArgsGoToMastersOnly(t *testing.T) {
	c := &Cluster{opts: Options{LogLevel: "info", ExtraArgs: []string{"--outbox-limit", "7"}, MasterArgs: []string{"--log-json"}},
		topoPath: "T", peersPath: "P", controlAddr: "C", tlsDir: "S"}
	master := c.argsLocked(&instance{name: "master-2", cmd: "master", addr: "A", admin: "M", dataDir: "D"})
	want := []string{"master", "--id", "2", "--runtime", "local", "--processes", "C", "--topology", "T", "--listen", "A",
		"--admin", "M", "--data", "D", "--peers", "P", "--tls-dir", "S", "--log-level", "info", "--log-json"}
	if !slices.Equal(master, want) {
		t.Errorf("master: %q\nwant     %q", master, want)
	}
	worker := c.argsLocked(&instance{name: "q1-filter-0", cmd: "worker", addr: "A", dataDir: "D"})
	if slices.Contains(worker, "--log-json") || !slices.Contains(worker, "--outbox-limit") {
		t.Errorf("worker: %q", worker)
	}
}

// TestLogJSONReachesEveryChild: Options.LogJSON gives every child, master
// or graph process, --log-json (a second one from MasterArgs or ExtraArgs
// changes nothing: a flag given twice is set once); without it no child
// gets it from LogJSON.
func TestLogJSONReachesEveryChild(t *testing.T) {
	cases := []struct {
		name          string
		opts          Options
		master, graph bool // whether --log-json is given
	}{
		{"off", Options{}, false, false},
		{"on", Options{LogJSON: true}, true, true},
		{"on, masters already", Options{LogJSON: true, MasterArgs: []string{"--log-json"}}, true, true},
		{"off, masters only", Options{MasterArgs: []string{"--log-json"}}, true, false},
		{"on, graph already", Options{LogJSON: true, ExtraArgs: []string{"--log-json"}}, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.LogLevel = "info"
			c := &Cluster{opts: tc.opts, topoPath: "T", peersPath: "P", controlAddr: "C", tlsDir: "S"}
			for _, ins := range []struct {
				in   *instance
				want bool
			}{
				{&instance{name: "master-1", cmd: "master", addr: "A", dataDir: "D"}, tc.master},
				{&instance{name: "shard-0", cmd: "worker", addr: "A", dataDir: "D"}, tc.graph},
				{&instance{name: "gateway-0", cmd: "gateway", addr: "A", dataDir: "D"}, tc.graph},
			} {
				if args := c.argsLocked(ins.in); slices.Contains(args, "--log-json") != ins.want {
					t.Errorf("%s: --log-json given: %v, want %v: %q", ins.in.name, !ins.want, ins.want, args)
				}
			}
		})
	}
}

// TestMarkLines: the runner's own lines in a log file are the text the
// crash tools read, or with LogJSON one JSON object naming the instance.
func TestMarkLines(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name string
		json bool
		at   time.Time
		want func(line string) bool
	}{
		{"text", false, at, func(l string) bool { return l == "---- wololo local 2026-01-02T03:04:05Z: pid 7 of shard-0 exited\n" }},
		{"text, no time", false, time.Time{}, func(l string) bool { return l == "---- wololo local: pid 7 of shard-0 exited\n" }},
		{"json", true, at, func(l string) bool {
			var obj map[string]any
			return json.Unmarshal([]byte(l), &obj) == nil && obj["@message"] == "exited" && obj["instance"] == "shard-0" &&
				obj["pid"] == float64(7) && strings.HasPrefix(obj["@timestamp"].(string), "2026-01-02T03:04:05") && strings.Count(l, "\n") == 1
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			(&Cluster{opts: Options{LogJSON: c.json}}).mark(&b, c.at, "pid 7 of shard-0 exited", "exited", "instance", "shard-0", "pid", 7)
			if !c.want(b.String()) {
				t.Errorf("wrote %q", b.String())
			}
		})
	}
}

// TestMemoryBudgetReachesTheGraphProcesses: local's --memory-budget is
// passed on to the gateway and the workers as theirs, not to a master;
// without it none of them is given one.
func TestMemoryBudgetReachesTheGraphProcesses(t *testing.T) {
	for _, budget := range []int64{0, 300 << 20} {
		o, err := (&common{memBudget: budget, log: &logflags.Flags{Level: "info"}}).options(io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		c := &Cluster{opts: o, topoPath: "T", peersPath: "P", controlAddr: "C", tlsDir: "S"}
		for _, in := range []*instance{{name: "shard-0", cmd: "worker"}, {name: "gateway-0", cmd: "gateway"}, {name: "master-1", cmd: "master"}} {
			args := c.argsLocked(in)
			i := slices.Index(args, "--memory-budget")
			given := i >= 0 && i+1 < len(args) && args[i+1] == "314572800"
			if want := budget > 0 && in.cmd != "master"; given != want || !want && i >= 0 {
				t.Errorf("budget %d, %s: %q", budget, in.name, args)
			}
		}
	}
}
