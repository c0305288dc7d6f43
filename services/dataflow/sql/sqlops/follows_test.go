package sqlops_test

import (
	"bytes"
	"slices"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
)

// TestAFollowingOutputKeepsItsInputsOrder is the claim that rebuilding a
// lost shard alone rests on (services/roles/gateway/rebuild.go;
// physical.ShardOutput.Follows): a shard's output channel that follows
// one input channel (q1-to-gateway, a distinct of matches-by-token)
// carries the same rows in the same order whenever the instance is sent
// the same rows of that input in the same order, whatever batches they
// came in and however its other input interleaves with them; so a
// receiver that applied the first R rows of a lost instance can skip R
// rows of its rebuilt one. The rows go to shard 1 of 2 as the gateway
// routes them, once from the files read whole and once from the files
// read in pieces (other batches), and the shard instance takes them in
// two interleavings.
func TestAFollowingOutputKeepsItsInputsOrder(t *testing.T) {
	m, pl, tables := generated(t, 20000, 7)
	p := planOf(t, defaultTexts(), queries.Names, tables, 2)
	var follows []physical.ShardOutput
	for _, o := range p.ShardLoss().Outputs {
		if o.Follows != "" {
			follows = append(follows, o)
		}
	}
	if len(follows) != 1 || follows[0].Channel != "q1-to-gateway" {
		t.Fatalf("the outputs that follow an input: %+v, want q1-to-gateway's alone", follows)
	}
	whole := routedTo(t, p, 1, []map[string]*exec.Table{tables})
	var pieces []map[string]*exec.Table
	for _, cut := range []int{3, 5, 2} { // thirds, fifths, halves of what is left
		var mh, ph []byte
		mh, m = splitCSV(m, cut)
		ph, pl = splitCSV(pl, cut)
		pieces = append(pieces, readTables(t, mh, ph))
	}
	pieces = append(pieces, readTables(t, m, pl))
	cut := routedTo(t, p, 1, pieces)
	if slices.Equal(batchSizes(whole, "matches-by-token"), batchSizes(cut, "matches-by-token")) {
		t.Fatalf("the two routings cut matches-by-token alike (%v): the test compares nothing", batchSizes(whole, "matches-by-token"))
	}
	first := outputRows(t, p, 1, whole, false, follows[0].Channel)
	second := outputRows(t, p, 1, cut, true, follows[0].Channel)
	if len(first) == 0 {
		t.Fatal("no rows on q1-to-gateway: the test compares nothing")
	}
	if !slices.Equal(first, second) {
		t.Fatalf("q1-to-gateway carried %d rows, then %d in another order or others", len(first), len(second))
	}
}

// splitCSV cuts a CSV file with a header row into about its 1/n first
// records and the rest, each with the header.
func splitCSV(f []byte, n int) (head, rest []byte) {
	nl := bytes.IndexByte(f, '\n') + 1
	at := nl + (len(f)-nl)/n
	at += bytes.IndexByte(f[at:], '\n') + 1
	return f[:at], append(slices.Clone(f[:nl]), f[at:]...)
}

type routed struct {
	ch   string
	rows *wololov1.RowBatch // nil: the channel's end
}

// routedTo is what the gateway sends shard instance to of the tables, in
// order: each map's matches, then its players; then the ends.
func routedTo(t *testing.T, p *physical.Plan, to int, tables []map[string]*exec.Table) []routed {
	t.Helper()
	var out []routed
	columns := map[string][]string{"matches": tables[0]["matches"].Columns, "match_players": tables[0]["match_players"].Columns}
	gw, err := sqlops.NewTask(p, p.Gateway.Name, 0, columns, nil, func(ch *physical.Channel, i int, rows *sqlops.Rows) error {
		if ch.To == p.Shard.Name && i == to {
			out = append(out, routed{ch.Name, rows.RowBatch()})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tabs := range tables {
		for _, name := range []string{"matches", "match_players"} {
			for _, b := range tabs[name].Batches {
				if err := gw.Table(name, b); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, name := range []string{"matches", "match_players"} {
		if err := gw.EndTable(name); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// batchSizes is the row counts of a channel's batches.
func batchSizes(rs []routed, ch string) []int {
	var n []int
	for _, r := range rs {
		if r.ch == ch && r.rows != nil {
			n = append(n, int(r.rows.GetColumns().GetRows()))
		}
	}
	return n
}

// outputRows runs shard instance index on what it was routed (players
// first when playersFirst, each channel's batches in their order) and is
// the rows it sends on channel out, in order, as text.
func outputRows(t *testing.T, p *physical.Plan, index int, in []routed, playersFirst bool, out string) []string {
	t.Helper()
	var rows []string
	tables := map[int]*exec.KeyTable{}
	sh, err := sqlops.NewTask(p, p.Shard.Name, index, nil, func(id int) *exec.KeyTable {
		if tables[id] == nil {
			tables[id] = exec.NewKeyTable()
		}
		return tables[id]
	}, func(ch *physical.Channel, _ int, r *sqlops.Rows) error {
		if ch.Name != out || r == nil || r.Len() == 0 {
			return nil
		}
		b := sentColumns(t, r.RowBatch())
		for i := range b.N {
			var row []byte
			for _, c := range b.Cols {
				row = append(exec.AppendText(row, c, i), ',')
			}
			rows = append(rows, string(row))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	order := slices.Clone(in)
	if playersFirst {
		slices.SortStableFunc(order, func(a, b routed) int {
			return boolInt(a.ch == "matches-by-token") - boolInt(b.ch == "matches-by-token")
		})
	}
	for _, r := range order {
		if r.rows == nil {
			err = sh.End(r.ch, 0)
		} else {
			err = sh.Receive(r.ch, 0, r.rows)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
