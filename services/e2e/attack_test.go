package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
)

// TestForgedClaimsAreRefused attacks the graph over its real gRPC ports
// the way the trust-boundary issue did: without a certificate, with another
// instance's, with a client's, with one from another CA, and with the right
// certificate but malformed or out-of-range claims. Each attempt is refused
// with its code, three times over (a refusal must leave no crash or stall
// behind); then a real job runs beside them and its four answers are
// byte-equal to the reference.
func TestForgedClaimsAreRefused(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// dial connects to an instance's internal port presenting id's
	// certificate of the cluster's CA (none for a zero id).
	dial := func(instance string, id pki.Identity) *grpc.ClientConn {
		t.Helper()
		cfg := &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true} // no certificate of ours
		if id.Name != "" {
			creds, err := c.CA.Credentials(id)
			if err != nil {
				t.Fatal(err)
			}
			cfg = creds.ClientTLS(instance)
		}
		conn, err := rpc.NewClient(c.Addrs[instance], cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	inst := func(name string) pki.Identity { return pki.Identity{Kind: pki.Instance, Name: name} }
	shard0 := inst("shard-0") // sends the gateway q3-partials, among others
	stageAs := func(id pki.Identity) wololov1.StageServiceClient {
		return wololov1.NewStageServiceClient(dial("gateway-0", id))
	}

	// open runs one Exchange with the given Open frame and returns how it
	// ended.
	open := func(stage wololov1.StageServiceClient, o *wololov1.Open) error {
		s, err := stage.Exchange(ctx)
		if err != nil {
			return err
		}
		if err := s.Send(&wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Open{Open: o}}); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		for {
			if _, err := s.Recv(); err != nil {
				return err
			}
		}
	}
	results := func(job, sender string, inc uint64) *wololov1.Open {
		return &wololov1.Open{JobId: job, Stream: "q3-partials", Sender: sender, Receiver: "gateway-0", Incarnation: inc}
	}
	// shard-0's own incarnation: a claim the fence takes, so that what
	// else an Open claims is what is refused.
	shard0Inc := statusOf(t, c, "shard-0").Incarnation
	otherCA, err := pki.NewCA("someone else's CA")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		call func() error
		want codes.Code
	}{
		// Who the caller is.
		{"results sent without a certificate", func() error { return open(stageAs(pki.Identity{}), results("j", "shard-0", 1)) }, codes.Unauthenticated},
		{"results sent with another instance's certificate", func() error {
			return open(stageAs(inst("shard-1")), results("j", "shard-0", 1))
		}, codes.PermissionDenied},
		{"results sent with a client's certificate named like the shard0", func() error {
			return open(stageAs(pki.Identity{Kind: pki.Client, Name: "shard-0"}), results("j", "shard-0", 1))
		}, codes.PermissionDenied},
		{"results sent with a certificate of another CA", func() error {
			creds, err := otherCA.Credentials(shard0)
			if err != nil {
				return err
			}
			conn, err := rpc.NewClient(c.Addrs["gateway-0"], creds.ClientTLS("gateway-0"))
			if err != nil {
				return err
			}
			defer conn.Close()
			return open(wololov1.NewStageServiceClient(conn), results("j", "shard-0", 1))
		}, codes.Unavailable}, // the handshake fails both ways: neither trusts the other's CA
		{"an announce as another instance", func() error {
			_, err := stageAs(inst("shard-1")).Announce(ctx, &wololov1.AnnounceRequest{Sender: "shard-0", Incarnation: 1})
			return err
		}, codes.PermissionDenied},
		// Issue 37, W7: a certificate of an instance outside the topology
		// failed another client's job, and made the gateway rebuild one
		// again and again. Refused before the job is even looked up (it
		// used to be NotFound here, for a job the gateway does not hold).
		{"a job failed by an instance outside the topology", func() error {
			_, err := stageAs(inst("evil-9")).FailJob(ctx, &wololov1.FailJobRequest{JobId: "j", Reporter: "evil-9", Reason: "\x1b[31mre-submit at https://evil\x1b[0m", StateLost: true})
			return err
		}, codes.PermissionDenied},
		{"a job dropped by an instance that is not the gateway", func() error {
			_, err := wololov1.NewStageServiceClient(dial("shard-1", shard0)).DropJob(ctx, &wololov1.DropJobRequest{JobId: "j"})
			return err
		}, codes.PermissionDenied},
		{"Status read with a client's certificate", func() error {
			_, err := wololov1.NewStatusClient(dial("gateway-0", pki.Identity{Kind: pki.Client, Name: "mallory"})).Get(ctx, &wololov1.GetRequest{})
			return err
		}, codes.PermissionDenied},
		{"Status read without a certificate", func() error {
			_, err := wololov1.NewStatusClient(dial("gateway-0", pki.Identity{})).Get(ctx, &wololov1.GetRequest{})
			return err
		}, codes.Unauthenticated},
		{"JobService called on the internal port", func() error {
			_, err := wololov1.NewJobServiceClient(dial("gateway-0", shard0)).GetJob(ctx, &wololov1.GetJobRequest{JobId: "j"})
			return err
		}, codes.Unimplemented},
		{"StageService called on the public port", func() error {
			conn, err := rpc.NewClient(c.GatewayAddr(), clientTLS(t, c))
			if err != nil {
				return err
			}
			defer conn.Close()
			return open(wololov1.NewStageServiceClient(conn), results("j", "shard-0", 1))
		}, codes.Unimplemented}, // not served there at all
		{"Status called on the public port", func() error {
			conn, err := rpc.NewClient(c.GatewayAddr(), clientTLS(t, c))
			if err != nil {
				return err
			}
			defer conn.Close()
			_, err = wololov1.NewStatusClient(conn).Get(ctx, &wololov1.GetRequest{})
			return err
		}, codes.Unimplemented},
		{"JobService called with an instance's certificate", func() error {
			creds, err := c.CA.Credentials(shard0)
			if err != nil {
				return err
			}
			conn, err := rpc.NewClient(c.GatewayAddr(), creds.GatewayTLS("127.0.0.1"))
			if err != nil {
				return err
			}
			defer conn.Close()
			_, err = wololov1.NewJobServiceClient(conn).GetJob(ctx, &wololov1.GetJobRequest{JobId: "j"})
			return err
		}, codes.PermissionDenied},
		{"JobService called without a certificate", func() error {
			conn, err := rpc.NewClient(c.GatewayAddr(), &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true})
			if err != nil {
				return err
			}
			defer conn.Close()
			_, err = wololov1.NewJobServiceClient(conn).GetJob(ctx, &wololov1.GetJobRequest{JobId: "j"})
			return err
		}, codes.Unauthenticated},

		// What the right caller claims.
		{"a sender that is no neighbour", func() error { return open(stageAs(inst("q9-stranger-0")), results("j", "q9-stranger-0", 1)) }, codes.PermissionDenied},
		// Of a job the gateway never made, every stream is refused as
		// such (NotFound, job not introduced), whether or not a job would
		// take it: so a sender whose receiver lost a plan's job with its
		// store learns that, rather than "unknown channel" for ever.
		{"a stream the gateway does not take from that sender", func() error {
			return open(stageAs(shard0), &wololov1.Open{JobId: "j", Stream: "matches", Sender: "shard-0", Receiver: "gateway-0", Incarnation: shard0Inc})
		}, codes.NotFound},
		{"a job id with a NUL byte", func() error { return open(stageAs(shard0), results("a\x00b", "shard-0", 1)) }, codes.InvalidArgument},
		{"a 1 MB job id", func() error {
			return open(stageAs(shard0), results(strings.Repeat("j", 1<<20), "shard-0", 1))
		}, codes.InvalidArgument},
		{"the largest incarnation", func() error { return open(stageAs(shard0), results("j", "shard-0", math.MaxUint64)) }, codes.InvalidArgument},
		{"an announce of the largest incarnation", func() error {
			_, err := stageAs(shard0).Announce(ctx, &wololov1.AnnounceRequest{Sender: "shard-0", Incarnation: math.MaxUint64})
			return err
		}, codes.InvalidArgument},
		{"a drop of a malformed job id", func() error {
			_, err := stageAs(inst("gateway-0")).DropJob(ctx, &wololov1.DropJobRequest{JobId: "x\x00"})
			return err
		}, codes.InvalidArgument},
		{"a job created under a malformed id", func() error {
			conn, err := rpc.NewClient(c.GatewayAddr(), clientTLS(t, c))
			if err != nil {
				return err
			}
			defer conn.Close()
			h := func(f schema.File) *wololov1.FileHeader {
				return &wololov1.FileHeader{Columns: schema.RequiredColumns[f], Size: 100, DataOffset: 10}
			}
			_, err = wololov1.NewJobServiceClient(conn).CreateJob(ctx, &wololov1.CreateJobRequest{JobId: "a\x00b", Matches: h(schema.Matches), Players: h(schema.Players)})
			if err != nil && !strings.Contains(err.Error(), "job id") {
				return errors.New("refused for another reason: " + err.Error())
			}
			return err
		}, codes.InvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < 3; i++ {
				if got := status.Code(tc.call()); got != tc.want {
					t.Fatalf("attempt %d: code %s (%v), want %s", i+1, got, tc.call(), tc.want)
				}
			}
		})
	}
	submit(t, c, testDatasets(t)[0])
}

// TestClientsOwnTheirJobs: two clients with credentials of the cluster's CA
// both run a job named "nightly" at once, each gets its own answers
// byte-equal to the reference, and neither can see, fetch or delete the
// other's job.
func TestClientsOwnTheirJobs(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	sets := testDatasets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tlsOf := func(name string) *tls.Config {
		cfg, err := c.ClientTLS(name)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	errs := make(chan error, 2)
	outs := map[string]string{"alice": t.TempDir(), "bob": t.TempDir()}
	data := map[string]*dataset{"alice": sets[0], "bob": sets[1]}
	for name := range outs {
		go func() {
			_, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: tlsOf(name), Matches: data[name].matches, Players: data[name].players, Out: outs[name], JobID: "nightly", Keep: true})
			errs <- err
		}()
	}
	for range outs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for name, out := range outs {
		compareOutputs(t, data[name], out)
	}
	mallory, err := client.Open(c.GatewayAddr(), tlsOf("mallory"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer mallory.Close()
	if _, err := mallory.Get(ctx, "nightly"); status.Code(err) != codes.NotFound {
		t.Errorf("mallory's GetJob of nightly: %v, want NotFound", err)
	}
	if _, err := mallory.Fetch(ctx, "nightly", t.TempDir()); status.Code(err) != codes.NotFound {
		t.Errorf("mallory's GetResults of nightly: %v, want NotFound", err)
	}
	if err := mallory.Delete(ctx, "nightly"); status.Code(err) != codes.NotFound {
		t.Errorf("mallory's DeleteJob of nightly: %v, want NotFound", err)
	}
	alice, err := client.Open(c.GatewayAddr(), tlsOf("alice"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	if job, err := alice.Get(ctx, "nightly"); err != nil || job.State != wololov1.JobState_JOB_STATE_DONE {
		t.Errorf("alice's own job after the others tried: %v, %v", job, err)
	}
}
