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
