package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/roles/node"
)

// TestValuesThatAreNotUTF8 runs a dataset whose tokens, civs, servers and
// maps hold bytes that are not UTF-8 (Latin-1 letters, 0xFE, 0xFF) and
// whose files each hold one record over the 8 MiB record limit (a quoted
// civ, an unquoted token) and a dozen rows just under it through the graph: the answers and the reports
// (the long records counted as malformed) equal the reference's byte for
// byte, and nothing hangs or fails on a marshal.
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
	huge := bytes.Repeat([]byte("x"), schema.MaxRecordBytes+1)
	long := map[string][]byte{
		"matches.csv":       append(append([]byte("\n"), huge...), ",2,False,RM_1v1,1,2100,arena,tiny,2,eastus,2:30:00\n"...),
		"match_players.csv": append(append([]byte("\nt,m,1000,Red,\""), huge...), "\",1,True\n"...),
	}
	// And rows just under the limit, many of them: no batch may outgrow a
	// message.
	for i := 0; i < 12; i++ {
		row := fmt.Sprintf("t%d,m%d,2500,Red,%s,1,True\n", i, i, bytes.Repeat([]byte{'A' + byte(i)}, schema.MaxRecordBytes-64))
		long["match_players.csv"] = append(long["match_players.csv"], row...)
	}
	latin1 := func(from, to string) string {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range replace {
			b = bytes.ReplaceAll(b, []byte(r[0]), []byte(r[1]))
		}
		// One record over the limit in the middle of the file.
		if cut := bytes.IndexByte(b[len(b)/2:], '\n'); cut >= 0 {
			cut += len(b) / 2
			b = append(b[:cut:cut], append(long[to], b[cut+1:]...)...)
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
	if q1, q3 := d.want.Answers["q1"], d.want.Answers["q3"]; !bytes.ContainsAny(q3, "\xe7\xfc") || !bytes.Contains(q1, []byte("\xfe")) {
		t.Fatalf("the reference's answers hold none of the changed bytes; the test exercises nothing:\n%q\n%.200q", q3, q1)
	}
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	submit(t, c, d)
}
