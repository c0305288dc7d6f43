package client

import (
	"bytes"
	"slices"
	"testing"

	"github.com/wololo/wololo/services/cmdline/cli"
)

// TestSplitQuery: the query is told from the flags wherever it is, and
// one that begins with a comment ("-- ...") is no flag.
func TestSplitQuery(t *testing.T) {
	fs := cli.NewFlagSet("wololo client query", "", &bytes.Buffer{})
	registerGateway(fs)
	fs.String("job", "", "")
	for _, c := range []struct {
		args, flags, sql []string
	}{
		{[]string{"--job", "s", "SELECT 1"}, []string{"--job", "s"}, []string{"SELECT 1"}},
		{[]string{"SELECT 1", "--job=s", "--tls-dir", "d"}, []string{"--job=s", "--tls-dir", "d"}, []string{"SELECT 1"}},
		{[]string{"-- a comment\nSELECT 1", "-job", "s"}, []string{"-job", "s"}, []string{"-- a comment\nSELECT 1"}},
		{[]string{"-h"}, []string{"-h"}, nil},
		{[]string{"a", "b", "--job", "s"}, []string{"--job", "s"}, []string{"a", "b"}},
	} {
		flags, sql := splitQuery(fs, c.args)
		if !slices.Equal(flags, c.flags) || !slices.Equal(sql, c.sql) {
			t.Errorf("splitQuery(%q) = %q, %q; want %q, %q", c.args, flags, sql, c.flags, c.sql)
		}
	}
}

// TestPrintTable: an answer as a terminal shows it.
func TestPrintTable(t *testing.T) {
	var b bytes.Buffer
	if err := printTable(&b, []byte("civ,games\nAztecs,12\n\"Franks, the\",3\n")); err != nil {
		t.Fatal(err)
	}
	want := "civ          games\n---          -----\nAztecs       12\nFranks, the  3\n(2 rows)\n"
	if b.String() != want {
		t.Fatalf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
