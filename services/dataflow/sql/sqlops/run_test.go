package sqlops_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// TestRunFeeds: the tables streamed batch by batch (exec.CSVReader, small
// pieces, several parsers) give Run's answers; a table the plan does not
// scan is not read, one it scans and is not given is refused, and a
// table whose reading fails fails the run.
func TestRunFeeds(t *testing.T) {
	m, pl, tables := generated(t, 3000, 9)
	p := planOf(t, defaultTexts(), queries.Names, tables, 2)
	want, err := sqlops.Run(p, tables, "matches", "match_players")
	if err != nil {
		t.Fatal(err)
	}
	feed := func(name string, file []byte) sqlops.Feed {
		r, err := exec.NewCSVReader(bytes.NewReader(file), reference.MaxRecordBytes, nil, 3)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		return sqlops.Feed{Table: name, Columns: r.Columns, Next: r.Next}
	}
	unread := sqlops.Feed{Table: "other", Columns: []string{"x"}, Next: func() (*exec.Batch, error) {
		t.Error("a table the plan does not scan is read")
		return nil, nil
	}}
	got, err := sqlops.RunFeeds(p, []sqlops.Feed{feed("matches", m), unread, feed("match_players", pl)})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range queries.Names {
		if !bytes.Equal(got.Files[name], want.Files[name]) {
			t.Errorf("%s differs from Run's:\n got %.300q\nwant %.300q", name, got.Files[name], want.Files[name])
		}
	}

	if _, err := sqlops.RunFeeds(p, []sqlops.Feed{feed("matches", m)}); err == nil || !strings.Contains(err.Error(), `no table "match_players"`) {
		t.Errorf("a scanned table not given: %v", err)
	}
	broken := feed("match_players", pl)
	broken.Next = func() (*exec.Batch, error) { return nil, errors.New("disk gone") }
	if _, err := sqlops.RunFeeds(p, []sqlops.Feed{feed("matches", m), broken}); err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Errorf("a table whose reading fails: %v", err)
	}
}
