package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/transport/transporttest"
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

// testDatasets are the shared datasets, generated once per test binary.
func testDatasets(t *testing.T) []*dataset {
	t.Helper()
	return sharedDatasets.Get(t)
}

var sharedDatasets = testkit.NewShared("wololo-e2e-", func(dir string) ([]*dataset, error) {
	var datasets []*dataset
	configs := []struct {
		name string
		cfg  datagen.Config
	}{
		{"small-seed1", datagen.Config{Matches: 3000, Seed: 1}},
		{"messy-seed2", datagen.Config{Matches: 8000, Seed: 2, ShuffleColumns: true, CRLF: true, QuoteAll: true}},
		{"medium-seed3", datagen.Config{Matches: 25000, Seed: 3}},
	}
	for _, c := range configs {
		d := &dataset{name: c.name}
		path := filepath.Join(dir, c.name)
		if _, err := datagen.WriteDir(c.cfg, path); err != nil {
			return nil, fmt.Errorf("generate %s: %w", c.name, err)
		}
		d.matches, d.players = filepath.Join(path, "matches.csv"), filepath.Join(path, "match_players.csv")
		var err error
		if d.want, err = reference.EvaluateFiles(d.matches, d.players); err != nil {
			return nil, fmt.Errorf("reference on %s: %w", c.name, err)
		}
		datasets = append(datasets, d)
	}
	return datasets, nil
})

func startCluster(t *testing.T, top deploy.Topology, opts node.ClusterOptions) *node.Cluster {
	t.Helper()
	if opts.Log == nil {
		opts.Log = testkit.Logger(t, hclog.Warn)
	}
	c, err := node.StartCluster(top, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// gateway is a deployment a test submits to: a node.Cluster or a
// local.Cluster.
type gateway interface {
	GatewayAddr() string
	ClientTLS(name string) (*tls.Config, error)
}

// clientTLS is the TLS config of the test's client credential.
// submitInBackground submits dataset d as job on c, its results to out,
// and returns where the client's outcome comes: nil once the results are
// in out, else the error submit returned.
func submitInBackground(ctx context.Context, t *testing.T, c gateway, d *dataset, out, job string) <-chan error {
	t.Helper()
	return submitOptsInBackground(ctx, t, c, client.SubmitOptions{Matches: d.matches, Players: d.players, Out: out, JobID: job})
}

// submitOptsInBackground is submitInBackground of any SubmitOptions (its
// Server and TLS are c's).
func submitOptsInBackground(ctx context.Context, t *testing.T, c gateway, o client.SubmitOptions) <-chan error {
	t.Helper()
	o.Server, o.TLS = c.GatewayAddr(), clientTLS(t, c) // here: t.Fatal must not run on another goroutine
	done := make(chan error, 1)
	go func() {
		_, err := client.Submit(ctx, o)
		done <- err
	}()
	return done
}

func clientTLS(t testing.TB, c gateway) *tls.Config {
	t.Helper()
	cfg, err := c.ClientTLS("client")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// clientDir writes the cluster's CA certificate and a credential for the
// client name into a fresh directory, for a client process (--tls-dir).
func clientDir(t testing.TB, c *node.Cluster, name string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(pki.CertPath(dir, pki.CAName), c.CA.PEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CA.Ensure(dir, pki.Spec{ID: pki.Identity{Kind: pki.Client, Name: name}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// operatorTLS is the TLS config for reading an instance's Status.
func operatorTLS(t testing.TB, c interface {
	OperatorTLS(string) (*tls.Config, error)
}, instance string) *tls.Config {
	t.Helper()
	cfg, err := c.OperatorTLS(instance)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// submit runs a job and checks all four files and the report against the
// reference, byte for byte.
func submit(t *testing.T, c gateway, d *dataset) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := t.TempDir()
	sum, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: d.matches, Players: d.players, Out: out})
	if err != nil {
		t.Fatalf("%s: submit: %v", d.name, err)
	}
	compareOutputs(t, d, out)
	for _, f := range []struct {
		got  *wololov1.FileReport
		want reference.FileReport
	}{{sum.Job.Matches, d.want.Report.Matches}, {sum.Job.Players, d.want.Report.Players}} {
		if f.got.Rows != f.want.Rows || f.got.Malformed != f.want.Malformed {
			t.Errorf("%s: %s report rows %d malformed %d, reference says %d and %d", d.name, f.got.File, f.got.Rows, f.got.Malformed, f.want.Rows, f.want.Malformed)
		}
	}
}

func compareOutputs(t *testing.T, d *dataset, dir string) {
	t.Helper()
	want := d.want.Files()
	testkit.SameFiles(t, dir, want)
	for name, w := range want {
		if bytes.Count(w, []byte("\n")) < 2 {
			t.Errorf("%s: reference %s has no rows; the dataset does not exercise it", d.name, name)
		}
	}
}

func TestPipelineMatchesReference(t *testing.T) {
	sets := testDatasets(t)
	topologies := map[string]deploy.Topology{
		"one-replica-each": deploy.Default().Uniform(1),
		"default":          deploy.Default(),
		"three-shards":     deploy.Default().Uniform(3),
	}
	for name, top := range topologies {
		t.Run(name, func(t *testing.T) {
			c := startCluster(t, top, node.ClusterOptions{})
			for _, d := range sets {
				submit(t, c, d)
			}
		})
	}
}

func TestSmallBatchesAndTightOutbox(t *testing.T) {
	d := testDatasets(t)[1]
	c := startCluster(t, deploy.Default(), node.ClusterOptions{BatchRows: 97, OutboxLimit: 2})
	submit(t, c, d)
}

func TestConcurrentJobsDoNotMix(t *testing.T) {
	sets := testDatasets(t)
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	var wg sync.WaitGroup
	for _, d := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			submit(t, c, d)
		}()
	}
	wg.Wait()
}

func TestBrokenStreamsRecoverExactly(t *testing.T) {
	d := testDatasets(t)[2]
	proxies := map[string]*transporttest.Proxy{}
	var mu sync.Mutex
	route := func(instance, addr string) string {
		if instance == "gateway-0" {
			return addr // results and uploads stay direct; every worker link is cut
		}
		p, err := transporttest.NewProxy(addr)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		proxies[instance] = p
		mu.Unlock()
		return p.Addr()
	}
	c := startCluster(t, deploy.Default(), node.ClusterOptions{Route: route, BatchRows: 128, OutboxLimit: 4})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // cut every worker's inbound connections every 15 ms
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(15 * time.Millisecond):
			}
			mu.Lock()
			for _, p := range proxies {
				p.Cut()
			}
			mu.Unlock()
		}
	}()
	submit(t, c, d)
	close(stop)
	wg.Wait()
	cuts := 0
	for _, p := range proxies {
		cuts += p.Cuts()
		p.Close()
	}
	// A cut counts only a connection that was open: a link being redialed
	// (its backoff grows from 50 ms) has none to cut, so the count follows
	// the job's length, 0.3-1 s here (CI once saw 4 at 30 ms a round).
	if cuts < 3 {
		t.Fatalf("only %d cuts happened; the test did not break streams mid-job", cuts)
	}
	t.Logf("%d connection cuts during the job", cuts)
}

func TestMissingColumnIsRefused(t *testing.T) {
	c := startCluster(t, deploy.Default().Uniform(1), node.ClusterOptions{})
	dir := t.TempDir()
	matches := filepath.Join(dir, "matches.csv")
	players := filepath.Join(dir, "match_players.csv")
	os.WriteFile(matches, []byte("token,winning_team,mirror,ladder,patch,average_rating,map,map_size,num_players,server\nA,1,False,RM_1v1,1,1500,arena,tiny,2,eastus\n"), 0o644)
	os.WriteFile(players, []byte("token,match,rating,color,civ,team,winner\np,A,1500,Red,Franks,1,True\n"), 0o644)
	_, err := client.Submit(context.Background(), client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: matches, Players: players, Out: dir})
	if err == nil || !strings.Contains(err.Error(), "matches.csv") || !strings.Contains(err.Error(), `"duration"`) {
		t.Fatalf("err = %v, want it to name matches.csv and the duration column", err)
	}
	// The same through the raw API: the right gRPC status code.
	conn, err := client.Dial(c.GatewayAddr(), clientTLS(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = wololov1.NewJobServiceClient(conn).CreateJob(context.Background(), &wololov1.CreateJobRequest{
		Matches: &wololov1.FileHeader{Columns: []string{"token", "ladder", "mirror", "average_rating", "map", "server", "duration"}},
		Players: &wololov1.FileHeader{Columns: []string{"match", "rating", "winner"}},
	})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `match_players.csv`) || !strings.Contains(err.Error(), `"civ"`) {
		t.Fatalf("CreateJob with no civ column: %v", err)
	}
}

func TestClientErrors(t *testing.T) {
	dir := t.TempDir()
	d := testDatasets(t)[0]
	_, err := client.Submit(context.Background(), client.SubmitOptions{Server: "127.0.0.1:1", Matches: filepath.Join(dir, "nope.csv"), Players: d.players, Out: dir})
	if err == nil || !strings.Contains(err.Error(), "nope.csv") {
		t.Fatalf("missing file: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = client.Submit(ctx, client.SubmitOptions{Server: "127.0.0.1:1", Matches: d.matches, Players: d.players, Out: dir, Reach: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the gateway") && !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("unreachable gateway: %v", err)
	}
}
