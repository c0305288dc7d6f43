package logflags

import (
	"bytes"
	"encoding/json"
	"flag"
	"slices"
	"strings"
	"testing"
)

func TestFlags(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		json     bool
		logged   bool // a debug line gets through
		wantArgs []string
	}{
		{"defaults", nil, false, false, []string{"--log-level", "info"}},
		{"json", []string{"--log-json"}, true, false, []string{"--log-level", "info", "--log-json"}},
		{"debug json", []string{"--log-level", "debug", "--log-json"}, true, true, []string{"--log-level", "debug", "--log-json"}},
		{"debug text", []string{"--log-level=debug"}, false, true, []string{"--log-level", "debug"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			f := Register(fs, "info")
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			log := f.Logger("wololo", &out).With("instance", "shard-0")
			log.Debug("debug line", "job", "j1")
			log.Info("info line", "job", "j1")
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if want := map[bool]int{true: 2, false: 1}[c.logged]; len(lines) != want {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), want, out.String())
			}
			for _, line := range lines {
				var obj map[string]any
				isJSON := json.Unmarshal([]byte(line), &obj) == nil
				if isJSON != c.json {
					t.Errorf("JSON %v, want %v: %s", isJSON, c.json, line)
				}
				if isJSON && (obj["instance"] != "shard-0" || obj["job"] != "j1" || obj["@module"] != "wololo") {
					t.Errorf("keys missing: %s", line)
				}
			}
			if got := f.Args(); !slices.Equal(got, c.wantArgs) {
				t.Errorf("Args %q, want %q", got, c.wantArgs)
			}
		})
	}
}
