package main

import (
	"bytes"
	"context"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// The names of the running system that the docs and the help texts give
// (issue 38: docs/operations.md and `wololo help` named the retired
// graph's streams and stages, q1-tokens, players-filter, long after the
// SQL plan replaced them): each must be one the system has.

// systemNames are the names of the default deployment running the four
// default queries: its tasks and their instances (deploy.Default), the
// masters, the channels of the queries' physical plan (as `wololo
// explain` prints them) and their streams (sqlops.ChannelStream: what
// `top`, the logs and the metrics show).
func systemNames(t *testing.T) map[string]bool {
	t.Helper()
	top := deploy.Default()
	names := map[string]bool{}
	for _, s := range top.Stages {
		names[s.Name] = true
	}
	for _, in := range append(top.Instances(), top.MasterInstances()...) {
		names[in.Name()] = true
	}
	shape, err := physical.ShapeOf(top)
	if err != nil {
		t.Fatal(err)
	}
	var spec sqljob.Spec
	spec.Matches, spec.Players = datagen.Headers()
	spec.Queries = explain.DefaultQueries()
	job, err := sqljob.Check(spec, sqljob.DefaultLimits, shape)
	if err != nil {
		t.Fatalf("plan the default queries: %v", err)
	}
	for i, ch := range job.Plan.Channels {
		names[ch.Name] = true
		names[sqlops.ChannelStream(i, ch.Name)] = true
	}
	return names
}

// nameToken is a hyphenated identifier that is not a flag (no leading
// '-'): the shape of every stream, stage, task and instance name.
var nameToken = regexp.MustCompile(`(^|[^-\w.])([a-z][a-zA-Z0-9_+]*(?:-[a-zA-Z0-9_+]+)+)`)

// nameShapes are the shapes of the names of streams, stages and tasks,
// the retired graph's and today's: a query's stream (q3-partials,
// q1-to-gateway), a channel by its key (matches-by-token), a stream of
// the plan (c0-matches-by-token), a stage by what it did
// (players-filter, q3-joiner, q3-civs), an instance (shard-1,
// players-filter-0).
var nameShapes = []*regexp.Regexp{
	regexp.MustCompile(`^q[0-9]+-`),
	regexp.MustCompile(`^c[0-9]+-`),
	regexp.MustCompile(`^[a-z_]*(match|player|token|civ)[a-z_]*-by-`),
	regexp.MustCompile(`-(filter|grouper|joiner|aggregator|partials|tokens|civs|players|matches)(-[0-9]+)?$`),
	regexp.MustCompile(`^[a-z][a-z_]+(-[a-z_]+)*-[0-9]+$`),
}

// notSystemNames are tokens of those shapes that name no part of the
// system, and why.
var notSystemNames = map[string]string{
	"c0-payroll-by-ssn":                        "the stream of a user's query, an example",
	"c3-match_players-by-CASE_WHEN__rating___": "the stream of a user's query, an example",
}

// container is the prefix of a container's name (wololo-shard-0) or a
// Swarm service's (wololo-swarm_shard-0) before the instance's.
var container = regexp.MustCompile(`^wololo-(?:[a-z]+_)?`)

// namedPlaces are the texts a reader meets the system's names in:
// README.md, docs/*.md, services/**/README.md, and the help of `wololo`
// and of each command and subcommand, with where each comes from.
func namedPlaces(t *testing.T) (where, texts []string) {
	t.Helper()
	files := []string{"README.md"}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, docs...)
	err = filepath.WalkDir("services", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "README.md" {
			files = append(files, filepath.ToSlash(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		where, texts = append(where, f), append(texts, readFile(t, f))
	}
	var help bytes.Buffer
	usage(&help)
	where, texts = append(where, "wololo help"), append(texts, help.String())
	for _, c := range commands {
		out := commandHelp(c, nil)
		where, texts = append(where, "wololo "+c.name+" -h"), append(texts, out)
		for _, sub := range subcommands(c.name, out) {
			where = append(where, "wololo "+c.name+" "+sub+" -h")
			texts = append(texts, commandHelp(c, []string{sub}))
		}
	}
	return where, texts
}

// commandHelp is what `wololo NAME [SUB] -h` prints.
func commandHelp(c command, sub []string) string {
	var out bytes.Buffer
	_ = c.run(context.Background(), append(sub, "-h"), &out, &out)
	return out.String()
}

// subcommands are the subcommands a command's help lists: on its usage
// lines (`wololo chaos election ...`) and under its "commands:".
func subcommands(name, help string) []string {
	var subs []string
	usageLine := regexp.MustCompile(`(?m)^(?:usage:)?\s+wololo ` + regexp.QuoteMeta(name) + ` ([a-z]+)\b`)
	for _, m := range usageLine.FindAllStringSubmatch(help, -1) {
		subs = append(subs, m[1])
	}
	if _, list, ok := strings.Cut(help, "\ncommands:\n"); ok {
		for _, l := range strings.Split(list, "\n") {
			f := strings.Fields(l)
			if len(f) == 0 || !strings.HasPrefix(l, "  ") {
				break
			}
			if !strings.HasPrefix(l, "   ") {
				subs = append(subs, f[0])
			}
		}
	}
	slices.Sort(subs)
	return slices.Compact(subs)
}

// TestNamedStreamsStagesAndTasksExist: every name of a stream, stage or
// task (nameShapes) that README.md, docs/*.md, services/**/README.md or
// a help text of the binary gives is one the default deployment has when
// it runs the four default queries (systemNames), or is listed in
// notSystemNames with why it is not one.
func TestNamedStreamsStagesAndTasksExist(t *testing.T) {
	have := systemNames(t)
	for _, n := range []string{"gateway", "shard-1", "master-3", "matches-by-token", "q1-to-gateway"} {
		if !have[n] {
			t.Fatalf("the system's names lack %q: the collection is broken (%v)", n, have)
		}
	}
	where, texts := namedPlaces(t)
	if len(texts) < 30 {
		t.Fatalf("%d texts; the collection is broken", len(texts))
	}
	used := map[string]bool{}
	var bad []string
	checked := 0
	for i, text := range texts {
		for n, line := range strings.Split(text, "\n") {
			for _, m := range nameToken.FindAllStringSubmatch(line, -1) {
				tok := m[2]
				if !slices.ContainsFunc(nameShapes, func(re *regexp.Regexp) bool { return re.MatchString(tok) }) {
					continue
				}
				checked++
				if _, ok := notSystemNames[tok]; ok {
					used[tok] = true
					continue
				}
				if !have[tok] && !have[container.ReplaceAllString(tok, "")] {
					bad = append(bad, where[i]+":"+strconv.Itoa(n+1)+": "+tok)
				}
			}
		}
	}
	t.Logf("%d names checked in %d texts", checked, len(texts))
	if checked < 20 {
		t.Fatalf("%d names checked; the extraction is broken", checked)
	}
	if len(bad) > 0 {
		t.Errorf("%d names of streams, stages or tasks the running system does not have (where: the name); name today's (`wololo explain`, deploy/topology.json), or list it in notSystemNames if it names no part of the system:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	for n := range notSystemNames {
		if !used[n] {
			t.Errorf("notSystemNames lists %q, which no doc or help text gives any more: remove it", n)
		}
	}
}
