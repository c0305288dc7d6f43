package inmem_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/roles/inmem"
)

type dataset struct {
	name             string
	matches, players string
	want             reference.Result
}

// TestMain removes the shared datasets (about 11 MB) and the binary from
// the temporary directory after the tests, whatever their outcome.
func TestMain(m *testing.M) { testkit.Main(m) }

// TestSharedDatasets: the datasets the tests share are generated, with
// their reference answers, in one directory of the temporary directory
// (TestMain removes it; the root package's TestTestsLeaveNoDatasets checks
// that nothing is left).
func TestSharedDatasets(t *testing.T) {
	for _, d := range testDatasets(t) {
		for _, f := range []string{d.matches, d.players} {
			if filepath.Dir(filepath.Dir(f)) != sharedDatasets.Dir() {
				t.Errorf("%s: %s is not in %s", d.name, f, sharedDatasets.Dir())
			}
			if _, err := os.Stat(f); err != nil {
				t.Error(err)
			}
		}
		if len(d.want.Answers["q1"]) == 0 {
			t.Errorf("%s: no reference answers", d.name)
		}
	}
}

// testDatasets are the datasets, generated once per test binary with
// their reference answers.
func testDatasets(t *testing.T) []*dataset {
	t.Helper()
	return sharedDatasets.Get(t)
}

var sharedDatasets = testkit.NewShared("wololo-inmem-", func(dir string) ([]*dataset, error) {
	var datasets []*dataset
	for _, c := range []struct {
		name string
		cfg  datagen.Config
	}{
		{"plain-seed1", datagen.Config{Matches: 4000, Seed: 1}},
		{"messy-seed2", datagen.Config{Matches: 6000, Seed: 2, ShuffleColumns: true, CRLF: true, QuoteAll: true}},
	} {
		path := filepath.Join(dir, c.name)
		if _, err := datagen.WriteDir(c.cfg, path); err != nil {
			return nil, fmt.Errorf("generate %s: %w", c.name, err)
		}
		d, err := newDataset(c.name, filepath.Join(path, "matches.csv"), filepath.Join(path, "match_players.csv"))
		if err != nil {
			return nil, err
		}
		datasets = append(datasets, d)
	}
	return datasets, nil
})

// newDataset is a dataset of two files with the reference's answers.
func newDataset(name, matches, players string) (*dataset, error) {
	d := &dataset{name: name, matches: matches, players: players}
	var err error
	if d.want, err = reference.EvaluateFiles(matches, players); err != nil {
		return nil, fmt.Errorf("reference on %s: %w", name, err)
	}
	return d, nil
}

// check runs d and compares all four answers byte for byte, and both
// files' row and malformed counts, with the reference's.
func check(t *testing.T, d *dataset, o inmem.Options) {
	t.Helper()
	o.Matches, o.Players = d.matches, d.players
	res, err := inmem.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("%s: %v", d.name, err)
	}
	want := d.want.Files()
	for _, name := range schema.ResultFiles(queries.Names) {
		if !bytes.Equal(res.Files[name], want[name]) {
			t.Errorf("%s: %s differs from the reference\n got: %.300q\nwant: %.300q", d.name, name, res.Files[name], want[name])
		}
	}
	for f, w := range []reference.FileReport{d.want.Report.Matches, d.want.Report.Players} {
		got := res.Reports[f]
		if got.Rows != w.Rows || got.Malformed != w.Malformed {
			t.Errorf("%s: %s: %d rows, %d malformed; the reference counts %d and %d", d.name, schema.File(f), got.Rows, got.Malformed, w.Rows, w.Malformed)
		}
	}
}

func TestMatchesReference(t *testing.T) {
	sets := testDatasets(t)
	topologies := map[string]deploy.Topology{
		"one-replica-each": deploy.Default().Uniform(1),
		"default":          deploy.Default(),
		"three-shards":     deploy.Default().Uniform(3),
	}
	for name, top := range topologies {
		for _, piece := range []int{0, 4096, 97} {
			t.Run(fmt.Sprintf("%s/piece-%d", name, piece), func(t *testing.T) {
				for _, d := range sets {
					check(t, d, inmem.Options{Topology: top, PieceBytes: piece, Parsers: 3, BatchRows: 100})
				}
			})
		}
	}
}

// TestCountsAsOneIngestWould: the same file parsed as many small pieces
// and as one gives the same report, missing values included.
func TestCountsAsOneIngestWould(t *testing.T) {
	d := testDatasets(t)[1]
	one, err := inmem.Run(context.Background(), inmem.Options{Topology: deploy.Default(), Matches: d.matches, Players: d.players, Parsers: 1, PieceBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	many, err := inmem.Run(context.Background(), inmem.Options{Topology: deploy.Default(), Matches: d.matches, Players: d.players, Parsers: 4, PieceBytes: 333})
	if err != nil {
		t.Fatal(err)
	}
	for f := range one.Reports {
		a, b := one.Reports[f], many.Reports[f]
		if a.Rows != b.Rows || a.Malformed != b.Malformed || fmt.Sprint(a.Missing) != fmt.Sprint(b.Missing) {
			t.Errorf("%s: one piece %+v, many %+v", schema.File(f), a, b)
		}
		if len(a.Missing) == 0 {
			t.Errorf("%s: no missing values: the dataset does not exercise them", schema.File(f))
		}
	}
}

// TestUnclosedQuote: a quote that never closes makes the rest of the file
// one record; the reader hands that rest to one parser, which skips it as
// an oversized record, as the gateway and the reference do.
func TestUnclosedQuote(t *testing.T) {
	dir := t.TempDir()
	var m, p strings.Builder
	m.WriteString("token,ladder,mirror,average_rating,map,server,duration\n")
	p.WriteString("match,rating,civ,winner\n")
	for i := range 300 {
		fmt.Fprintf(&m, "m%03d,RM_1v1,False,%d,arena,eastus,2:30:00\n", i, 1000+i*7)
		fmt.Fprintf(&p, "m%03d,%d,Franks,True\nm%03d,%d,Huns,False\n", i, 1200+i, i, 2100+i)
		if i == 150 {
			p.WriteString("x,\"never closed,Franks,True\n")
		}
	}
	mp, pp := filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv")
	if err := os.WriteFile(mp, []byte(m.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pp, []byte(p.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := newDataset("unclosed", mp, pp)
	if err != nil {
		t.Fatal(err)
	}
	for _, piece := range []int{64, 1000, 0} {
		check(t, d, inmem.Options{Topology: deploy.Default(), PieceBytes: piece, Parsers: 2})
	}
}

func TestRefusesAWrongFile(t *testing.T) {
	d := testDatasets(t)[0]
	_, err := inmem.Run(context.Background(), inmem.Options{Topology: deploy.Default(), Matches: d.players, Players: d.players})
	if err == nil || !strings.Contains(err.Error(), d.players) {
		t.Fatalf("players.csv given as matches: got %v, want an error naming the file", err)
	}
	_, err = inmem.Run(context.Background(), inmem.Options{Topology: deploy.Default(), Matches: d.matches, Players: filepath.Join(t.TempDir(), "absent.csv")})
	if err == nil {
		t.Fatal("a missing file: no error")
	}
}

// TestMalformedLimit: a file of nothing but malformed records fails the
// run with the gateway's message, as it fails a job; a few bad records
// are listed, in file order across pieces, with their offsets, and the
// answers are the reference's; a limit of 1 lets anything through.
func TestMalformedLimit(t *testing.T) {
	dir := t.TempDir()
	var m, p strings.Builder
	m.WriteString("token,ladder,mirror,average_rating,map,server,duration\n")
	p.WriteString("match,rating,civ,winner\n")
	var bad []int64
	for i := range 300 {
		fmt.Fprintf(&m, "m%03d,RM_1v1,False,%d,arena,eastus,2:30:00\n", i, 1000+i*7)
		if i%100 == 50 {
			bad = append(bad, int64(p.Len()))
			p.WriteString("this row;is;wrong\n")
		}
		fmt.Fprintf(&p, "m%03d,%d,Franks,True\nm%03d,%d,Huns,False\n", i, 1200+i, i, 2100+i)
	}
	mp, pp, gp := filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv"), filepath.Join(dir, "garbage.csv")
	garbage := "match,rating,civ,winner\n" + strings.Repeat("a;b;c;d\n", 500)
	for path, data := range map[string]string{mp: m.String(), pp: p.String(), gp: garbage} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := newDataset("few-bad", mp, pp)
	if err != nil {
		t.Fatal(err)
	}
	for _, piece := range []int{64, 1000, 0} {
		o := inmem.Options{Topology: deploy.Default(), PieceBytes: piece, Parsers: 3}
		check(t, d, o)
		o.Matches, o.Players = mp, pp
		res, err := inmem.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, r := range res.Reports[schema.Players].Rejects {
			if r.Reason != schema.RejectFieldCount || string(r.Head) != "this row;is;wrong\n" {
				t.Errorf("pieces of %d: reject %+v", piece, r)
			}
			got = append(got, r.Offset)
		}
		if fmt.Sprint(got) != fmt.Sprint(bad) {
			t.Errorf("pieces of %d: rejects at %v, want %v", piece, got, bad)
		}

		o.Players = gp
		_, err = inmem.Run(context.Background(), o)
		const want = `match_players.csv: 500 of 500 records malformed (100%), more than --max-malformed 10%; first at byte 24 (field-count): "a;b;c;d\n"`
		var tooBad schema.TooMalformed
		if !errors.As(err, &tooBad) || err.Error() != want {
			t.Fatalf("pieces of %d, all garbage: %v\nwant %s", piece, err, want)
		}
		none := schema.MalformedLimit(1)
		o.MaxMalformed = &none
		if _, err := inmem.Run(context.Background(), o); err != nil {
			t.Fatalf("pieces of %d, all garbage under a limit of 1: %v", piece, err)
		}
	}
}

// TestStopsWhenCancelled: a run cancelled while it parses stops and says
// why, rather than answering.
func TestStopsWhenCancelled(t *testing.T) {
	d := testDatasets(t)[1]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pieces atomic.Int64
	_, err := inmem.Run(ctx, inmem.Options{Topology: deploy.Default(), Matches: d.matches, Players: d.players, PieceBytes: 512,
		Progress: func(schema.File, int64, int64) { pieces.Add(1); cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a run cancelled after a piece: %v, want context.Canceled", err)
	}
	if pieces.Load() == 0 {
		t.Fatal("the run was not cancelled while it parsed")
	}
}

// FuzzRunVsReference feeds arbitrary bytes as both files, cut into tiny
// pieces: either the run and the reference both refuse the input, or both
// answer, with the same four files and the same counts.
func FuzzRunVsReference(f *testing.F) {
	header := "token,ladder,mirror,average_rating,map,server,duration\n"
	pheader := "match,rating,civ,winner\n"
	f.Add([]byte(header+"a,RM_1v1,false,2100,arena,eastus,2:30:00\n"), []byte(pheader+"a,1500,Franks,true\na,2500,Huns,false\n"), uint8(7))
	f.Add([]byte(header+"\"open,RM_1v1\n"), []byte(pheader+"x,1,\"a\"\"b\",1\r\n\n"), uint8(1))
	f.Add([]byte(header+"z,RM_1v1,False,3000,arena,eastus,\"1 day, 0:00:01\"\n"), []byte(pheader+"z,2001,\"Fr\nanks\",1\nz,1,x,0"), uint8(3))
	f.Add([]byte(header+"x;y\nq;r\n"), []byte(pheader+"a,1,b,1\n"), uint8(2)) // all garbage: past the limit
	f.Fuzz(func(t *testing.T, matches, players []byte, piece uint8) {
		dir := t.TempDir()
		mp, pp := filepath.Join(dir, "matches.csv"), filepath.Join(dir, "match_players.csv")
		if err := os.WriteFile(mp, matches, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pp, players, 0o644); err != nil {
			t.Fatal(err)
		}
		want, refErr := reference.EvaluateFiles(mp, pp)
		res, err := inmem.Run(context.Background(), inmem.Options{Topology: deploy.Default(), Matches: mp, Players: pp, PieceBytes: int(piece%32) + 1, Parsers: 2})
		// The run fails for too many malformed records exactly when the
		// rule says so of the reference's counts.
		limit := schema.MalformedLimit(schema.DefaultMaxMalformed)
		var tooBad schema.TooMalformed
		if refErr == nil {
			past := limit.Exceeded(want.Report.Matches.Rows, want.Report.Matches.Malformed) || limit.Exceeded(want.Report.Players.Rows, want.Report.Players.Malformed)
			if failed := errors.As(err, &tooBad); failed != past {
				t.Fatalf("the run: %v; the reference counts %+v and %+v, past the limit: %v", err, want.Report.Matches, want.Report.Players, past)
			}
			if past {
				return
			}
		}
		switch {
		case refErr != nil && err != nil:
			return
		case refErr != nil:
			t.Fatalf("the reference refuses (%v), the run answers", refErr)
		case err != nil:
			t.Fatalf("the run refuses (%v), the reference answers", err)
		}
		for name, w := range want.Files() {
			if !bytes.Equal(res.Files[name], w) {
				t.Fatalf("%s differs\n got: %q\nwant: %q", name, res.Files[name], w)
			}
		}
		for f, w := range []reference.FileReport{want.Report.Matches, want.Report.Players} {
			if g := res.Reports[f]; g.Rows != w.Rows || g.Malformed != w.Malformed {
				t.Fatalf("%s: %d rows, %d malformed; the reference counts %d and %d", schema.File(f), g.Rows, g.Malformed, w.Rows, w.Malformed)
			}
		}
	})
}
