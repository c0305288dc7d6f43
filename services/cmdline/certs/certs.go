// Package certs is `wololo certs`: it makes a deployment's CA and the
// certificate of every process of its topology (each instance, each
// master), a first client credential ("client") and an operator credential
// ("operator", for grpcurl against Status, with operator.token for the
// admin HTTP listeners: services/ops/admin), issues further client
// credentials on demand and revokes certificates. `wololo local` and `make
// up` call the same Certify, so that TLS is on without anyone running this
// by hand.
//
// Every run leaves the directory as it should be, whatever it found: the
// directories 0700 and the keys 0600 (pki.Tighten), the CA's key in its
// own directory (DIR/ca, or --ca-dir) rather than among the credentials
// handed out, and every certificate reissued whose identity or names no
// longer match what the run asks for (a new --host, a revoked one).
// Only the gateway's certificate carries the --host names: it is the one
// process clients dial by a host name.
//
// It decides which identities a topology has and writes their files through
// package pki; it serves nothing and checks no calls.
package certs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
	"github.com/wololo/wololo/services/wire/pki"
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

// Specs are the certificates Certify makes for top: one per identity, the
// gateway's marked as the gateway's and carrying hosts.
func Specs(top deploy.Topology, hosts ...string) []pki.Spec {
	gateways := map[string]bool{}
	for _, in := range top.Instances() {
		gateways[in.Name()] = in.Stage == top.Gateway().Name
	}
	var out []pki.Spec
	for _, id := range Identities(top) {
		s := pki.Spec{ID: id}
		if id.Kind == pki.Instance && gateways[id.Name] {
			s.Gateway, s.Hosts = true, hosts
		}
		out = append(out, s)
	}
	return out
}

// Options say where Certify writes.
type Options struct {
	// Dir holds the CA's certificate, its revocation list and the
	// credentials.
	Dir string
	// CADir holds the CA's key (pki.CAKeyDir(Dir) if "").
	CADir string
	// Hosts are extra names or addresses the gateway's certificate
	// carries (its public host name).
	Hosts []string
	Log   hclog.Logger
}

// Certify makes the CA if there is none and every certificate of
// Specs(top) that is missing, not the CA's, about to expire, revoked or
// with other names than asked; it keeps the rest, so that running it again
// is cheap and changes nothing that is still right. It tightens modes
// every time (see the package doc).
func Certify(top deploy.Topology, o Options) error {
	log := o.Log
	if log == nil {
		log = hclog.NewNullLogger()
	}
	ca, made, err := pki.OpenCA(o.Dir, o.CADir)
	if err != nil {
		return fmt.Errorf("certificates in %s: %w", o.Dir, err)
	}
	if made {
		log.Info("made a new CA", "dir", o.Dir)
	}
	wrote := 0
	for _, s := range Specs(top, o.Hosts...) {
		did, err := ca.Ensure(o.Dir, s)
		if err != nil {
			return fmt.Errorf("certificates in %s: %w", o.Dir, err)
		}
		if did {
			wrote++
		}
	}
	// The operator's bearer token for the admin HTTP listeners (the web
	// page, /api/cluster, /metrics with job names), signed by the CA.
	did, err := ca.EnsureToken(o.Dir, pki.Identity{Kind: pki.Operator, Name: OperatorName})
	if err != nil {
		return fmt.Errorf("certificates in %s: %w", o.Dir, err)
	}
	if did {
		wrote++
	}
	if wrote > 0 {
		log.Info("issued certificates", "dir", o.Dir, "count", wrote)
	}
	return nil
}

// IssueClient writes a client credential NAME.pem and NAME.key, and the
// CA's certificate, into out (dir if ""), signed by the CA of dir (its key
// in caDir, pki.CAKeyDir(dir) if ""); a name an instance, a master or the
// operator has is refused, and so is out being where the CA's key is.
func IssueClient(dir, caDir, out string, top deploy.Topology, name string) error {
	for _, id := range Identities(top) {
		if id.Name == name && id.Kind != pki.Client {
			return fmt.Errorf("%w: %q is the name of %s", cli.ErrUsage, name, id)
		}
	}
	if caDir == "" {
		caDir = pki.CAKeyDir(dir)
	}
	if out == "" {
		out = dir
	}
	if same(out, caDir) {
		return fmt.Errorf("%w: --out %s holds the CA's key; a client's credential goes where the CA's key is not", cli.ErrUsage, out)
	}
	ca, err := pki.LoadCA(dir, caDir)
	if err != nil {
		return fmt.Errorf("the CA in %s: %w (make it first with `wololo certs --dir %s`)", dir, err, dir)
	}
	if _, err := ca.Ensure(out, pki.Spec{ID: pki.Identity{Kind: pki.Client, Name: name}}); err != nil {
		return err
	}
	if same(out, dir) {
		return nil
	}
	return os.WriteFile(pki.CertPath(out, pki.CAName), ca.PEM(), 0o644)
}

// Revoke puts on dir's revocation list every certificate the CA issued to
// name (by its index, and the one in dir/NAME.pem) and every serial
// given; it reports how many were added. Every process that loaded its
// credentials from dir refuses them within pki.ReloadEvery.
func Revoke(dir, caDir, name string, serials []*big.Int) (int, error) {
	ca, err := pki.LoadCA(dir, caDir)
	if err != nil {
		return 0, fmt.Errorf("the CA in %s: %w", dir, err)
	}
	if name != "" {
		issued, err := ca.IssuedTo(name)
		if err != nil {
			return 0, err
		}
		for _, e := range issued {
			serials = append(serials, e.Serial)
		}
		if data, err := os.ReadFile(pki.CertPath(dir, name)); err == nil {
			if leaf, err := pki.ParseCertificate(data); err == nil && leaf.CheckSignatureFrom(ca.Cert) == nil {
				serials = append(serials, leaf.SerialNumber)
			}
		}
		if len(serials) == 0 {
			return 0, fmt.Errorf("%w: the CA in %s issued nothing to %q that it knows of (give --serial)", cli.ErrUsage, dir, name)
		}
	}
	return ca.Revoke(pki.RevocationPath(dir), serials...)
}

// same: a and b name the same directory.
func same(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

const usage = `usage: wololo certs [--dir DIR] [--ca-dir DIR/ca] [--topology F] [--host H,...]
       wololo certs client --name NAME [--dir DIR] [--out DIR2]
       wololo certs revoke (--name NAME | --serial HEX,...) [--dir DIR]

The first form makes the deployment's CA (if DIR has none) and a
certificate for every instance and master of the topology, a first client
credential (client.pem, client.key) and an operator credential
(operator.pem, operator.key, for grpcurl; operator.token, a bearer token for
the admin HTTP listeners: the web page, /api/cluster, /metrics with job
labels). Certificates and the token already in DIR are
kept while they are still right (the CA's, same names, not revoked, a
month from expiry). --host names go on the gateway's certificate only.
The CA's key is kept in --ca-dir (default DIR/ca), never beside the
credentials. Every run makes the directories 0700 and the keys and
token 0600.

The second issues another client credential, NAME.pem and NAME.key, into
--out (default DIR) with a copy of ca.pem: a directory to hand to the client.

The third revokes every certificate issued to NAME (or the serials given)
in DIR/crl.pem, the CA's revocation list; every process started with
--tls-dir DIR refuses them within a second, without a restart.
`

// Run is `wololo certs`.
func Run(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "client" {
		return runClient(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "revoke" {
		return runRevoke(args[1:], stdout, stderr)
	}
	fs := cli.NewFlagSet("wololo certs", usage, stderr)
	dir := fs.String("dir", "data/tls", "directory of the CA's certificate, its revocation list and the credentials")
	caDir := fs.String("ca-dir", "", "directory of the CA's key (default: DIR/ca)")
	topoPath := fs.String("topology", "", "topology JSON file (default: $WOLOLO_TOPOLOGY if set, else the embedded one)")
	hosts := fs.String("host", "", "comma-separated extra host names or IPs for the gateway's certificate (its public name)")
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
	if err := Certify(top, Options{Dir: *dir, CADir: *caDir, Hosts: extra}); err != nil {
		return err
	}
	if *caDir == "" {
		*caDir = pki.CAKeyDir(*dir)
	}
	fmt.Fprintf(stdout, "certificates for %d identities in %s (CA: %s, its key in %s; revocation list: %s)\n", len(Identities(top)), *dir, pki.CertPath(*dir, pki.CAName), *caDir, pki.RevocationPath(*dir))
	return nil
}

func runClient(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo certs client", usage, stderr)
	dir := fs.String("dir", "data/tls", "directory of the CA's certificate and the credentials")
	caDir := fs.String("ca-dir", "", "directory of the CA's key (default: DIR/ca)")
	out := fs.String("out", "", "directory to write the credential and ca.pem into (default: DIR)")
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
	if err := IssueClient(*dir, *caDir, *out, top, *name); err != nil {
		return err
	}
	if *out == "" {
		*out = *dir
	}
	fmt.Fprintf(stdout, "client credential %s and %s\n", pki.CertPath(*out, *name), pki.KeyPath(*out, *name))
	return nil
}

func runRevoke(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo certs revoke", usage, stderr)
	dir := fs.String("dir", "data/tls", "directory of the CA's certificate and its revocation list")
	caDir := fs.String("ca-dir", "", "directory of the CA's key (default: DIR/ca)")
	name := fs.String("name", "", "revoke every certificate issued to this name")
	serialList := fs.String("serial", "", "comma-separated serial numbers (hex, as `openssl x509 -serial` prints them) to revoke")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if (*name == "") == (*serialList == "") {
		return cli.Usagef(fs, "give --name or --serial")
	}
	var serials []*big.Int
	for _, s := range strings.Split(*serialList, ",") {
		if s = strings.TrimSpace(strings.ReplaceAll(s, ":", "")); s == "" {
			continue
		}
		n, ok := new(big.Int).SetString(strings.TrimPrefix(strings.ToLower(s), "0x"), 16)
		if !ok {
			return cli.Usagef(fs, "--serial %q: not a hex serial number", s)
		}
		serials = append(serials, n)
	}
	added, err := Revoke(*dir, *caDir, *name, serials)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked %d more certificate(s) in %s\n", added, pki.RevocationPath(*dir))
	return nil
}
