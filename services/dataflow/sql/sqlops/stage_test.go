package sqlops_test

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/queries"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/plan"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops/wire"
	"github.com/wololo/wololo/services/dataflow/stage"
)

// deployed is a job's plan run as the deployment runs it, in one test:
// every instance of every task is what the stage runtime makes of its
// StageSpec (a stage.Driver over the spec's operator, stage.Outputs over
// its wiring, batches encoded as they travel), the gateway's uploads are
// each table's Source, and messages are taken in a random order (each
// channel's in its order, as the inbox takes them). An instance may
// restart before any message: a fresh operator replays its journal
// through an Emitter that keeps nothing, and fresh Outputs are told the
// streams its commits ended, as the runtime's Recover does; or, half the
// time, the log is cut by a snapshot of the operator first, as the
// runtime cuts it, and the fresh operator restored from it replays only
// what came after.
type deployed struct {
	t       testing.TB
	p       *physical.Plan
	r       *rand.Rand
	restart float64
	inst    map[string]*instance
	names   []string
	results map[string][]byte
	// restarts and snapshots count what the run did; mostRows is the most
	// rows one batch sent had.
	restarts, snapshots, mostRows int
	// resumes counts the Sources made afresh (uploadEpochs).
	resumes int
}

type message struct {
	stream, sender string
	eof            bool
	rows           []byte
}

type instance struct {
	self    deploy.Instance
	spec    stage.JobSpec
	op      stage.Operator
	drive   *stage.Driver
	out     *stage.Outputs
	queue   []message
	journal []message // since snap
	snap    []byte
	ended   [][2]string       // the input ends applied: stream, sender
	records map[string][]byte // what its commits recorded
	done    bool
}

func newDeployed(t testing.TB, p *physical.Plan, r *rand.Rand, restart float64) *deployed {
	return newDeployedHolding(t, p, r, restart, sqlops.Budget{})
}

// newDeployedHolding is newDeployed with every instance held to budget b.
func newDeployedHolding(t testing.TB, p *physical.Plan, r *rand.Rand, restart float64, b sqlops.Budget) *deployed {
	d := &deployed{t: t, p: p, r: r, restart: restart, inst: map[string]*instance{}, results: map[string][]byte{}}
	tasks := []physical.Task{p.Gateway}
	if p.Shard.Name != p.Gateway.Name {
		tasks = append(tasks, p.Shard)
	}
	for _, task := range tasks {
		enc, err := physical.Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := sqlops.DecodeSpec(enc, task.Name, b)
		if err != nil {
			t.Fatal(err)
		}
		for i := range task.Replicas {
			in := &instance{self: deploy.Instance{Stage: task.Name, Index: i}, spec: spec, records: map[string][]byte{}}
			in.start(t)
			d.inst[in.self.Name()] = in
			d.names = append(d.names, in.self.Name())
		}
	}
	return d
}

// start makes the instance's operator afresh: restored from its
// snapshot, the journal since replayed, the ends applied noted.
func (in *instance) start(t testing.TB) {
	senders := make([]int, len(in.spec.Wiring.Inputs))
	for k, e := range in.spec.Wiring.Inputs {
		senders[k] = e.Replicas
	}
	in.op = in.spec.New()
	if in.snap != nil {
		if err := in.op.(stage.Snapshotter).Restore(bytes.Clone(in.snap)); err != nil {
			t.Fatalf("%s: restore: %v", in.self.Name(), err)
		}
	}
	in.drive = stage.NewDriver(in.op, senders)
	// As the runtime's Recover: the ends before the snapshot first (the
	// snapshot holds what the operator did of them), then the journal,
	// then every end applied.
	logged := map[[2]string]bool{}
	for _, m := range in.journal {
		if m.eof {
			logged[[2]string{m.stream, m.sender}] = true
		}
	}
	for _, e := range in.ended {
		if in.snap != nil && !logged[e] {
			in.drive.Restore(in.input(e[0]), sender(e[1]))
		}
	}
	for _, m := range in.journal {
		if _, err := in.apply(m, stage.Discard); err != nil {
			t.Fatalf("%s: replay: %v", in.self.Name(), err)
		}
	}
	for _, e := range in.ended {
		in.drive.Restore(in.input(e[0]), sender(e[1]))
	}
	in.out = stage.NewOutputs(in.self, "j", in.spec.Wiring.Outputs)
	in.out.MarkEnded(in.records)
}

// send hands what an Outputs drained to the receiving instances' queues,
// encoded as a commit encodes it (stage.Encode).
func (d *deployed) send(from string, emitted []stage.Emitted) {
	outputs, err := stage.Encode(emitted)
	if err != nil {
		d.t.Fatal(err)
	}
	for _, e := range outputs {
		to := d.inst[e.Channel.Receiver]
		if to == nil {
			d.t.Fatalf("%s sent to %s, which is not there", from, e.Channel.Receiver)
		}
		if !e.EOF {
			d.mostRows = max(d.mostRows, e.Count)
		}
		to.queue = append(to.queue, message{stream: e.Channel.Stream, sender: from, eof: e.EOF, rows: e.Rows})
	}
}

// apply applies one message to an instance's operator, as the runtime's
// step does, and reports whether the operator finished.
func (in *instance) apply(m message, out stage.Emitter) (bool, error) {
	if m.eof {
		due, err := in.drive.End(in.input(m.stream), sender(m.sender), out)
		if err != nil || !due {
			return false, err
		}
		return true, in.drive.Finish(out)
	}
	_, err := in.drive.Apply(in.input(m.stream), m.rows, out)
	return false, err
}

// input is the index of stream among the instance's inputs, as the
// runtime numbers them (-1: not one).
func (in *instance) input(stream string) int {
	return slices.IndexFunc(in.spec.Wiring.Inputs, func(e stage.Edge) bool { return e.Stream == stream })
}

// sender is the index of a sending instance, by its name.
func sender(name string) int {
	i, err := deploy.ParseInstance(name)
	if err != nil {
		return -1
	}
	return i.Index
}

// upload feeds a table's rows to its Source as the gateway's upload
// does: a row at a time, flushed when full and at random commits.
func (d *deployed) upload(name string, tab *exec.Table) {
	gw := deploy.Instance{Stage: d.p.Gateway.Name}
	src, err := sqlops.NewSource(d.p, name, tab.Columns)
	if err != nil {
		d.t.Fatal(err)
	}
	out := stage.NewOutputs(gw, "j", src.Outputs())
	feedSource(d.t, src, tab, out, func(int) bool { return d.r.IntN(100) == 0 }, func(eof bool) {
		emitted, _ := out.Drain(eof)
		d.send(gw.Name(), emitted)
	})
}

// feedSource gives src every row of tab as ingest does, a record's text
// fields at a time, and flushes into out when it is Full or when flushToo
// (if any) says so of the rows given so far; commit (if any) is called
// after each flush, and with eof once the table is ended. It returns the
// number of rows given.
func feedSource(t testing.TB, src *sqlops.Source, tab *exec.Table, out stage.Emitter, flushToo func(rows int) bool, commit func(eof bool)) int {
	t.Helper()
	fields := make([][]byte, len(tab.Columns))
	rows := 0
	for _, b := range tab.Batches {
		for r := range b.N {
			for c := range fields {
				fields[c] = b.Cols[c].Text(r)
			}
			src.Row(fields)
			rows++
			if src.Full() || flushToo != nil && flushToo(rows) {
				if err := src.Flush(out); err != nil {
					t.Fatal(err)
				}
				if commit != nil {
					commit(false)
				}
			}
		}
	}
	if err := src.End(out); err != nil {
		t.Fatal(err)
	}
	if commit != nil {
		commit(true)
	}
	return rows
}

// run takes the queued messages in a random order until none is left.
func (d *deployed) run() {
	for {
		var ready []*instance
		for _, name := range d.names {
			if in := d.inst[name]; len(in.queue) > 0 {
				ready = append(ready, in)
			}
		}
		if len(ready) == 0 {
			break
		}
		in := ready[d.r.IntN(len(ready))]
		if d.r.Float64() < d.restart {
			if d.r.IntN(2) == 0 {
				snap, err := in.op.(stage.Snapshotter).AppendSnapshot(nil)
				if err != nil {
					d.t.Fatalf("%s: snapshot: %v", in.self.Name(), err)
				}
				in.snap, in.journal = snap, nil
				d.snapshots++
			}
			in.start(d.t)
			d.restarts++
		}
		m := in.queue[0]
		in.queue = in.queue[1:]
		fin, err := in.apply(m, in.out)
		if err != nil {
			d.t.Fatalf("%s: %s from %s: %v", in.self.Name(), m.stream, m.sender, err)
		}
		in.journal = append(in.journal, m)
		if m.eof {
			in.ended = append(in.ended, [2]string{m.stream, m.sender})
		}
		emitted, records := in.out.Drain(fin)
		maps.Copy(in.records, records)
		d.send(in.self.Name(), emitted)
		if fin {
			in.done = true
			for k, v := range records {
				if name, ok := strings.CutPrefix(k, schema.ResultRecord("")); ok {
					d.results[strings.TrimSuffix(name, ".csv")] = v
				}
			}
		}
	}
	for _, name := range d.names {
		if !d.inst[name].done {
			d.t.Fatalf("%s never finished", name)
		}
	}
}

// TestDeployedPlanMatchesTheReference runs the four default queries, and
// queries that shuffle from shard to shard, as the deployment runs a
// job's plan (StageSpec and Source, through the stage runtime's Driver
// and Outputs), with instances restarted from their journals at random,
// and compares every output with the reference's (the four) or the
// in-process runner's (the others), byte for byte.
func TestDeployedPlanMatchesTheReference(t *testing.T) {
	m, pl, tables := generated(t, 2000, 9)
	ref, err := reference.Evaluate(bytes.NewReader(m), bytes.NewReader(pl))
	if err != nil {
		t.Fatal(err)
	}
	texts := defaultTexts()
	texts["maps"] = "SELECT m.map, COUNT(*) AS players, MAX(p.rating) AS top FROM matches m JOIN match_players p ON p.match = m.token GROUP BY m.map ORDER BY players DESC, m.map"
	texts["wide"] = "SELECT DISTINCT civ FROM match_players WHERE rating > 2000 ORDER BY civ"
	texts["twice"] = "SELECT token, civ FROM match_players WHERE match IN (SELECT token FROM matches WHERE map = 'arena') AND civ IN (SELECT civ FROM match_players WHERE rating > 2500) ORDER BY token, civ"
	texts["few"] = "SELECT token, map FROM matches WHERE server = 'ukwest' ORDER BY token LIMIT 7"
	names := append(append([]string{}, queries.Names...), "maps", "wide", "twice", "few")
	for _, shards := range []int{0, 1, 2, 3} {
		for _, restart := range []float64{0, 0.2} {
			t.Run(fmt.Sprintf("shards%d/restart%v", shards, restart), func(t *testing.T) {
				p := planOf(t, texts, names, tables, shards)
				want, err := sqlops.Run(p, tables)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(p.String(), "shard -> shard") && shards > 1 {
					t.Fatalf("no channel from shard to shard: the test does not test ending one early\n%s", p)
				}
				d := newDeployed(t, p, rand.New(rand.NewPCG(uint64(shards), 7)), restart)
				d.upload("matches", tables["matches"])
				d.upload("match_players", tables["match_players"])
				d.run()
				if restart > 0 && (d.restarts < 10 || d.snapshots < 3) {
					t.Errorf("%d restarts, %d from a snapshot: too few to test them", d.restarts, d.snapshots)
				}
				for _, name := range names {
					w, isDefault := ref.Answers[name]
					if !isDefault {
						w = want.Files[name]
					}
					if got := d.results[name]; !bytes.Equal(got, w) {
						t.Errorf("%s differs:\n got %.400q\nwant %.400q", name, got, w)
					}
					if bytes.Count(w, []byte("\n")) < 2 {
						t.Errorf("%s: the expected answer is empty: the test checks nothing", name)
					}
				}
			})
		}
	}
}

// BenchmarkDeployedPlan runs the four default queries as SQL as the
// deployment runs them on two shards (TestDeployedPlanMatchesTheReference's
// harness, no restarts): the gateway's Sources, the shards' and the
// gateway's parts, every batch encoded as it travels. Per player row.
func BenchmarkDeployedPlan(b *testing.B) {
	_, _, tables := generated(b, 20000, 3)
	p := planOf(b, defaultTexts(), queries.Names, tables, 2)
	b.ResetTimer()
	for i := range b.N {
		d := newDeployed(b, p, rand.New(rand.NewPCG(uint64(i), 7)), 0)
		d.upload("matches", tables["matches"])
		d.upload("match_players", tables["match_players"])
		d.run()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tables["match_players"].Rows), "ns/player-row")
}

// TestJoinOutputTravelsInChunks: a join that makes far more rows than it
// is given (players with every player of the same civ: tens of rows out
// for each in) sends them in chunks of exactly the 8192-row bound, never
// more, and the answer is the in-process runner's (chunks themselves:
// TestChunksBoundRowsAndBytes).
func TestJoinOutputTravelsInChunks(t *testing.T) {
	_, _, tables := generated(t, 600, 4)
	texts := map[string]string{"wide": "SELECT a.token, b.token AS other FROM match_players a JOIN match_players b ON a.civ = b.civ ORDER BY a.token, other"}
	p := planOf(t, texts, []string{"wide"}, tables, 1)
	want, err := sqlops.Run(p, tables)
	if err != nil {
		t.Fatal(err)
	}
	d := newDeployed(t, p, rand.New(rand.NewPCG(1, 2)), 0)
	d.upload("matches", tables["matches"])
	d.upload("match_players", tables["match_players"])
	d.run()
	if !bytes.Equal(d.results["wide"], want.Files["wide"]) {
		t.Errorf("wide differs from the in-process runner's")
	}
	if d.mostRows != 8192 {
		t.Errorf("the largest batch sent had %d rows: want the join's output cut at exactly 8192", d.mostRows)
	}
}

// TestTooLargeAnAnswerFailsTheJob: a query whose answer the gateway
// would hold more of than its limit ends the job with the reason in
// its final commit (schema.FailedResultsRecord) and no results, also
// when the gateway restarts from its snapshots and journal on the way;
// under the limit, the same plan gives its answers.
func TestTooLargeAnAnswerFailsTheJob(t *testing.T) {
	_, _, tables := generated(t, 1500, 8)
	texts := map[string]string{"all": "SELECT token, civ FROM match_players ORDER BY token", "few": "SELECT civ, COUNT(*) AS n FROM match_players GROUP BY civ ORDER BY civ"}
	p := planOf(t, texts, []string{"all", "few"}, tables, 2)
	for _, c := range []struct {
		limit   int64
		restart float64
		fails   bool
	}{{1 << 30, 0, false}, {20_000, 0, true}, {20_000, 0.3, true}} {
		d := newDeployedHolding(t, p, rand.New(rand.NewPCG(5, 6)), c.restart, sqlops.Budget{HeldBytes: c.limit})
		d.upload("matches", tables["matches"])
		d.upload("match_players", tables["match_players"])
		d.run()
		reason := d.inst["gateway-0"].records[schema.FailedResultsRecord]
		switch {
		case c.fails && (reason == nil || len(d.results) != 0):
			t.Errorf("limit %d, restarts %v: reason %q and %d results, want the failure and none", c.limit, c.restart, reason, len(d.results))
		case c.fails && !bytes.Contains(reason, []byte("too large")):
			t.Errorf("the reason %q does not say the answer is too large", reason)
		case !c.fails && (reason != nil || len(d.results) != 2):
			t.Errorf("limit %d: reason %q and %d results, want both answers", c.limit, reason, len(d.results))
		}
	}
}

// TestASortBeforeALimitHoldsItsTop: a query whose sorted rows are more
// than the gateway may hold, but whose LIMIT reads a few, gives its
// answer within the limit, also when the gateway restarts on the way:
// the sort keeps its first rows alone (buffered.keepTop), its answer
// byte for byte the in-process runner's.
func TestASortBeforeALimitHoldsItsTop(t *testing.T) {
	_, _, tables := generated(t, 3000, 9)
	texts := map[string]string{"top": "SELECT token, civ, rating FROM match_players ORDER BY rating DESC, civ LIMIT 5 OFFSET 2", "few": "SELECT civ, COUNT(*) AS n FROM match_players GROUP BY civ ORDER BY civ"}
	p := planOf(t, texts, []string{"top", "few"}, tables, 2)
	want, err := sqlops.Run(p, tables)
	if err != nil {
		t.Fatal(err)
	}
	for _, restart := range []float64{0, 0.3} {
		d := newDeployedHolding(t, p, rand.New(rand.NewPCG(7, 8)), restart, sqlops.Budget{HeldBytes: 200_000})
		d.upload("matches", tables["matches"])
		d.upload("match_players", tables["match_players"])
		d.run()
		if reason := d.inst["gateway-0"].records[schema.FailedResultsRecord]; reason != nil {
			t.Fatalf("restarts %v: the job failed: %s", restart, reason)
		}
		if !bytes.Equal(d.results["top"], want.Files["top"]) {
			t.Errorf("restarts %v: %q, want %q", restart, d.results["top"], want.Files["top"])
		}
	}
}

// TestSourceRoutesEachRowByItsKey: the rows a Source routes as it reads
// them (match_players, which q2 sends whole to the shards) each go to the
// instance stage.Route picks for its match, every row once, whichever
// batch of the Source's it came in; a standing job's Source too, whose
// rows went through its exchange's routing again before (issue 40: 0.25 s
// of the gateway's CPU on the full dataset).
func TestSourceRoutesEachRowByItsKey(t *testing.T) {
	for _, standing := range []bool{false, true} {
		t.Run(fmt.Sprintf("standing=%v", standing), func(t *testing.T) { sourceRoutesEachRowByItsKey(t, standing) })
	}
}

func sourceRoutesEachRowByItsKey(t *testing.T, standing bool) {
	_, _, tables := generated(t, 1000, 6)
	const shards = 3
	p := planOf(t, defaultTexts(), queries.Names, tables, shards)
	p.Standing = standing
	tab := tables["match_players"]
	src, err := sqlops.NewSource(p, "match_players", tab.Columns)
	if err != nil {
		t.Fatal(err)
	}
	if !sqlops.RoutesAsRead(src) {
		t.Fatal("the Source does not route its rows as it reads them")
	}
	ch := p.Channel("match_players-by-match")
	if ch == nil {
		t.Fatalf("no channel match_players-by-match:\n%s", p)
	}
	out := stage.NewOutputs(deploy.Instance{Stage: p.Gateway.Name}, "j", src.Outputs())
	rows := feedSource(t, src, tab, out, func(rows int) bool { return rows%777 == 0 }, nil)
	emitted, _ := out.Drain(true)
	sent := 0
	for _, e := range emitted {
		if e.EOF || e.Channel.Stream != sqlops.ChannelStream(slices.Index(p.Channels, ch), ch.Name) {
			continue
		}
		rb, err := e.RowBatch()
		if err != nil {
			t.Fatal(err)
		}
		cols := ch.Columns
		if standing {
			cols = append(slices.Clone(cols), plan.Column{Name: "weight", Type: plan.Number})
		}
		b, err := wire.FromRows(rb, cols)
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.N {
			key := b.Cols[ch.Key[0]].Text(i)
			if want := fmt.Sprintf("%s-%d", p.Shard.Name, stage.Route(key, shards)); e.Channel.Receiver != want {
				t.Fatalf("the row of match %s went to %s, want %s", key, e.Channel.Receiver, want)
			}
		}
		sent += b.N
	}
	if sent != rows {
		t.Errorf("%d rows sent on %s, want the %d read", sent, ch.Name, rows)
	}
}

// TestStageSpecNumbersItsStreamsForMetrics: every task's spec of a plan
// names each of the plan's streams, in metrics, by its channel's index
// ("ch0", "ch1", ...), the same at every task, and none of those names
// carries a query's, a table's or a column's name (which the streams'
// own names do).
func TestStageSpecNumbersItsStreamsForMetrics(t *testing.T) {
	_, _, tables := generated(t, 200, 1)
	texts := map[string]string{"acme_payroll": "SELECT civ, COUNT(*) AS n FROM match_players GROUP BY civ ORDER BY civ"}
	p := planOf(t, texts, []string{"acme_payroll"}, tables, 2)
	if len(p.Channels) < 2 {
		t.Fatalf("the plan has %d channels; the test wants a shuffle and a gather", len(p.Channels))
	}
	want := map[string]string{}
	for i, c := range p.Channels {
		want[sqlops.ChannelStream(i, c.Name)] = fmt.Sprintf("ch%d", i)
	}
	if !strings.Contains(strings.Join(slices.Collect(maps.Keys(want)), " "), "acme_payroll") {
		t.Fatalf("no stream is named after the query: %v; the test proves nothing", want)
	}
	for _, task := range []string{p.Gateway.Name, p.Shard.Name} {
		spec, err := sqlops.StageSpec(p, task, sqlops.Budget{})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(spec.MetricStreams, want) {
			t.Errorf("%s: MetricStreams %v, want %v", task, spec.MetricStreams, want)
		}
	}
}

// bandQuery is issue 38's query: win rate by rating band, grouped by a
// four-branch CASE, whose channel from the gateway to the shards is named
// after the whole CASE (156 bytes, more than a stream's name could be).
const bandQuery = "SELECT CASE WHEN rating < 1000 THEN 'low' WHEN rating < 1500 THEN 'mid' WHEN rating < 2000 THEN 'high' ELSE 'top' END AS band, COUNT(*) AS n, SUM(CASE WHEN winner THEN 1 ELSE 0 END) AS wins FROM match_players GROUP BY CASE WHEN rating < 1000 THEN 'low' WHEN rating < 1500 THEN 'mid' WHEN rating < 2000 THEN 'high' ELSE 'top' END ORDER BY band"

// TestEveryStreamIsShortAndItsOwn: whatever the keys, every stream of a
// plan (ChannelStream) is at most MaxStreamLen bytes and no two channels
// share one: a key expression of more than a kilobyte, two keys alike in
// their first kilobyte, two channels whose names differ only in bytes a
// stream name writes as '_' ('a.b', 'a,b'), and issue 38's band query.
// Every task's StageSpec takes the plan (it refused two channels on one
// stream), its wiring and metrics names are those streams, and the plan
// run as the deployment runs it (StageSpec, Sources, encoded batches)
// answers as the in-process runner does.
func TestEveryStreamIsShortAndItsOwn(t *testing.T) {
	_, _, tables := generated(t, 300, 8)
	long := "CASE WHEN civ = '" + strings.Repeat("x", 1024) + "' THEN 1 ELSE 2 END"
	texts := map[string]string{
		"band":   bandQuery,
		"long_a": "SELECT " + long + " AS k, COUNT(*) AS n FROM match_players GROUP BY " + long + ", rating < 1000 ORDER BY k, n",
		"long_b": "SELECT " + long + " AS k, COUNT(*) AS n FROM match_players GROUP BY " + long + ", rating < 2000 ORDER BY k, n",
		"dot":    "SELECT civ = 'a.b' AS k, COUNT(*) AS n FROM match_players GROUP BY civ = 'a.b' ORDER BY k",
		"comma":  "SELECT civ = 'a,b' AS k, COUNT(*) AS n FROM match_players GROUP BY civ = 'a,b' ORDER BY k",
	}
	names := slices.Sorted(maps.Keys(texts))
	p := planOf(t, texts, names, tables, 2)
	longest := 0
	for _, c := range p.Channels {
		longest = max(longest, len(c.Name))
	}
	if longest < 1024 {
		t.Fatalf("the longest channel name has %d bytes; the test wants one of a kilobyte or more:\n%s", longest, p)
	}
	want := map[string]bool{}
	for i, c := range p.Channels {
		s := sqlops.ChannelStream(i, c.Name)
		if len(s) == 0 || len(s) > sqlops.MaxStreamLen {
			t.Errorf("channel %d (%.60s...): stream %q of %d bytes, want 1 to %d", i, c.Name, s, len(s), sqlops.MaxStreamLen)
		}
		if want[s] {
			t.Errorf("channel %d (%.60s...): stream %q taken by another channel", i, c.Name, s)
		}
		want[s] = true
	}
	for _, task := range []string{p.Gateway.Name, p.Shard.Name} {
		spec, err := sqlops.StageSpec(p, task, sqlops.Budget{})
		if err != nil {
			t.Fatalf("%s: %v", task, err)
		}
		for _, e := range slices.Concat(spec.Wiring.Inputs, spec.Wiring.Outputs) {
			if !want[e.Stream] {
				t.Errorf("%s: stream %q is no channel's", task, e.Stream)
			}
		}
		if len(spec.MetricStreams) != len(p.Channels) {
			t.Errorf("%s: %d streams named in metrics, for %d channels", task, len(spec.MetricStreams), len(p.Channels))
		}
	}
	expected, err := sqlops.Run(p, tables)
	if err != nil {
		t.Fatal(err)
	}
	d := newDeployed(t, p, rand.New(rand.NewPCG(3, 8)), 0)
	d.upload("matches", tables["matches"])
	d.upload("match_players", tables["match_players"])
	d.run()
	for _, name := range names {
		if got, w := d.results[name], expected.Files[name]; !bytes.Equal(got, w) {
			t.Errorf("%s differs:\n got %.400q\nwant %.400q", name, got, w)
		}
	}
	if b := expected.Files["band"]; bytes.Count(b, []byte("\n")) != 5 {
		t.Errorf("band: %q, want a header and 4 bands", b)
	}
}

// TestSourceCountsEachFlushAsAStep: what a Source sends is held to
// --job-max-step-bytes flush by flush, as a task's input batch is, not
// summed over the whole upload: a replay of a full-scale match_players
// (134 MB sent, in 1 MiB flushes) once failed its job as "over its
// budget" for the sum.
func TestSourceCountsEachFlushAsAStep(t *testing.T) {
	_, _, tables := generated(t, 1000, 6)
	p := planOf(t, defaultTexts(), queries.Names, tables, 3)
	tab := tables["match_players"]
	for _, routed := range []bool{true, false} {
		name := "match_players"
		if !routed { // a plan whose Source does not route by field: one shard
			p = planOf(t, defaultTexts(), queries.Names, tables, 1)
		}
		src, err := sqlops.NewSource(p, name, tab.Columns)
		if err != nil {
			t.Fatal(err)
		}
		out := stage.NewOutputs(deploy.Instance{Stage: p.Gateway.Name}, "j", src.Outputs())
		var steps []int64 // what each flush of 500 rows counted
		feedSource(t, src, tab, out, func(rows int) bool { return rows%500 == 0 }, func(eof bool) {
			if step, _ := sqlops.SourceSpent(src); !eof {
				steps = append(steps, step)
			}
		})
		if len(steps) < 4 || steps[0] <= 0 || slices.Max(steps) > 2*steps[0] {
			t.Errorf("routed %v: each flush of 500 rows counted %v bytes sent: want each flush counted alone, about the same", routed, steps)
		}
	}
}
