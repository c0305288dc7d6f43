package cli

import (
	"errors"
	"flag"
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
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
