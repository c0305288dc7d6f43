package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/sql/exec"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/transport/transporttest"
)

// tableQueries read the extra tables regions (civ, region) and again (a
// copy of match_players): a join of match_players with regions, grouped
// by the table's column; a query of regions alone; a join of the copy
// with matches.
var tableQueries = []sqljob.Query{
	{Name: "by_region", Text: "SELECT r.region, COUNT(*) AS players, MAX(p.rating) AS top FROM match_players p JOIN regions r ON p.civ = r.civ GROUP BY r.region ORDER BY r.region"},
	{Name: "region_civs", Text: "SELECT region, COUNT(*) AS civs FROM regions GROUP BY region ORDER BY region"},
	{Name: "again_maps", Text: "SELECT m.map, COUNT(*) AS n FROM again a JOIN matches m ON a.match = m.token GROUP BY m.map ORDER BY n DESC, m.map"},
}

// writeRegions writes dir/regions.csv: a region for each civ of the
// players file but every fifth (whose players the join drops), and one
// malformed record, which the job counts and skips. It returns its path
// and how many well-formed rows it has.
func writeRegions(t *testing.T, players, dir string) (string, int) {
	t.Helper()
	f, err := os.Open(players)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord, r.LazyQuotes = -1, true // the generator writes a few malformed records
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	civ := slices.Index(recs[0], "civ")
	var civs []string
	for _, r := range recs[1:] {
		if len(r) == len(recs[0]) && !slices.Contains(civs, r[civ]) {
			civs = append(civs, r[civ])
		}
	}
	slices.Sort(civs)
	var b bytes.Buffer
	b.WriteString("civ,region\n")
	rows := 0
	for i, c := range civs {
		if i%5 == 4 {
			continue
		}
		fmt.Fprintf(&b, "%s,%s\n", c, []string{"north", "south", "\"east, far\""}[i%3])
		rows++
		if i == 2 {
			b.WriteString("a,malformed,record\n")
		}
	}
	if rows < 6 {
		t.Fatalf("only %d civs in %s", rows, players)
	}
	path := filepath.Join(dir, "regions.csv")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, rows
}

// answerOn is what the SQL engine answers in this process to the
// queries on the tables of these files (sqlops.Answer), by table name.
func answerOn(t *testing.T, files map[string]string, qs []sqljob.Query) map[string][]byte {
	t.Helper()
	tables := readTables(t, files)
	shape, err := physical.ShapeOf(deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	answers, err := sqlops.Answer(qs, tables, shape)
	if err != nil {
		t.Fatal(err)
	}
	return answers
}

// readTables reads each file as the engine's table of its name.
func readTables(t *testing.T, files map[string]string) map[string]*exec.Table {
	t.Helper()
	tables := map[string]*exec.Table{}
	for name, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := exec.ReadCSV(f, reference.MaxRecordBytes)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		tables[name] = tab
	}
	return tables
}

// tableJob is a job of tableQueries on d's files and its tables, and
// what its answers must be.
type tableJob struct {
	opts    client.SubmitOptions
	want    map[string][]byte
	regions int // well-formed rows of regions.csv
}

func newTableJob(t *testing.T, c *node.Cluster, d *dataset) tableJob {
	t.Helper()
	regions, rows := writeRegions(t, d.players, t.TempDir())
	tables := []client.Table{{Name: "regions", Path: regions}, {Name: "again", Path: d.players}}
	files := map[string]string{"matches": d.matches, "match_players": d.players}
	for _, tb := range tables {
		files[tb.Name] = tb.Path
	}
	return tableJob{
		opts: client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: d.matches, Players: d.players, Out: t.TempDir(),
			Queries: tableQueries, Tables: tables},
		want:    answerOn(t, files, tableQueries),
		regions: rows,
	}
}

// check compares the job's answers with the engine's in this process, and
// its tables' reports with the files.
func (tj tableJob) check(t *testing.T, sum *client.Summary) {
	t.Helper()
	for _, q := range tableQueries {
		got, err := os.ReadFile(filepath.Join(tj.opts.Out, q.Name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		if w := tj.want[q.Name]; !bytes.Equal(got, w) || bytes.Count(w, []byte("\n")) < 3 {
			t.Errorf("%s.csv differs (or has too few rows to prove anything)\n got: %.300q\nwant: %.300q", q.Name, got, w)
		}
	}
	tables := sum.Job.GetTables()
	if len(tables) != 2 || tables[0].File != "regions" || tables[1].File != "again" {
		t.Fatalf("the job's table reports: %v", tables)
	}
	if r := tables[0]; r.Rows != int64(tj.regions+1) || r.Malformed != 1 || !r.Done {
		t.Errorf("regions: %d rows, %d malformed (done %v); want %d and 1", r.Rows, r.Malformed, r.Done, tj.regions+1)
	}
	if r, p := tables[1], sum.Job.Players; r.Rows != p.Rows || r.Malformed != p.Malformed {
		t.Errorf("again: %d rows, %d malformed; want match_players' %d and %d", r.Rows, r.Malformed, p.Rows, p.Malformed)
	}
	rejects, err := os.ReadFile(filepath.Join(tj.opts.Out, client.RejectsFile))
	if err != nil || !bytes.Contains(rejects, []byte("regions,")) {
		t.Errorf("rejects.csv lists no record of regions: %q (%v)", rejects, err)
	}
}

// TestSQLJobWithTables: a job of queries over two extra tables
// (`submit --table`) on a cluster answers as the SQL engine does in this
// process on the same files, and reports each table's rows and malformed
// records.
func TestSQLJobWithTables(t *testing.T) {
	d := testDatasets(t)[0]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 2})
	tj := newTableJob(t, c, d)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := client.Submit(ctx, tj.opts)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	tj.check(t, sum)
}

// TestSQLJobTablesSurviveGatewayRestart restarts the gateway while the
// table again is being uploaded (the two files and regions in, part of
// again committed): the client resumes the table's upload from what the
// gateway committed, and the answers are exact. The client reaches the
// gateway through a proxy that paces its upload, so that the test sees
// the table's upload in its middle however fast the machine is.
func TestSQLJobTablesSurviveGatewayRestart(t *testing.T) {
	d := testDatasets(t)[2]
	top := deploy.Default()
	c := startCluster(t, top, node.ClusterOptions{OutboxLimit: 4})
	tj := newTableJob(t, c, d)
	tj.opts.JobID = "tables-restart"
	slow, err := transporttest.NewProxy(c.GatewayAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.Pace(4 << 20)
	tj.opts.Server = slow.Addr()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	type result struct {
		sum *client.Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := client.Submit(ctx, tj.opts)
		done <- result{sum, err}
	}()
	s, err := client.Open(c.GatewayAddr(), tj.opts.TLS, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	restarted := false
	for !restarted {
		select {
		case r := <-done:
			t.Fatalf("the job ended before the tables' upload was seen: %v", r.err)
		case <-time.After(2 * time.Millisecond):
		}
		job, err := s.Get(ctx, tj.opts.JobID)
		// Past 1 KiB, again's upload has committed rows (its header row
		// is a few dozen bytes).
		if err != nil || len(job.Tables) < 2 || !job.Tables[0].Done || job.Tables[1].Offset < 1<<10 || job.Tables[1].Done {
			continue
		}
		if err := c.Restart(top.Gateway().Name + "-0"); err != nil {
			t.Fatal(err)
		}
		slow.Pace(0)
		restarted = true
		t.Logf("gateway restarted with the tables at %d and %d of %d and %d bytes", job.Tables[0].Offset, job.Tables[1].Offset, job.Tables[0].Size, job.Tables[1].Size)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("submit: %v", r.err)
	}
	tj.check(t, r.sum)
	if r.sum.Job.State != wololov1.JobState_JOB_STATE_DONE {
		t.Fatalf("job %v", r.sum.Job.State)
	}
}
