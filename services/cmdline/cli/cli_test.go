package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string
		wantN   int
		usage   bool
	}{
		{"flags only", []string{"--n", "3"}, "", 3, false},
		{"no args", nil, "", 1, false},
		{"a stray argument", []string{"--n", "2", "extra"}, `unexpected argument "extra"`, 2, true},
		{"an unknown flag", []string{"--m"}, "flag provided but not defined: -m", 1, true},
		{"help", []string{"-h"}, flag.ErrHelp.Error(), 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out strings.Builder
			fs := NewFlagSet("wololo test", "usage: wololo test [--n N]\n", &out)
			n := fs.Int("n", 1, "how many")
			err := Parse(fs, c.args)
			if got := errString(err); got != c.wantErr {
				t.Fatalf("error %q, want %q", got, c.wantErr)
			}
			if *n != c.wantN {
				t.Errorf("n = %d, want %d", *n, c.wantN)
			}
			printed := strings.Contains(out.String(), "usage: wololo test [--n N]\n\nflags:\n  -n int\n    \thow many (default 1)\n")
			if printed != c.usage {
				t.Errorf("usage printed %v, want %v:\n%s", printed, c.usage, out.String())
			}
			if c.name == "help" && !errors.Is(err, flag.ErrHelp) {
				t.Errorf("-h gave %v, want flag.ErrHelp", err)
			}
			wantCode := map[bool]int{true: 2, false: 0}[c.wantErr != "" && c.name != "help"]
			if got := ExitCode(err); got != wantCode {
				t.Errorf("exit code %d, want %d", got, wantCode)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRequiredAndExitCodes(t *testing.T) {
	var out strings.Builder
	fs := NewFlagSet("wololo test", "usage: wololo test --in F\n", &out)
	in := fs.String("in", "", "input")
	if err := Parse(fs, nil); err != nil {
		t.Fatal(err)
	}
	err := Required(fs, "in")
	if err == nil || err.Error() != "--in is required" || !errors.Is(err, ErrUsage) || ExitCode(err) != 2 {
		t.Fatalf("Required = %v (exit %d), want a usage error", err, ExitCode(err))
	}
	if !strings.Contains(out.String(), "usage: wololo test --in F") {
		t.Errorf("usage not printed: %q", out.String())
	}
	*in = "x"
	if err := Required(fs, "in"); err != nil {
		t.Fatalf("Required with the flag set = %v", err)
	}
	for _, c := range []struct {
		err  error
		code int
	}{{nil, 0}, {flag.ErrHelp, 0}, {fmt.Errorf("run: %w", flag.ErrHelp), 0}, {errors.New("disk full"), 1}, {Usagef(fs, "bad"), 2}, {fmt.Errorf("wrapped: %w", Usagef(fs, "bad")), 2}} {
		if got := ExitCode(c.err); got != c.code {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.code)
		}
	}
}

func TestExitCodeKinds(t *testing.T) {
	base := errors.New("boom")
	cases := []struct {
		name string
		err  error
		code int
	}{
		{"plain", base, ExitError},
		{"job failed", Mark(base, ErrJobFailed), ExitJobFailed},
		{"refused", Mark(base, ErrRefused), ExitRefused},
		{"unreachable", Mark(base, ErrUnreachable), ExitUnreachable},
		{"wrapped and hinted", WithHint(fmt.Errorf("submit: %w", Mark(base, ErrUnreachable)), "resume it"), ExitUnreachable},
		{"stalled", WithHint(fmt.Errorf("submit: %w", Mark(base, ErrStalled)), "resume it"), ExitStalled},
		{"cancelled", fmt.Errorf("submit: %w", Mark(base, ErrCancelled)), ExitCancelled},
		{"usage wins", Mark(usageError{base}, ErrRefused), ExitUsage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ExitCode(c.err); got != c.code {
				t.Errorf("ExitCode = %d, want %d", got, c.code)
			}
			if !errors.Is(c.err, base) || !strings.Contains(c.err.Error(), "boom") {
				t.Errorf("the mark lost the error: %v", c.err)
			}
		})
	}
	if Mark(nil, ErrRefused) != nil {
		t.Error("Mark(nil) is not nil")
	}
	for _, code := range []string{"0 ", "1 ", "2 ", "3 ", "4 ", "5 ", "6 ", "7 ", "130 "} {
		if !strings.Contains(ExitCodes, "\n  "+code) {
			t.Errorf("ExitCodes does not list %q", code)
		}
	}
}

func TestStringEnv(t *testing.T) {
	cases := []struct {
		name, env string
		args      []string
		want      string
	}{
		{"default", "", nil, "def"},
		{"variable over default", "fromenv", nil, "fromenv"},
		{"flag over variable", "fromenv", []string{"--addr", "fromflag"}, "fromflag"},
		{"flag over default", "", []string{"--addr", "fromflag"}, "fromflag"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("WOLOLO_TEST_ADDR", c.env)
			var out strings.Builder
			fs := NewFlagSet("wololo test", "usage\n", &out)
			var addr string
			StringEnv(fs, &addr, "addr", "WOLOLO_TEST_ADDR", "def", "an address")
			if err := Parse(fs, c.args); err != nil {
				t.Fatal(err)
			}
			if addr != c.want {
				t.Errorf("addr %q, want %q", addr, c.want)
			}
			if u := fs.Lookup("addr").Usage; u != "an address ($WOLOLO_TEST_ADDR)" {
				t.Errorf("usage %q", u)
			}
		})
	}
}
