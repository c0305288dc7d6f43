package sqlops_test

import (
	"fmt"
	"strings"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/batch"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// TestGatewayRoutesByStageRoute feeds the gateway's Task a parsed batch
// and checks where its exchange sends each row: to the shard stage.Route
// picks by the row's key (a text key's bytes, a number's one form), the
// ends to every shard once the table ends.
func TestGatewayRoutesByStageRoute(t *testing.T) {
	tab, err := exec.ReadCSV(strings.NewReader("k,n\na,1\nb,2\nc,2.50\nd,2.5\ne,\nf,7\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]*exec.Table{"t": tab}
	for _, q := range []string{"SELECT k, COUNT(*) FROM t GROUP BY k", "SELECT n, COUNT(*) FROM t WHERE n IS NULL OR n + 0 = n GROUP BY n"} {
		p := planOf(t, map[string]string{"q": q}, []string{"q"}, tables, 3)
		var got []sent
		gw, err := sqlops.NewTask(p, p.Gateway.Name, 0, map[string][]string{"t": tab.Columns}, nil, func(ch *physical.Channel, to int, rows *sqlops.Rows) error {
			got = append(got, sent{to, rows.RowBatch()})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := gw.Table("t", tab.Batches[0]); err != nil {
			t.Fatal(err)
		}
		rows := 0
		for _, s := range got {
			b := sentColumns(t, s.rows)
			for r := range b.N {
				rows++
				v := b.Cols[0]
				var key []byte
				switch {
				case v.IsNull(r):
					key = []byte{0}
				case strings.Contains(q, "BY k"):
					key = v.Text(r)
				default: // a number's key: exec.AppendKey, of its one form
					key = exec.AppendKey(nil, v, r)
				}
				if want := stage.Route(key, 3); s.to != want {
					t.Errorf("%s: row %q went to shard %d, stage.Route says %d", q, exec.AppendText(nil, v, r), s.to, want)
				}
			}
		}
		if strings.Contains(q, "BY n") && !sameShard(t, got, "2.5", "2.50") {
			t.Errorf("%s: 2.5 and 2.50 went to different shards", q)
		}
		if rows != 6 {
			t.Errorf("%s: %d rows sent, want 6", q, rows)
		}
		got = nil
		if err := gw.EndTable("t"); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].rows != nil || got[0].to != 0 || got[2].to != 2 {
			t.Errorf("%s: the table's end sent %v, want an end to each of 3 shards", q, got)
		}
		if gw.Done() {
			t.Errorf("%s: the gateway is done before its sink had the shards' rows", q)
		}
	}
}

// TestTaskRefuses: what a task does not read is refused, not applied.
func TestTaskRefuses(t *testing.T) {
	tab, err := exec.ReadCSV(strings.NewReader("k\na\n"), 0)
	if err != nil {
		t.Fatal(err)
	}
	p := planOf(t, map[string]string{"q": "SELECT k, COUNT(*) FROM t GROUP BY k"}, []string{"q"}, map[string]*exec.Table{"t": tab}, 2)
	send := func(*physical.Channel, int, *sqlops.Rows) error { return nil }
	if _, err := sqlops.NewTask(p, p.Gateway.Name, 0, map[string][]string{}, nil, send); err == nil {
		t.Error("a gateway without its table's header was made")
	}
	gw, err := sqlops.NewTask(p, p.Gateway.Name, 0, map[string][]string{"t": {"k"}}, nil, send)
	if err != nil {
		t.Fatal(err)
	}
	shard, err := sqlops.NewTask(p, p.Shard.Name, 1, nil, nil, send)
	if err != nil {
		t.Fatal(err)
	}
	other := &wololov1.RowBatch{} // no rows of any kind
	ch := p.Channels[0].Name
	for name, err := range map[string]error{
		"an unknown table":            gw.Table("u", tab.Batches[0]),
		"a table at the shard":        shard.Table("t", tab.Batches[0]),
		"a channel not read here":     gw.Receive(ch, 0, other),
		"an unknown channel":          shard.End("nope", 0),
		"a batch of another row kind": shard.Receive(ch, 0, other),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// sent is a batch a task's exchange sent, and to which instance; rows
// nil: the channel's end.
type sent struct {
	to   int
	rows *wololov1.RowBatch
}

// sentColumns reads a batch a task's exchange sent, each column as the
// type of its form (text, numbers or booleans).
func sentColumns(t testing.TB, rb *wololov1.RowBatch) *exec.Batch {
	t.Helper()
	cols, err := batch.ReadColumns(rb.GetColumns())
	if err != nil {
		t.Fatal(err)
	}
	types := make([]plan.Column, cols.Width())
	for c := range types {
		types[c] = plan.Column{Name: fmt.Sprint("#", c), Type: plan.Text}
		switch vc := cols.Column(c); {
		case vc.GetNumbers() != nil:
			types[c].Type = plan.Number
		case len(vc.GetBools()) > 0:
			types[c].Type = plan.Bool
		}
	}
	b, err := wire.FromRows(rb, types)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameShard reports whether the rows whose first value's text is a and b
// were sent to the same instance.
func sameShard(t testing.TB, out []sent, a, b string) bool {
	where := map[string]int{}
	for _, s := range out {
		got := sentColumns(t, s.rows)
		for r := range got.N {
			if v := got.Cols[0]; !v.IsNull(r) {
				where[string(exec.AppendText(nil, v, r))] = s.to
			}
		}
	}
	wa, oka := where[a]
	wb, okb := where[b]
	return oka && okb && wa == wb
}

// TestSharedTableLooksUpOnce: the shard's operators of one shared table
// (q1's distinct, q2's aggregate, the semi-joins of q3 and q4) have each
// row that arrives on a channel they read looked up in the table once,
// not once per operator: at most a lookup per row arrived.
func TestSharedTableLooksUpOnce(t *testing.T) {
	_, _, tables := generated(t, 500, 3)
	p := planOf(t, defaultTexts(), queries.Names, tables, 1)
	type msg struct {
		ch   string
		rows *wololov1.RowBatch
	}
	var queue []msg
	columns := map[string][]string{}
	for name, tab := range tables {
		columns[name] = tab.Columns
	}
	gw, err := sqlops.NewTask(p, p.Gateway.Name, 0, columns, nil, func(ch *physical.Channel, _ int, rows *sqlops.Rows) error {
		if ch.To == p.Shard.Name {
			queue = append(queue, msg{ch.Name, rows.RowBatch()})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	keyTables := map[int]*exec.KeyTable{}
	shard, err := sqlops.NewTask(p, p.Shard.Name, 0, nil, func(id int) *exec.KeyTable {
		if keyTables[id] == nil {
			keyTables[id] = exec.NewKeyTable()
		}
		return keyTables[id]
	}, func(*physical.Channel, int, *sqlops.Rows) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"matches", "match_players"} {
		for _, b := range tables[name].Batches {
			if err := gw.Table(name, b); err != nil {
				t.Fatal(err)
			}
		}
		if err := gw.EndTable(name); err != nil {
			t.Fatal(err)
		}
	}
	arrived := map[string]int{}
	for _, q := range queue {
		if q.rows == nil {
			if err := shard.End(q.ch, 0); err != nil {
				t.Fatal(err)
			}
			continue
		}
		arrived[q.ch] += int(q.rows.GetColumns().GetRows())
		if err := shard.Receive(q.ch, 0, q.rows); err != nil {
			t.Fatal(err)
		}
	}
	if !shard.Done() {
		t.Fatal("the shard has not finished")
	}
	checkLookups(t, p, func(ch string) int { return arrived[ch] }, func(id int) int { return keyTables[id].Lookups() })
}

// checkLookups holds each shared table of more than one operator of p's
// shard to at most a lookup per row arrived on the channels they read
// (rows says a channel's), and more than none (lookups says a table's,
// by ID).
func checkLookups(t *testing.T, p *physical.Plan, rows func(ch string) int, lookups func(id int) int) {
	t.Helper()
	checked := false
	for _, tab := range p.Tables {
		if tab.Task != p.Shard.Name || len(tab.Ops) < 2 {
			continue
		}
		n := 0
		for ch := range channelsOf(p, tab.Ops) {
			n += rows(ch)
		}
		if got := lookups(tab.ID); got == 0 || got > n {
			t.Errorf("table %d (%s) of %d operators: %d lookups for %d rows arrived", tab.ID, tab.Key, len(tab.Ops), got, n)
		}
		checked = true
	}
	if !checked {
		t.Fatal("no shared table in the shard: the test checks nothing")
	}
}

// channelsOf is the channels that operators ops of p read.
func channelsOf(p *physical.Plan, ops []int) map[string]bool {
	out := map[string]bool{}
	for _, id := range ops {
		for _, in := range p.Ops[id].Inputs {
			if in.Channel != "" {
				out[in.Channel] = true
			}
		}
	}
	return out
}
