package client

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
)

// TestRequestOfInputs: a job of tables only sends no file header; a
// gzip-compressed table, on disk or on stdin, is sent as the same header
// (columns, offset, size, fingerprint) as the plain file; a query of
// matches in a job of tables only, one file without the other and two
// inputs on stdin are refused before anything is sent.
func TestRequestOfInputs(t *testing.T) {
	dir := t.TempDir()
	text := "civ,region\r\nfranks,west\r\n" + strings.Repeat("mongols,east\r\n", 1000)
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write([]byte(text))
	w.Close()
	plain, zipped := filepath.Join(dir, "regions.csv"), filepath.Join(dir, "regions.csv.gz")
	os.WriteFile(plain, []byte(text), 0o644)
	os.WriteFile(zipped, z.Bytes(), 0o644)
	q := []sqljob.Query{{Name: "n", Text: "SELECT region, COUNT(*) AS n FROM regions GROUP BY region"}}
	// request is the CreateJob of the job with regions at path, and its
	// table's header encoded.
	request := func(path string, edit func(*SubmitOptions)) ([]byte, error) {
		o := SubmitOptions{Queries: q, Tables: []Table{{Name: "regions", Path: path}}, Stdin: bytes.NewReader(z.Bytes())}
		if edit != nil {
			edit(&o)
		}
		req, err := Request(o)
		if err != nil {
			return nil, err
		}
		if req.Matches != nil || req.Players != nil || len(req.Tables) != 1 {
			t.Fatalf("a job of tables only sent %v", req)
		}
		return proto.Marshal(req.Tables[0].Header)
	}
	want, err := request(plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{zipped, "-"} {
		got, err := request(path, nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v, or its header differs from the plain file's", path, err)
		}
	}
	for what, edit := range map[string]func(*SubmitOptions){
		"a query of matches": func(o *SubmitOptions) {
			o.Queries = append(o.Queries, sqljob.Query{Name: "m", Text: "SELECT COUNT(*) AS n FROM matches"})
		},
		"matches alone": func(o *SubmitOptions) { o.Matches = plain },
		"two stdins": func(o *SubmitOptions) {
			o.Tables = append(o.Tables, Table{Name: "b", Path: "-"}, Table{Name: "c", Path: "-"})
		},
	} {
		_, err := request(plain, edit)
		if err == nil || what != "a query of matches" && !errors.Is(err, cli.ErrUsage) || what == "a query of matches" && !strings.Contains(err.Error(), "this job has no matches.csv") {
			t.Errorf("%s: %v", what, err)
		}
	}
}
