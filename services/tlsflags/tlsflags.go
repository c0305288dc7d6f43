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
	"flag"
	"fmt"
	"net"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/services/cli"
	"github.com/wololo/wololo/transport/pki"
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
func (f *Flags) GatewayTLS(addr string) (*tls.Config, error) {
	creds, err := f.Load(f.Name, nil)
	if err != nil || creds == nil {
		return nil, err
	}
	return creds.GatewayTLS(Host(addr)), nil
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
