// Package healthcheck is `wololo health`: one gRPC health check against a
// Wololo process, exiting 0 only when it answers SERVING. The images are
// built FROM scratch, with no shell or curl inside, so the binary is its
// own container health check command.
//
// On the internal plane a process only talks to holders of the CA's
// certificates, so in a container the check presents the container's own
// (--as NAME with --tls-dir); --insecure checks a process run with
// --insecure.
//
// It only asks; it starts, stops and changes nothing.
package healthcheck

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
)

// Check asks addr's health service once and reports an error unless it
// answers SERVING within timeout, over TLS with tlsConfig (nil: plain
// TCP).
func Check(ctx context.Context, addr string, tlsConfig *tls.Config, timeout time.Duration) error {
	conn, err := rpc.NewClient(addr, tlsConfig)
	if err != nil {
		return fmt.Errorf("health of %s: %w", addr, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
	if err != nil {
		return fmt.Errorf("health of %s: %w", addr, err)
	}
	if r.Status != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("health of %s: %s", addr, r.Status)
	}
	return nil
}

// dialTLS is what the check expects at addr: the gateway (asked for, or
// any check by a client, which can only reach the public port), verified
// under serverName or the host of addr; else the process serverName names,
// --as itself if none.
func dialTLS(creds *pki.Credentials, addr, serverName string, gateway bool) *tls.Config {
	if gateway || creds.Self.Kind == pki.Client {
		if serverName == "" {
			serverName = tlsflags.Host(addr)
		}
		return creds.GatewayTLS(serverName)
	}
	if serverName == "" {
		serverName = creds.Self.Name
	}
	return creds.ClientTLS(serverName)
}

// Run is `wololo health`.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo health", "usage: wololo health --addr HOST:PORT --as NAME [--tls-dir DIR] [--server-name NAME] [--gateway] [--timeout 2s]\n\nExits 0 when the process at HOST:PORT answers the gRPC health check SERVING\n(the containers' health check command). The server must be the process\n--server-name names (default: --as), or with --gateway (the default for a\nclient's credential) the gateway, checked on its public port.\n", stderr)
	addr := fs.String("addr", "", "address of the process to check (required)")
	tlsFlags := tlsflags.Register(fs, "")
	as := fs.String("as", "", "present this credential of --tls-dir (an instance's or master's own; required unless --insecure)")
	serverName := fs.String("server-name", "", "the process to expect at --addr (default: --as), or with --gateway the host name to verify the gateway's certificate under (default: the host of --addr)")
	gateway := fs.Bool("gateway", false, "expect the gateway's public port: its certificate must be the gateway's (the default when --as is a client)")
	timeout := fs.Duration("timeout", 2*time.Second, "give up after this long")
	quiet := fs.Bool("quiet", false, "print nothing when healthy")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := cli.Required(fs, "addr"); err != nil {
		return err
	}
	var tlsConfig *tls.Config
	if !tlsFlags.Insecure {
		if err := cli.Required(fs, "as"); err != nil {
			return err
		}
		creds, err := tlsFlags.Load(*as, nil)
		if err != nil {
			return err
		}
		tlsConfig = dialTLS(creds, *addr, *serverName, *gateway)
	}
	if err := Check(ctx, *addr, tlsConfig, *timeout); err != nil {
		return err
	}
	if !*quiet {
		fmt.Fprintf(stdout, "%s: SERVING\n", *addr)
	}
	return nil
}
