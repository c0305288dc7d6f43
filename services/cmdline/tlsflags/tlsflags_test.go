package tlsflags

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMissingClient(t *testing.T) {
	for _, c := range []struct {
		name    string
		files   []string // what exists
		dir     string
		want    []string
		notWant string
	}{
		{"the CA elsewhere", []string{"data/local/tls/ca.pem", "deploy/tls/ca.pem"}, "tls", []string{"data/local/tls and deploy/tls", "--tls-dir data/local/tls"}, "wololo certs --dir"},
		{"no CA anywhere", nil, "data/local/tls", []string{"no CA certificate in data/local/tls", "`wololo local` makes one in data/local/tls when it first starts"}, "wololo certs --dir"},
		{"the CA here, a credential missing", []string{"deploy/tls/ca.pem", "deploy/tls/ca/ca.key"}, "deploy/tls", []string{"`wololo certs client --name alice --dir deploy/tls`"}, "new CA"},
		{"the CA here without its key", []string{"hand/ca.pem"}, "hand", []string{"ask whoever holds the deployment's CA", "`wololo certs client --name alice`"}, "--dir hand"},
		{"a key missing", []string{"hand/ca.pem", "hand/alice.pem"}, "hand", []string{"hand/alice.key is missing"}, ""},
	} {
		have := map[string]bool{}
		for _, f := range c.files {
			have[f] = true
		}
		err := MissingClient(c.dir, "alice", func(p string) bool { return have[filepath.Clean(p)] })
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
		if c.notWant != "" && strings.Contains(err.Error(), c.notWant) {
			t.Errorf("%s: %q says %q", c.name, err, c.notWant)
		}
	}
}

// TestGatewayTLSMissingCredential: a --tls-dir with the CA but not the
// client's credential points to `wololo certs client`, not to a new CA.
func TestGatewayTLSMissingCredential(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	f := RegisterClient(fs, dir)
	if err := fs.Parse([]string{"--name", "bob"}); err != nil {
		t.Fatal(err)
	}
	_, err := f.GatewayTLS("127.0.0.1:7100")
	if err == nil || !strings.Contains(err.Error(), "no client credential \"bob\"") || strings.Contains(err.Error(), "`wololo certs --dir") {
		t.Fatalf("GatewayTLS = %v", err)
	}
}
