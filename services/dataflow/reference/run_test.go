package reference

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "matches.csv", fullMatches)
	p := writeFile(t, dir, "match_players.csv", fullPlayers)
	out := filepath.Join(dir, "out", "nested")

	var stdout, stderr bytes.Buffer
	if err := Run(context.Background(), []string{"--matches", m, "--players", p, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr.String())
	}
	for name, want := range map[string]string{"q1.csv": fullQ1, "q2.csv": fullQ2, "q3.csv": fullQ3, "q4.csv": fullQ4} {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	for _, want := range []string{
		"reference evaluation done in ",
		"matches.csv rows read 3, malformed (skipped) 0",
		"match_players.csv rows read 8, malformed (skipped) 0",
		"q1.csv 1 rows 9 bytes " + filepath.Join(out, "q1.csv"),
		"q2.csv 2 rows 12 bytes",
		"q3.csv 2 rows 63 bytes",
		"q4.csv 2 rows 41 bytes",
	} {
		if !strings.Contains(strings.Join(strings.Fields(stdout.String()), " "), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "m.csv", fullMatches)
	p := writeFile(t, dir, "p.csv", fullPlayers)
	bad := writeFile(t, dir, "bad.csv", "token,ladder\n")
	missing := filepath.Join(dir, "nope.csv")
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		name string
		args []string
		want string // substring of the error
	}{
		{"no flags", nil, "--matches is required"},
		{"no players", []string{"--matches", m, "--out", out}, "--players is required"},
		{"no out", []string{"--matches", m, "--players", p}, "--out is required"},
		{"unknown flag", []string{"--bogus"}, "flag provided but not defined: -bogus"},
		{"stray argument", []string{"--matches", m, "--players", p, "--out", out, "extra"}, `unexpected argument "extra"`},
		{"unreadable matches", []string{"--matches", missing, "--players", p, "--out", out}, "open " + missing},
		{"unreadable players", []string{"--matches", m, "--players", missing, "--out", out}, "open " + missing},
		{"missing column", []string{"--matches", bad, "--players", p, "--out", out}, bad + `: header has no "mirror" column`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := Run(context.Background(), c.args, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed run created %s", out)
	}
}

func TestRunHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), []string{"-h"}, &stdout, &stderr)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("got %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"usage: wololo reference", "-matches", "-players", "-out"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestRunCancelled(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(mh)
	for i := 0; i < 1<<17; i++ {
		b.WriteString("a,x,,2001,m,eastus,3:00:00\n")
	}
	m := writeFile(t, dir, "m.csv", b.String())
	p := writeFile(t, dir, "p.csv", ph)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Run(ctx, []string{"--matches", m, "--players", p, "--out", filepath.Join(dir, "out")}, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestEvaluateFilesMatchesEvaluate(t *testing.T) {
	dir := t.TempDir()
	m := writeFile(t, dir, "m.csv", fullMatches)
	p := writeFile(t, dir, "p.csv", fullPlayers)
	a, err := EvaluateFiles(m, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Evaluate(strings.NewReader(fullMatches), strings.NewReader(fullPlayers))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Answers) != 4 || !maps.EqualFunc(a.Answers, b.Answers, bytes.Equal) {
		t.Errorf("the answers differ: %q vs %q", a.Answers, b.Answers)
	}
	if a.Report != b.Report {
		t.Errorf("reports differ: %+v vs %+v", a.Report, b.Report)
	}
	out := filepath.Join(dir, "a", "b")
	if err := WriteDir(a, out); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "q3.csv")); string(got) != fullQ3 {
		t.Errorf("q3.csv: got %q", got)
	}
}
