package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/node"
	"github.com/wololo/wololo/services/reference"
)

// TestValuesThatAreNotUTF8 runs a dataset whose tokens, civs, servers and
// maps hold bytes that are not UTF-8 (Latin-1 letters, 0xFE, 0xFF) through
// the graph: the answers equal the reference's byte for byte, and nothing
// hangs or fails on a marshal.
func TestValuesThatAreNotUTF8(t *testing.T) {
	src := testDatasets(t)[0]
	dir := t.TempDir()
	replace := [][2]string{
		{"-", "\xfe"},                       // inside tokens, in both files
		{"Franks", "Fran\xe7ks"},            // a civ
		{"Huns", "H\xfcns"},                 // a civ
		{"brazilsouth", "br\xe1zilsouth"},   // a server
		{"black_forest", "bl\xe4ck_forest"}, // a map
	}
	latin1 := func(from, to string) string {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range replace {
			b = bytes.ReplaceAll(b, []byte(r[0]), []byte(r[1]))
		}
		path := filepath.Join(dir, to)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	d := &dataset{name: "latin1", matches: latin1(src.matches, "matches.csv"), players: latin1(src.players, "match_players.csv")}
	var err error
	if d.want, err = reference.EvaluateFiles(d.matches, d.players); err != nil {
		t.Fatal(err)
	}
	if !bytes.ContainsAny(d.want.Q3, "\xe7\xfc") || !bytes.Contains(d.want.Q1, []byte("\xfe")) {
		t.Fatalf("the reference's answers hold none of the changed bytes; the test exercises nothing:\n%q\n%.200q", d.want.Q3, d.want.Q1)
	}
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	submit(t, c, d)
}
