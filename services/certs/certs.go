// Package certs is `wololo certs`: it makes a deployment's CA and the
// certificate of every process of its topology (each instance, each
// master), a first client credential ("client") and an operator credential
// ("operator", for grpcurl against Status, with operator.token for the
// admin HTTP listeners: services/admin), and issues further client
// credentials on demand. `wololo local` and `make up` call the same Certify,
// so that TLS is on without anyone running this by hand.
//
// It decides which identities a topology has and writes their files through
// package pki; it serves nothing and checks no calls.
package certs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cli"
	"github.com/wololo/wololo/services/tlsflags"
	"github.com/wololo/wololo/transport/pki"
)

// OperatorName is the operator credential Certify makes.
const OperatorName = "operator"

// Identities are every identity Certify makes for top: its instances, its
// masters, the first client and the operator.
func Identities(top deploy.Topology) []pki.Identity {
	var out []pki.Identity
	for _, in := range top.Instances() {
		out = append(out, pki.Identity{Kind: pki.Instance, Name: in.Name()})
	}
	for _, in := range top.MasterInstances() {
		out = append(out, pki.Identity{Kind: pki.Master, Name: in.Name()})
	}
	return append(out, pki.Identity{Kind: pki.Client, Name: tlsflags.DefaultClient}, pki.Identity{Kind: pki.Operator, Name: OperatorName})
}

// Certify makes dir's CA if it has none and every certificate of
// Identities(top) that is missing, not the CA's or about to expire; hosts
// are extra names or addresses the servers' certificates carry (a public
// host name of the gateway). Existing valid certificates are kept, so that
// running it again is cheap and changes nothing.
func Certify(dir string, top deploy.Topology, log hclog.Logger, hosts ...string) error {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	ca, made, err := pki.OpenCA(dir)
	if err != nil {
		return fmt.Errorf("certificates in %s: %w", dir, err)
	}
	if made {
		log.Info("made a new CA", "dir", dir)
	}
	wrote := 0
	for _, id := range Identities(top) {
		did, err := ca.Ensure(dir, id, hosts...)
		if err != nil {
			return fmt.Errorf("certificates in %s: %w", dir, err)
		}
		if did {
			wrote++
		}
	}
	// The operator's bearer token for the admin HTTP listeners (the web
	// page, /api/cluster, /metrics with job names), signed by the CA.
	did, err := ca.EnsureToken(dir, pki.Identity{Kind: pki.Operator, Name: OperatorName})
	if err != nil {
		return fmt.Errorf("certificates in %s: %w", dir, err)
	}
	if did {
		wrote++
	}
	if wrote > 0 {
		log.Info("issued certificates", "dir", dir, "count", wrote)
	}
	return nil
}

// IssueClient writes a client credential NAME.pem and NAME.key into dir,
// signed by the CA there; a name an instance, a master or the operator has
// is refused.
func IssueClient(dir string, top deploy.Topology, name string) error {
	for _, id := range Identities(top) {
		if id.Name == name && id.Kind != pki.Client {
			return fmt.Errorf("%w: %q is the name of %s", cli.ErrUsage, name, id)
		}
	}
	ca, err := pki.LoadCA(dir)
	if err != nil {
		return fmt.Errorf("the CA in %s: %w (make it first with `wololo certs --dir %s`)", dir, err, dir)
	}
	if _, err := ca.Ensure(dir, pki.Identity{Kind: pki.Client, Name: name}); err != nil {
		return err
	}
	return nil
}

const usage = `usage: wololo certs [--dir DIR] [--topology F] [--host H,...]
       wololo certs client --name NAME [--dir DIR]

The first form makes the deployment's CA (if DIR has none) and a
certificate for every instance and master of the topology, a first client
credential (client.pem, client.key) and an operator credential
(operator.pem, operator.key, for grpcurl; operator.token, a bearer token for
the admin HTTP listeners: the web page, /api/cluster, /metrics with job
labels). Valid certificates and tokens already in DIR are kept. The second issues another client credential, NAME.pem and NAME.key.
Keys and tokens are written 0600 in a 0700 directory.
`

// Run is `wololo certs`.
func Run(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "client" {
		return runClient(args[1:], stdout, stderr)
	}
	fs := cli.NewFlagSet("wololo certs", usage, stderr)
	dir := fs.String("dir", "data/tls", "directory of the CA and certificates")
	topoPath := fs.String("topology", "", "topology JSON file (default: $WOLOLO_TOPOLOGY if set, else the embedded one)")
	hosts := fs.String("host", "", "comma-separated extra host names or IPs for the servers' certificates (the gateway's public name)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	top, err := deploy.Select(*topoPath)
	if err != nil {
		return err
	}
	var extra []string
	for _, h := range strings.Split(*hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			extra = append(extra, h)
		}
	}
	if err := Certify(*dir, top, nil, extra...); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "certificates for %d identities in %s (CA: %s)\n", len(Identities(top)), *dir, pki.CertPath(*dir, pki.CAName))
	return nil
}

func runClient(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo certs client", usage, stderr)
	dir := fs.String("dir", "data/tls", "directory of the CA and certificates")
	name := fs.String("name", "", "the client's name (required): its jobs are its own")
	topoPath := fs.String("topology", "", "topology JSON file, whose process names a client may not take")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := cli.Required(fs, "name"); err != nil {
		return err
	}
	if err := (pki.Identity{Kind: pki.Client, Name: *name}).Validate(); err != nil {
		return errors.Join(cli.ErrUsage, err)
	}
	top, err := deploy.Select(*topoPath)
	if err != nil {
		return err
	}
	if err := IssueClient(*dir, top, *name); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "client credential %s and %s\n", pki.CertPath(*dir, *name), pki.KeyPath(*dir, *name))
	return nil
}
