package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/sql/sqljob"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/transporttest"
)

// TestWipedStoreFailsTheJob: shard-0 restarts mid-job on an empty store
// (its data directory wiped or replaced) after the gateway had batches of
// the job acknowledged by it and trimmed them. No resend can repair that;
// instead of waiting forever for batches 1..N-1, the job fails within
// seconds with a reason its client sees, in submit's error and in `wololo
// client status` (a client that submits lost jobs again, --rebuilds, is
// TestLostStoresRebuildTheJob's).
func TestWipedStoreFailsTheJob(t *testing.T) {
	d := testDatasets(t)[2]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 4})
	const victim, job = "shard-0", "wiped"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	submitted := submitInBackground(ctx, t, c, d, t.TempDir(), job)

	waitAcked(t, c, victim, submitted)
	wiped := time.Now()
	wipe(t, c, victim)
	var err error
	select {
	case err = <-submitted:
	case <-time.After(30 * time.Second):
		t.Fatal("the job neither failed nor ended within 30 s of the wipe")
	}
	took := time.Since(wiped)
	if err == nil || !strings.Contains(err.Error(), "failed") || !strings.Contains(err.Error(), victim) || !strings.Contains(err.Error(), "lost this job's state") {
		t.Fatalf("submit after the wipe: %v; want the job failed, naming %s and the lost state", err, victim)
	}
	t.Logf("failed %s after the wipe: %v", took.Round(time.Millisecond), err)

	var out, errOut bytes.Buffer
	if err := client.Run(ctx, []string{"status", "--server", c.GatewayAddr(), "--tls-dir", clientDir(t, c, "client"), "--job", job}, &out, &errOut); err != nil {
		t.Fatalf("wololo client status: %v\n%s", err, errOut.String())
	}
	if s := out.String(); !strings.Contains(s, "job wiped: failed") || !strings.Contains(s, "lost this job's state") {
		t.Fatalf("wololo client status says:\n%s", s)
	}
	t.Logf("wololo client status:\n%s", out.String())

	// A client that follows the job without its files learns that it was
	// lost and how to run it again.
	out.Reset()
	err = client.Run(ctx, []string{"watch", "--server", c.GatewayAddr(), "--tls-dir", clientDir(t, c, "client"), "--job", job}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "the job was lost") || !strings.Contains(err.Error(), "client submit --job wiped") {
		t.Fatalf("wololo client watch of the lost job: %v; want the hint that runs it again", err)
	}
	t.Logf("wololo client watch: %v", err)
}

// waitAcked waits until the gateway has trimmed batches that victim
// acknowledged (so that a wipe of victim's store
// loses state the gateway cannot resend), failing the test if submitted
// ends first.
func waitAcked(t *testing.T, c *node.Cluster, victim string, submitted <-chan error) {
	t.Helper()
	gateway := c.Store("gateway-0")
	for {
		select {
		case err := <-submitted:
			t.Fatalf("the job ended (%v) before %s acknowledged anything", err, victim)
		case <-time.After(2 * time.Millisecond):
		}
		img, err := gateway.Load()
		if err != nil {
			t.Fatal(err)
		}
		for _, ji := range img.Jobs {
			for ch, a := range ji.Acked {
				if ch.Receiver == victim && a > 0 {
					return
				}
			}
		}
	}
}

// wipe restarts instance on an empty store, as a process brought back
// on a new node would be.
func wipe(t *testing.T, c *node.Cluster, instance string) {
	t.Helper()
	c.SetStore(instance, transport.NewMemStore())
	if err := c.Restart(instance); err != nil {
		t.Fatal(err)
	}
}

// onlyJobID is the internal id of the one job the gateway holds.
func onlyJobID(t *testing.T, c *node.Cluster) string {
	t.Helper()
	jobs := c.Nodes["gateway-0"].Gateway.ClusterJobs()
	if len(jobs) != 1 {
		t.Fatalf("the gateway holds %d jobs, want one", len(jobs))
	}
	return jobs[0].JobId
}

// TestLostStoresRebuildTheJob: a process whose store is wiped in the
// middle of a job (a shard's, after the gateway trimmed batches it
// acknowledged, or the gateway's own, losing the job) fails the job as
// lost (Job.state_lost), and the client attached to it submits it again
// from its files, says so, and ends with all four answers byte-equal to
// the reference.
func TestLostStoresRebuildTheJob(t *testing.T) {
	for _, victim := range []string{"shard-1", "gateway-0"} {
		t.Run(victim, func(t *testing.T) {
			d := testDatasets(t)[2]
			c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 4})
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			out := t.TempDir()
			a := submitAttached(ctx, t, c, d, out, "rebuilt")
			waitAcked(t, c, "shard-1", a.submitted)
			img, err := c.Store("gateway-0").Load()
			if err != nil {
				t.Fatal(err)
			}
			var lostIDs []string // the job's internal id before the loss
			for id := range img.Jobs {
				lostIDs = append(lostIDs, id)
			}
			wipe(t, c, victim)
			sum := a.wait(ctx, t, c, victim+" lost its store")
			compareOutputs(t, d, out)
			if len(sum.Rebuilds) != 1 || !strings.Contains(a.notices.String(), "submitting it again from your files") {
				t.Fatalf("rebuilds %q; notices:\n%s\nwant one rebuild, said on the notices", sum.Rebuilds, a.notices.String())
			}
			t.Logf("notices:\n%s", a.notices.String())
			// Nothing of the lost run stays anywhere: a shard that holds
			// it hears from the gateway (FailJob: not held) that it is
			// dropped, when the gateway lost it; else the client's delete.
			for _, id := range lostIDs {
				waitDropped(t, c, id, "shard-0", "shard-1")
			}
		})
	}
}

// TestLostShardIsRebuiltFromTheRetainedInput: when a shard's store is
// wiped, the gateway rebuilds it alone from the batches its outbox kept
// (gateway/alone.go): after the whole input is in (the shards cannot
// reach the gateway meanwhile, so the job cannot end first), with some of
// it still unacknowledged by the shard or with every batch of it, EOFs
// included, acknowledged (the gateway then runs no link to the shard: only
// the wiped shard's announcement of a newer incarnation makes it look),
// and while the client still uploads, the gateway having applied some of
// the shard's q1 rows. The job keeps its id, the other shard's channels
// go on where they were (nothing of the job is sent it again: the
// gateway's batches to it are each committed once), the client sees no
// failure and submits nothing again, the job's report and the client's
// notices say what happened, the four answers are byte-equal to the
// reference, and nothing of the job, its retained input or the batches
// the gateway kept stays behind. So too with a row the gateway computed
// and broadcast to the shards (a subquery's, of the matches it parsed),
// which shard-1 had applied: it is sent again from the outbox with the
// input. A job whose plan has a shuffle between
// the shards (a peer applied what the lost shard sent it) cannot be
// rebuilt alone: it runs again whole from the retained input, under a new
// id, its answers exact too.
func TestLostShardIsRebuiltFromTheRetainedInput(t *testing.T) {
	for _, when := range []string{"after the upload", "after shard-1 acknowledged it all", "during the upload", "with a shuffle between the shards", "with a row the gateway computed"} {
		t.Run(strings.ReplaceAll(when, " ", "-"), func(t *testing.T) {
			d := testDatasets(t)[2]
			proxies := map[string]*transporttest.Proxy{}
			route := func(instance, addr string) string {
				if instance != "gateway-0" && instance != "shard-1" {
					return addr
				}
				p, err := transporttest.NewProxy(addr)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(p.Close)
				proxies[instance] = p
				return p.Addr()
			}
			data := t.TempDir()
			opts := node.ClusterOptions{Route: route, OutboxLimit: 4, DataDir: data}
			computed := when == "with a row the gateway computed"
			acknowledged := when == "after shard-1 acknowledged it all" || computed
			after := when == "after the upload" || acknowledged
			whole := when == "with a shuffle between the shards"
			if after {
				opts.OutboxLimit = 1 << 20 // the shards' results wait in outboxes that hold them all
			}
			var qs []sqljob.Query
			switch {
			case whole:
				qs = append(sqlQueries()[:4:4], userQueries[1]) // "twice": a shuffle from shard to shard
			case computed:
				// A subquery's row, computed by the gateway from the
				// matches it parsed and broadcast to the shards: sent
				// again from the gateway's outbox, as the input is.
				qs = append(sqlQueries()[:4:4], sqljob.Query{Name: "above", Text: "SELECT civ, COUNT(*) AS n FROM match_players WHERE rating > (SELECT AVG(average_rating) FROM matches) GROUP BY civ ORDER BY civ"})
			}
			c := startCluster(t, deploy.Default(), opts)
			toGateway, toShard1 := proxies["gateway-0"], proxies["shard-1"]
			toGateway.Refuse(after) // the results wait; the upload does not
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			out := t.TempDir()
			a := submitAttachedKept(ctx, t, c, d, out, "kept", qs)
			waitAcked(t, c, "shard-1", a.submitted)
			lostID := onlyJobID(t, c)
			if after {
				if when == "after the upload" {
					// Once shard-1 has some of the job, it is cut off: the
					// rest of the upload waits for it in the gateway's
					// outbox, so that the gateway, which has more to send
					// it, finds the wiped shard-1 when it reconnects.
					toShard1.Refuse(true)
				}
				// Every byte in: the gateway holds the whole input.
				testkit.WaitFor(t, "the gateway to hold every byte of the input", time.Minute, func() bool { return uploaded(c, lostID) })
				if acknowledged {
					// Nothing left to send shard-1: the wiped one is found
					// only because its start is a newer incarnation (see
					// transport, "Incarnations").
					waitAllAcknowledged(t, c, lostID, "shard-1")
				}
				if computed && !acknowledgedOn(statusOf(t, c, "gateway-0"), lostID, "shard-1", "above-to-shard") {
					t.Fatal("shard-1 had not acknowledged the subquery's row before it lost its store: the case proves nothing")
				}
			}
			wipe(t, c, "shard-1")
			toGateway.Refuse(false)
			toShard1.Refuse(false)
			sum := a.wait(ctx, t, c, "shard-1 lost its store")
			if qs != nil {
				compareSQL(t, d, qs, out)
			} else {
				compareOutputs(t, d, out)
			}
			if len(sum.Rebuilds) != 0 {
				t.Errorf("the client submitted the job again (%q); the gateway should have rebuilt it", sum.Rebuilds)
			}
			rb := sum.Job.GetRebuilds()
			said := "shard-1 alone was rebuilt from the batches the gateway kept"
			if whole {
				said = "replayed its input in"
			}
			if len(rb) != 1 || !strings.Contains(rb[0], "shard-1 lost this job's state") || !strings.Contains(rb[0], said) {
				t.Errorf("the job's report says %q; want one rebuild, naming shard-1 and saying %q", rb, said)
			}
			if !strings.Contains(a.notices.String(), "the gateway rebuilds what was lost from what it kept") {
				t.Errorf("the client did not say the job was rebuilt; its notices:\n%s", a.notices.String())
			}
			t.Logf("the job's report: %q; the client's notices:\n%s", rb, a.notices.String())
			finalID := ""
			for _, j := range c.Nodes["gateway-0"].Gateway.ClusterJobs() {
				finalID = j.JobId
			}
			if whole == (finalID == lostID) {
				t.Errorf("the job ran as %q after the loss, as %q before; want the same run unless it ran again whole", finalID, lostID)
			}
			checkSentOnce(t, c, finalID, "shard-0")
			checkReleased(t, c, finalID)
			conn, err := client.Dial(c.GatewayAddr(), clientTLS(t, c))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			jobsAPI := wololov1.NewJobServiceClient(conn)
			if !whole {
				// The line gets how long shard-1 took to hold again what
				// it had been sent, once it has (the job may end first).
				testkit.WaitFor(t, "the job's line of the rebuild to say when shard-1 caught up", 10*time.Second, func() bool {
					r, err := jobsAPI.GetJob(ctx, &wololov1.GetJobRequest{JobId: "kept"})
					rb := r.GetJob().GetRebuilds()
					return err == nil && len(rb) == 1 && strings.Contains(rb[0], said+", and caught up in ")
				})
			}
			if _, err := jobsAPI.DeleteJob(ctx, &wololov1.DeleteJobRequest{JobId: "kept"}); err != nil {
				t.Fatal(err)
			}
			waitDropped(t, c, finalID, "shard-0", "shard-1", "gateway-0")
			if ents, err := os.ReadDir(filepath.Join(data, "gateway-0", "input")); err != nil || len(ents) != 0 {
				t.Errorf("retained input left after the job ended: %v, %v", ents, err)
			}
		})
	}
}

// checkReleased checks that the gateway's store no longer holds any
// batch of job the gateway sent (done, the job lets them go: Outbox.Release).
func checkReleased(t *testing.T, c *node.Cluster, job string) {
	t.Helper()
	store := c.Store("gateway-0")
	seen := 0
	for _, j := range statusOf(t, c, "gateway-0").GetJobs() {
		if j.GetJobId() != job {
			continue
		}
		for _, out := range j.GetOutputs() {
			ch := transport.ChannelID{Job: job, Stream: out.GetStream(), Sender: "gateway-0", Receiver: out.GetReceiver()}
			n := 0
			if err := store.ReadOutbox(ch, 1, func(transport.Entry) error { n++; return nil }); err != nil || n != 0 {
				t.Errorf("the gateway's store holds %d batches of %s (%v) after the job ended", n, ch, err)
			}
			seen++
		}
	}
	if seen == 0 {
		t.Errorf("the gateway's status shows no channel of job %s", job)
	}
}

// checkSentOnce checks that the gateway committed each batch of job to
// receiver once (no channel to it was sent again from its start): its
// outbox counts as many batches committed by this process as the last
// number it handed out.
func checkSentOnce(t *testing.T, c *node.Cluster, job, receiver string) {
	t.Helper()
	seen := false
	for _, j := range statusOf(t, c, "gateway-0").GetJobs() {
		if j.GetJobId() != job {
			continue
		}
		for _, out := range j.GetOutputs() {
			if out.GetReceiver() != receiver {
				continue
			}
			seen = true
			if out.GetBatches() != int64(out.GetLastSeq()) || out.GetAcked() != out.GetLastSeq() {
				t.Errorf("%s to %s: %d batches committed, last %d, acknowledged %d; want each once, all acknowledged", out.GetStream(), receiver, out.GetBatches(), out.GetLastSeq(), out.GetAcked())
			}
		}
	}
	if !seen {
		t.Errorf("the gateway's status shows no channel of job %s to %s", job, receiver)
	}
}

// uploaded reports whether the gateway holds every byte of job's input.
func uploaded(c *node.Cluster, job string) bool {
	for _, j := range c.Nodes["gateway-0"].Gateway.ClusterJobs() {
		if j.JobId == job {
			return j.BytesTotal > 0 && j.BytesUploaded == j.BytesTotal
		}
	}
	return false
}

// waitAllAcknowledged waits until receiver has applied the EOF of every
// channel of job it takes and the gateway, their sender, has had every
// batch of them acknowledged and ended its links: nothing of the job is
// left to send receiver, so no link of the gateway would meet it again by
// itself. It fails the test after a minute.
func waitAllAcknowledged(t *testing.T, c *node.Cluster, job, receiver string) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("%s to acknowledge all of job %s", receiver, job), time.Minute, func() bool {
		return allInputEnded(statusOf(t, c, receiver), job) && allOutputAcked(statusOf(t, c, "gateway-0"), job, receiver)
	})
}

// allInputEnded reports whether st shows job with inputs, every one at
// its EOF.
func allInputEnded(st *wololov1.GetResponse, job string) bool {
	for _, j := range st.GetJobs() {
		if j.GetJobId() != job || len(j.GetInputs()) == 0 {
			continue
		}
		for _, in := range j.GetInputs() {
			if !in.GetEof() {
				return false
			}
		}
		return true
	}
	return false
}

// acknowledgedOn reports whether st (the gateway's status) shows job's
// channel of the plan's channel name (its stream, after the stream's
// number: c5-name) to receiver with a batch acknowledged.
func acknowledgedOn(st *wololov1.GetResponse, job, receiver, name string) bool {
	for _, j := range st.GetJobs() {
		for _, out := range j.GetOutputs() {
			if j.GetJobId() == job && out.GetReceiver() == receiver && strings.HasSuffix(out.GetStream(), "-"+name) && out.GetAcked() > 0 {
				return true
			}
		}
	}
	return false
}

// allOutputAcked reports whether st shows job with channels to receiver,
// every one acknowledged up to its last batch, its outbox empty and its
// link ended.
func allOutputAcked(st *wololov1.GetResponse, job, receiver string) bool {
	seen := false
	for _, j := range st.GetJobs() {
		if j.GetJobId() != job {
			continue
		}
		for _, out := range j.GetOutputs() {
			if out.GetReceiver() != receiver {
				continue
			}
			if out.GetLastSeq() == 0 || out.GetAcked() != out.GetLastSeq() || out.GetOutboxDepth() != 0 || out.GetConnected() {
				return false
			}
			seen = true
		}
	}
	return seen
}

// attached is a client.Submit with --rebuilds 2 running in the background,
// its notices kept: the client attached to a job whose state a test loses.
type attached struct {
	notices   bytes.Buffer
	done      chan attachedResult
	submitted chan error // the error again, for waitAcked
}

type attachedResult struct {
	sum *client.Summary
	err error
}

func submitAttached(ctx context.Context, t *testing.T, c *node.Cluster, d *dataset, out, job string) *attached {
	t.Helper()
	return submitAttachedWith(ctx, t, c, d, out, client.SubmitOptions{JobID: job})
}

// submitAttachedKept is submitAttached of a job of the given SQL
// queries (none: the four default queries) that the client leaves at the
// gateway once it has the answers (--keep), for the test to look at and
// delete.
func submitAttachedKept(ctx context.Context, t *testing.T, c *node.Cluster, d *dataset, out, job string, qs []sqljob.Query) *attached {
	t.Helper()
	return submitAttachedWith(ctx, t, c, d, out, client.SubmitOptions{JobID: job, Queries: qs, Keep: true})
}

// submitAttachedWith is submitAttached with opts's job, queries and
// --keep.
func submitAttachedWith(ctx context.Context, t *testing.T, c *node.Cluster, d *dataset, out string, opts client.SubmitOptions) *attached {
	t.Helper()
	a := &attached{done: make(chan attachedResult, 1), submitted: make(chan error, 1)}
	opts.Server, opts.TLS, opts.Matches, opts.Players = c.GatewayAddr(), clientTLS(t, c), d.matches, d.players
	opts.Out, opts.Rebuilds, opts.Notices = out, 2, &a.notices
	go func() {
		sum, err := client.Submit(ctx, opts)
		a.done <- attachedResult{sum, err}
		a.submitted <- err
	}()
	return a
}

// wait is the submit's end, which must be a success. A job that does not
// end is failed with what every store holds of every job, to tell where it
// stands.
func (a *attached) wait(ctx context.Context, t *testing.T, c *node.Cluster, what string) *client.Summary {
	t.Helper()
	var r attachedResult
	select {
	case r = <-a.done:
	case <-ctx.Done():
		var where strings.Builder
		for _, j := range c.Nodes["gateway-0"].Gateway.ClusterJobs() {
			fmt.Fprintf(&where, "gateway job %s (%s): %s, %d of %d bytes\n", j.Name, j.JobId, j.State, j.BytesUploaded, j.BytesTotal)
		}
		for _, in := range c.Topology.Instances() {
			img, err := c.Store(in.Name()).Load()
			if err != nil {
				fmt.Fprintf(&where, "%s: %v\n", in.Name(), err)
				continue
			}
			for id, ji := range img.Jobs {
				fmt.Fprintf(&where, "%s holds job %s: watermarks %v, acked %v, reserved %v, records %d\n", in.Name(), id, ji.Watermarks, ji.Acked, ji.Reserved, len(ji.Records))
			}
		}
		t.Fatalf("the job did not end; notices:\n%s\nwhere the stores stand:\n%s", a.notices.String(), where.String())
	}
	if r.err != nil {
		t.Fatalf("submit after %s: %v\nnotices: %s", what, r.err, a.notices.String())
	}
	return r.sum
}

// waitDropped waits until none of the instances' stores holds job id,
// failing the test after 20 s.
func waitDropped(t *testing.T, c *node.Cluster, id string, instances ...string) {
	t.Helper()
	waitStores(t, c, "the stores to drop job "+id+" of the lost run", 20*time.Second, instances, func(img *transport.Image) bool {
		_, held := img.Jobs[id]
		return !held
	})
}

// TestGatewayRestartedWhileAShardIsRebuiltAlone: the gateway stops and
// starts again while a shard it rebuilds alone catches up, losing what it
// held in memory of the rebuild (the shard's rewound channels, its
// vouching for the shard). Its links find the shard behind what its store
// says was acknowledged and report it again: the shard is rebuilt alone
// again from where it is, or (when the shard finds itself behind what the
// gateway applied first) the job runs again whole. Either way the client
// submits nothing again and the four answers are byte-equal to the
// reference.
func TestGatewayRestartedWhileAShardIsRebuiltAlone(t *testing.T) {
	d := testDatasets(t)[2]
	data := t.TempDir()
	c := startCluster(t, deploy.Default(), node.ClusterOptions{OutboxLimit: 4, DataDir: data})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := t.TempDir()
	a := submitAttached(ctx, t, c, d, out, "restarted")
	waitAcked(t, c, "shard-1", a.submitted)
	id := onlyJobID(t, c)
	wipe(t, c, "shard-1")
	waitStores(t, c, "the gateway to record shard-1's rebuild", time.Minute, []string{"gateway-0"}, func(img *transport.Image) bool {
		rec := &wololov1.JobRecord{}
		ji := img.Jobs[id]
		return ji != nil && proto.Unmarshal(ji.Records["job/meta"], rec) == nil && len(rec.Rebuilds) > 0
	})
	if err := c.Restart("gateway-0"); err != nil {
		t.Fatal(err)
	}
	sum := a.wait(ctx, t, c, "the gateway restarted during shard-1's rebuild")
	compareOutputs(t, d, out)
	if len(sum.Rebuilds) != 0 {
		t.Errorf("the client submitted the job again (%q); the gateway should have rebuilt it", sum.Rebuilds)
	}
	if rb := sum.Job.GetRebuilds(); len(rb) < 1 || !strings.Contains(rb[0], "shard-1 alone was rebuilt") {
		t.Errorf("the job's report says %q; want shard-1's rebuild alone first", rb)
	}
	t.Logf("the job's report: %q", sum.Job.GetRebuilds())
}
