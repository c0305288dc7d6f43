package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/ops/healthcheck"
	"github.com/wololo/wololo/services/roles/local"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
)

// impostor serves whatever it is asked, under creds' certificate, on a
// loopback listener, and counts the calls that reach it: an uploaded file
// would be one.
func impostor(t *testing.T, creds *pki.Credentials) (addr string, calls *atomic.Int64) {
	t.Helper()
	calls = new(atomic.Int64)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(grpc.Creds(rpc.TLSCredentials(creds.ServerTLS())),
		grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
			calls.Add(1)
			return status.Error(codes.Unimplemented, "impostor")
		}))
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return l.Addr().String(), calls
}

// TestOnlyTheGatewayServesClients makes issue 22's item 9: the key of a
// shard (and of a master) of the deployment serves on the address a client
// dials for the gateway, under the name the client dials and under the
// shard's own. Before, the client checked only the chain and a host name
// every server certificate carried, and uploaded its files to the
// impostor. Now the client, `wololo health` as a client and an operator
// dialing the gateway by name refuse it at the handshake, and no call
// reaches it; then a real job on the real gateway gets its four answers
// byte-equal to the reference.
func TestOnlyTheGatewayServesClients(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	sets := testDatasets(t)
	clientCreds, err := c.CA.Credentials(pki.Identity{Kind: pki.Client, Name: "client"})
	if err != nil {
		t.Fatal(err)
	}
	operator, err := c.CA.Credentials(pki.Identity{Kind: pki.Operator, Name: "operator"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []pki.Identity{{Kind: pki.Instance, Name: "shard-0"}, {Kind: pki.Master, Name: "master-1"}} {
		creds, err := c.CA.Credentials(id)
		if err != nil {
			t.Fatal(err)
		}
		addr, calls := impostor(t, creds)
		for i, tlsConfig := range []*tls.Config{
			clientCreds.GatewayTLS("127.0.0.1"), // what `wololo client --server 127.0.0.1:PORT` dials with
			clientCreds.GatewayTLS(id.Name),     // a name the impostor's certificate does carry
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := client.Submit(ctx, client.SubmitOptions{Server: addr, TLS: tlsConfig, Matches: sets[0].matches, Players: sets[0].players, Out: t.TempDir(), Reach: 2 * time.Second})
			cancel()
			if err == nil || (i == 1 && !strings.Contains(err.Error(), "not the gateway")) {
				t.Errorf("%s as the gateway (%d): submit returned %v", id, i, err)
			}
			if err := healthcheck.Check(context.Background(), addr, tlsConfig, 2*time.Second); err == nil {
				t.Errorf("%s as the gateway (%d): the health check took it", id, i)
			}
		}
		if err := healthcheck.Check(context.Background(), addr, operator.ClientTLS("gateway-0"), 2*time.Second); err == nil {
			t.Errorf("%s passed as gateway-0 to an operator", id)
		}
		if n := calls.Load(); n != 0 {
			t.Errorf("%d calls reached %s posing as the gateway", n, id)
		}
	}
	// The real gateway is taken, under the address and by its name.
	if err := healthcheck.Check(context.Background(), c.GatewayAddr(), clientCreds.GatewayTLS("127.0.0.1"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := healthcheck.Check(context.Background(), c.Addrs["gateway-0"], operator.ClientTLS("gateway-0"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	submit(t, c, sets[0])
}

// TestRevokedClientIsRefused makes issue 22's item 10 revocation, and
// issue 37's W12: a client whose certificate leaked is revoked while
// another client's job runs and while it has a Watch of its own job and
// an upload to it open. Once the gateway reads the list again (driven
// here, as it does by itself every pki.ReloadEvery) both open calls end
// with PermissionDenied, "certificate revoked"; its open connection gets
// no further call, and a new connection's calls get the same answer (not
// a failed handshake, which the client would read as a gateway that is
// down); no process restarts, and the other client's four answers are
// byte-equal to the reference.
func TestRevokedClientIsRefused(t *testing.T) {
	list := filepath.Join(t.TempDir(), "crl.pem")
	c := startCluster(t, deploy.Default(), node.ClusterOptions{RevocationList: list})
	sets := testDatasets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	mallory, err := c.CA.Credentials(pki.Identity{Kind: pki.Client, Name: "mallory"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rpc.NewClient(c.GatewayAddr(), mallory.GatewayTLS("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	jobs := wololov1.NewJobServiceClient(conn)
	get := func() error {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		_, err := jobs.GetJob(cctx, &wololov1.GetJobRequest{JobId: "nightly"}, grpc.WaitForReady(true))
		return err
	}
	if err := get(); status.Code(err) != codes.NotFound {
		t.Fatalf("mallory before the revocation: %v, want NotFound (let through, no such job)", err)
	}
	// mallory's job, uploading: a Watch of it streams until it ends, and
	// an upload of its matches waits for data.
	if _, err := jobs.CreateJob(ctx, &wololov1.CreateJobRequest{JobId: "nightly",
		Matches: headerOf(schema.Matches, 100, 10_000), Players: headerOf(schema.Players, 100, 10_000)}); err != nil {
		t.Fatal(err)
	}
	open, endOpen := context.WithCancel(ctx)
	defer endOpen()
	watch, err := jobs.WatchJob(open, &wololov1.WatchJobRequest{JobId: "nightly"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watch.Recv(); err != nil {
		t.Fatalf("mallory's watch before the revocation: %v", err)
	}
	up, err := jobs.Upload(open)
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: "nightly", File: wololov1.InputFile_INPUT_FILE_MATCHES}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := up.Recv(); err != nil {
		t.Fatalf("mallory's upload before the revocation: %v", err)
	}

	out := t.TempDir()
	done := submitInBackground(ctx, t, c, sets[2], out, "beside")
	if _, err := c.CA.Revoke(list, mallory.Leaf().SerialNumber); err != nil {
		t.Fatal(err)
	}
	c.ReloadRevocations()
	// The open calls end now; a watch left alone would stream every 2 s
	// for as long as the job lasts, an idle upload for --upload-idle.
	time.AfterFunc(5*time.Second, endOpen)
	revoked := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), "certificate revoked") || !rpc.IsRevoked(err) {
			t.Errorf("%s after the revocation: %v, want PermissionDenied, certificate revoked", what, err)
		}
	}
	for err = nil; err == nil; _, err = watch.Recv() {
	}
	revoked("mallory's open watch", err)
	_, err = up.Recv()
	revoked("mallory's open upload", err)
	// On the open connection, a new call.
	revoked("a new call on mallory's open connection", get())
	// A new connection: the handshake passes, the call is refused.
	again, err := client.Open(c.GatewayAddr(), mallory.GatewayTLS("127.0.0.1"), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	_, err = again.Get(ctx, "nightly")
	revoked("mallory on a new connection", err)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	compareOutputs(t, sets[2], out)
	// Another client connecting now is still let through.
	other, err := c.ClientTLS("bob")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := client.Open(c.GatewayAddr(), other, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if _, err := bob.Get(ctx, "beside"); status.Code(err) != codes.NotFound {
		t.Fatalf("bob after mallory's revocation: %v, want NotFound (let through, not his job)", err)
	}
}

// TestRevocationReachesRealProcesses is the revocation with the commands
// an operator types, against `wololo local`'s processes, which loaded
// their credentials from its certificate directory: `wololo certs client
// --out` hands mallory a directory without the CA's key, `wololo certs
// revoke --name mallory` revokes it while the default client's job runs,
// and the gateway refuses mallory from then on without a restart, saying
// the certificate was revoked, which `wololo client` prints as it is; the
// job's four answers are byte-equal. A key made readable to others is
// refused by a command that loads it.
func TestRevocationReachesRealProcesses(t *testing.T) {
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[2]
	dir := t.TempDir()
	c := startLocal(t, local.Options{
		Binary: bin, DataDir: dir,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wololo := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		return string(out), err
	}

	handed := filepath.Join(t.TempDir(), "mallory")
	if out, err := wololo("certs", "client", "--dir", c.TLSDir(), "--name", "mallory", "--out", handed); err != nil {
		t.Fatalf("certs client: %v\n%s", err, out)
	}
	entries, _ := os.ReadDir(handed)
	for _, e := range entries {
		if e.Name() != "mallory.pem" && e.Name() != "mallory.key" && e.Name() != "ca.pem" {
			t.Errorf("the directory handed to mallory holds %s", e.Name())
		}
	}
	for _, d := range []string{handed, c.TLSDir()} {
		if _, err := os.Stat(pki.KeyPath(d, pki.CAName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the CA's key is in %s: %v", d, err)
		}
	}
	mallory, err := pki.Load(handed, "mallory")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rpc.NewClient(c.GatewayAddr(), mallory.GatewayTLS("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	get := func() error {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		_, err := wololov1.NewJobServiceClient(conn).GetJob(cctx, &wololov1.GetJobRequest{JobId: "beside"}, grpc.WaitForReady(true))
		return err
	}
	if err := get(); status.Code(err) != codes.NotFound {
		t.Fatalf("mallory before the revocation: %v, want NotFound", err)
	}

	out := t.TempDir()
	done := submitInBackground(ctx, t, c, d, out, "beside")
	if out, err := wololo("certs", "revoke", "--dir", c.TLSDir(), "--name", "mallory"); err != nil || !strings.Contains(out, "revoked 1 more") {
		t.Fatalf("certs revoke: %v\n%s", err, out)
	}
	testkit.Await(10*pki.ReloadEvery, func() bool { err = get(); return status.Code(err) == codes.PermissionDenied })
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "certificate revoked") {
		t.Fatalf("mallory's open connection after the revocation: %v, want PermissionDenied, certificate revoked", err)
	}
	// A new connection (a NotFound would say the call was let through):
	// the client prints the gateway's word, not a gateway that may be down.
	if out, err := wololo("client", "status", "--tls-dir", handed, "--name", "mallory", "--server", c.GatewayAddr(), "--connect-timeout", "2s", "--job", "beside"); err == nil || strings.Contains(out, "no job") || !strings.Contains(out, "certificate revoked") || strings.Contains(out, "running?") {
		t.Fatalf("mallory's new connection after the revocation: %v\n%s", err, out)
	} else {
		t.Logf("mallory's new connection after the revocation: %s", out)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	compareOutputs(t, d, out)

	// A key open to other users is refused where it is loaded.
	key := pki.KeyPath(c.TLSDir(), "operator")
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := wololo("health", "--addr", c.GatewayAddr(), "--tls-dir", c.TLSDir(), "--as", "operator", "--gateway"); err == nil || !strings.Contains(out, "open to other users") {
		t.Fatalf("health with a 0644 key: %v\n%s", err, out)
	}
	if out, err := wololo("certs", "--dir", c.TLSDir()); err != nil {
		t.Fatalf("certs: %v\n%s", err, out)
	}
	if out, err := wololo("health", "--addr", c.GatewayAddr(), "--tls-dir", c.TLSDir(), "--as", "operator", "--gateway"); err != nil {
		t.Fatalf("health after `wololo certs` tightened the key again: %v\n%s", err, out)
	}
}
