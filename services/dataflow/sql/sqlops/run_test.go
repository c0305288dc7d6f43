package sqlops_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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

// TestRunFeedsParted: a table whose records are parted by the instance
// their rows go to as they are parsed (RouteOf, exec.NewCSVReaderParted:
// match_players, which one exchange routes by match to the shards) gives
// Run's answers, its batches handed on without a copy (Task.TableTo);
// matches, read by an exchange whose every route has a condition, is not
// parted; and a feed parted for a table whose rows are not routed so is
// refused. With two shards and with three (Route's parity, and its
// hash).
func TestRunFeedsParted(t *testing.T) {
	for _, shards := range []int{2, 3} {
		t.Run(fmt.Sprint(shards, " shards"), func(t *testing.T) { testRunFeedsParted(t, shards) })
	}
}

func testRunFeedsParted(t *testing.T, shards int) {
	m, pl, tables := generated(t, 3000, 9)
	p := planOf(t, defaultTexts(), queries.Names, tables, shards)
	want, err := sqlops.Run(p, tables, "matches", "match_players")
	if err != nil {
		t.Fatal(err)
	}
	feed := func(name string, file []byte, parted bool) sqlops.Feed {
		r, err := exec.NewCSVReaderParted(bytes.NewReader(file), reference.MaxRecordBytes, nil, 3, func(header []string) (exec.PartBy, error) {
			return sqlops.RouteOf(p, name, header)
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close)
		if r.Parted() != parted {
			t.Fatalf("%s: parted %v, want %v", name, r.Parted(), parted)
		}
		f := sqlops.Feed{Table: name, Columns: r.Columns, Next: r.Next}
		if parted {
			f.Part = r.Part
		}
		return f
	}
	got, err := sqlops.RunFeeds(p, []sqlops.Feed{feed("matches", m, false), feed("match_players", pl, true)})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range queries.Names {
		if !bytes.Equal(got.Files[name], want.Files[name]) {
			t.Errorf("%s differs from Run's:\n got %.300q\nwant %.300q", name, got.Files[name], want.Files[name])
		}
	}
	wrong := feed("matches", m, false)
	wrong.Part = func() int { return 0 }
	if _, err := sqlops.RunFeeds(p, []sqlops.Feed{wrong, feed("match_players", pl, true)}); err == nil || !strings.Contains(err.Error(), "not routed by a field") {
		t.Errorf("a parted feed of a table not routed so: %v", err)
	}
}

// TestRunFeedsContextStops: a run whose context is cancelled (a demo's
// Ctrl-C) ends with the context's error, reading no more of its feeds:
// here a matches table that never ends, which a runner deaf to its
// context would run on for ever.
func TestRunFeedsContextStops(t *testing.T) {
	m, pl, tables := generated(t, 300, 9)
	p := planOf(t, defaultTexts(), queries.Names, tables, 2)
	r, err := exec.NewCSVReader(bytes.NewReader(m), reference.MaxRecordBytes, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first, err := r.Next()
	if err != nil || first == nil {
		t.Fatalf("the first batch of matches: %v, %v", first, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reads := 0
	endless := sqlops.Feed{Table: "matches", Columns: r.Columns, Next: func() (*exec.Batch, error) {
		reads++
		if reads == 3 {
			cancel()
		}
		return first, nil // again and again: the table never ends
	}}
	pr, err := exec.NewCSVReader(bytes.NewReader(pl), reference.MaxRecordBytes, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	players := sqlops.Feed{Table: "match_players", Columns: pr.Columns, Next: pr.Next}
	done := make(chan error, 1)
	go func() {
		_, err := sqlops.RunFeedsContext(ctx, p, []sqlops.Feed{endless, players})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled run ended with %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute): // a failure guard, not a timing
		t.Fatal("the run went on reading its endless table after its context was cancelled")
	}
}
