package version

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.1",
		Main:      debug.Module{Path: "github.com/wololo/wololo", Version: "v0.0.0-20260101000000-0123456789ab+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"}, {Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-01-01T00:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		},
	}
	here := runtime.GOOS + "/" + runtime.GOARCH
	cases := []struct {
		name     string
		bi       *debug.BuildInfo
		want     Info
		textHas  []string
		textLack []string
	}{
		{"a git build with changes", stamped,
			Info{Module: "github.com/wololo/wololo", Version: "v0.0.0-20260101000000-0123456789ab+dirty", Commit: "0123456789abcdef0123456789abcdef01234567",
				CommitTime: "2026-01-01T00:00:00Z", Modified: true, Go: "go1.26.1", Platform: "linux/arm64"},
			[]string{"wololo v0.0.0-20260101000000-0123456789ab+dirty\n", "commit  0123456789abcdef0123456789abcdef01234567 (modified: built with uncommitted changes), 2026-01-01T00:00:00Z", "go      go1.26.1 linux/arm64"}, nil},
		{"no vcs information", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/wololo/wololo", Version: "(devel)"}},
			Info{Module: "github.com/wololo/wololo", Version: "(devel)", Go: "go1.26.0", Platform: here},
			[]string{"wololo (devel)\n", "commit  unknown (built without VCS information)"}, []string{"modified"}},
		{"no build information", nil,
			Info{Version: "unknown", Go: runtime.Version(), Platform: here},
			[]string{"wololo unknown\n"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FromBuildInfo(c.bi)
			if got != c.want {
				t.Fatalf("FromBuildInfo = %+v\nwant            %+v", got, c.want)
			}
			var text bytes.Buffer
			if err := got.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			for _, s := range c.textHas {
				if !strings.Contains(text.String(), s) {
					t.Errorf("text lacks %q:\n%s", s, text.String())
				}
			}
			for _, s := range c.textLack {
				if strings.Contains(text.String(), s) {
					t.Errorf("text has %q:\n%s", s, text.String())
				}
			}
			var js bytes.Buffer
			if err := got.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			var back Info
			if err := json.Unmarshal(js.Bytes(), &back); err != nil || back != got {
				t.Fatalf("JSON %s parses back as %+v (%v), want %+v", js.String(), back, err, got)
			}
			var fields map[string]any
			if err := json.Unmarshal(js.Bytes(), &fields); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"module", "version", "commit", "modified", "go", "platform"} {
				if _, ok := fields[k]; !ok {
					t.Errorf("JSON lacks %q: %s", k, js.String())
				}
			}
		})
	}
}

func TestRun(t *testing.T) {
	cases := []struct {
		args []string
		want func(out string) bool
	}{
		{nil, func(out string) bool {
			return strings.HasPrefix(out, "wololo ") && strings.Contains(out, "  go      go")
		}},
		{[]string{"--json"}, func(out string) bool {
			var in Info
			return json.Unmarshal([]byte(out), &in) == nil && in.Go == runtime.Version() && strings.Count(out, "\n") == 1
		}},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		if err := Run(context.Background(), c.args, &stdout, &stderr); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if !c.want(stdout.String()) {
			t.Errorf("%q printed:\n%s", c.args, stdout.String())
		}
	}
	if err := Run(context.Background(), []string{"extra"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("a stray argument was accepted")
	}
}

func TestWithLinked(t *testing.T) {
	stamped := Info{Commit: "aaa", Modified: false}
	cases := []struct {
		name             string
		in               Info
		commit, modified string
		want             Info
	}{
		{"nothing linked", Info{}, "", "", Info{}},
		{"linked fills an unstamped build", Info{}, "bbb", "true", Info{Commit: "bbb", Modified: true}},
		{"linked, clean", Info{}, "bbb", "false", Info{Commit: "bbb"}},
		{"the toolchain's stamp wins", stamped, "bbb", "true", stamped},
	}
	for _, c := range cases {
		if got := withLinked(c.in, c.commit, c.modified); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
