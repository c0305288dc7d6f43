// Package tlsflags gives every Wololo command the same TLS flags and reads
// the credentials they name: `--tls-dir DIR` (default $WOLOLO_TLS_DIR, else
// the command's own default), `--insecure` (plain TCP, no identities: for
// debugging only, and said loudly in the log) and, for clients,
// `--name NAME` (default $WOLOLO_CLIENT, else "client"), whose certificate
// is DIR/NAME.pem and key DIR/NAME.key.
//
// It parses flags and loads files; the certificates themselves and what an
// identity may do are package pki's and the servers' business.
package tlsflags

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/wire/pki"
)

// Environment variables that give the flags' defaults.
const (
	EnvDir    = "WOLOLO_TLS_DIR"
	EnvClient = "WOLOLO_CLIENT"
)

// DefaultClient is the client credential `wololo local` and `wololo certs`
// make first.
const DefaultClient = "client"

// Flags are the TLS flags of one command.
type Flags struct {
	Dir      string
	Insecure bool
	Name     string // clients only
}

// Register adds --tls-dir and --insecure to fs; dir is the default
// directory when $WOLOLO_TLS_DIR is unset.
func Register(fs *flag.FlagSet, dir string) *Flags {
	f := &Flags{}
	cli.StringEnv(fs, &f.Dir, "tls-dir", EnvDir, dir, "directory of the CA and certificates: ca.pem, NAME.pem, NAME.key")
	fs.BoolVar(&f.Insecure, "insecure", false, "plain TCP without certificates or identity checks: for debugging only")
	return f
}

// RegisterClient is Register plus --name, for clients of the JobService.
func RegisterClient(fs *flag.FlagSet, dir string) *Flags {
	f := Register(fs, dir)
	cli.StringEnv(fs, &f.Name, "name", EnvClient, DefaultClient, "client credential to present: --tls-dir/NAME.pem and NAME.key")
	return f
}

// Load reads the credentials of name, or returns nil with --insecure (and
// logs a warning that says what that means).
func (f *Flags) Load(name string, log hclog.Logger) (*pki.Credentials, error) {
	if f.Insecure {
		if log != nil {
			log.Warn("INSECURE: --insecure: plain TCP, no certificates, no identity checks; anyone who reaches a port can speak as any process or client. For debugging only.")
		}
		return nil, nil
	}
	if f.Dir == "" {
		return nil, fmt.Errorf("no --tls-dir (or $%s) given, and no --insecure", EnvDir)
	}
	creds, err := pki.Load(f.Dir, name)
	if err == nil && log != nil {
		creds.SetLog(log)
	}
	return creds, err
}

// DirOrInsecure is the certificate directory, or "" with --insecure.
func (f *Flags) DirOrInsecure() string {
	if f.Insecure {
		return ""
	}
	return f.Dir
}

// GatewayTLS is the client side for dialing the gateway's public port at
// addr as --name: the server must be the gateway (pki GatewayTLS), not
// any other process of the deployment; nil with --insecure.
// A credential that is not there gets MissingClient's advice.
func (f *Flags) GatewayTLS(addr string) (*tls.Config, error) {
	creds, err := f.Load(f.Name, nil)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, MissingClient(f.Dir, f.Name, exists)
	}
	if err != nil || creds == nil {
		return nil, err
	}
	return creds.GatewayTLS(Host(addr)), nil
}

// KnownDirs are where the ways of running Wololo keep the deployment's
// certificates, relative to the checkout: `wololo local` (its default
// data directory), `make up` (compose) and `wololo certs` by default.
var KnownDirs = []string{"data/local/tls", "deploy/tls", "data/tls"}

// MissingClient is the error for a client credential name that dir lacks,
// with what to do: a CA already made elsewhere must not be made again
// (a new CA's credentials no deployment accepts). If dir has the CA
// certificate, the credential is issued with `wololo certs client` (or by
// whoever holds the CA's key, when dir does not); if it has not, the
// directories of KnownDirs that do are named; only with none is a new
// deployment the advice. exists reports whether a path exists.
func MissingClient(dir, name string, exists func(string) bool) error {
	ca := pki.CertPath(dir, pki.CAName)
	cert, key := pki.CertPath(dir, name), pki.KeyPath(dir, name)
	if exists(ca) {
		missing := cert
		if exists(cert) {
			missing = key
		}
		if exists(pki.KeyPath(pki.CAKeyDir(dir), pki.CAName)) {
			return fmt.Errorf("tls: no client credential %q in %s (%s is missing): make one with `wololo certs client --name %s --dir %s`, or pick another with --name", name, dir, missing, name, dir)
		}
		return fmt.Errorf("tls: no client credential %q in %s (%s is missing): ask whoever holds the deployment's CA for one (`wololo certs client --name %s` where its key is), or pick another with --name", name, dir, missing, name)
	}
	var found []string
	for _, d := range KnownDirs {
		if filepath.Clean(d) != filepath.Clean(dir) && exists(pki.CertPath(d, pki.CAName)) {
			found = append(found, d)
		}
	}
	if len(found) > 0 {
		return fmt.Errorf("tls: no CA certificate in %s (%s is missing); the deployment's certificates are in %s: pass --tls-dir %s (or set $%s)", dir, ca, strings.Join(found, " and "), found[0], EnvDir)
	}
	return fmt.Errorf("tls: no CA certificate in %s (%s is missing): pass the deployment's certificate directory with --tls-dir (or $%s); `wololo local` makes one in data/local/tls when it first starts, `make up` in deploy/tls", dir, ca, EnvDir)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Host is the host part of addr ("localhost" for an empty one), the name a
// server's certificate is verified under.
func Host(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		return "localhost"
	}
	return host
}
