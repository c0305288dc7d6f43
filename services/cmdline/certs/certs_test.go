package certs

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/wire/pki"
)

func keyStamps(t *testing.T, dir string, ids []pki.Identity) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, id := range ids {
		st, err := os.Stat(pki.KeyPath(dir, id.Name))
		if err != nil {
			t.Fatal(err)
		}
		out[id.Name] = st.ModTime().UnixNano()
	}
	return out
}

func TestCertifyMakesEveryIdentityOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	top := deploy.Default()
	o := Options{Dir: dir, Hosts: []string{"wololo.example"}}
	if err := Certify(top, o); err != nil {
		t.Fatal(err)
	}
	ids := Identities(top)
	if want := len(top.Instances()) + top.Masters + 2; len(ids) != want {
		t.Fatalf("%d identities, want %d", len(ids), want)
	}
	for _, id := range ids {
		creds, err := pki.Load(dir, id.Name)
		if err != nil || creds.Self != id {
			t.Fatalf("%s: %v %v", id, creds, err)
		}
	}
	// The operator's token for the admin listeners, 0600, checked by any
	// process of the CA.
	token, err := pki.LoadToken(dir, OperatorName)
	if err != nil {
		t.Fatal(err)
	}
	shard, _ := pki.Load(dir, "shard-0")
	if id, err := shard.CheckToken(token); err != nil || id != (pki.Identity{Kind: pki.Operator, Name: OperatorName}) {
		t.Fatalf("operator.token: %v %v", id, err)
	}
	if st, _ := os.Stat(pki.TokenPath(dir, OperatorName)); st.Mode().Perm() != 0o600 {
		t.Errorf("operator.token has mode %v, want 0600", st.Mode().Perm())
	}
	stamps := keyStamps(t, dir, ids)
	// Again: nothing is rewritten.
	if err := Certify(top, o); err != nil {
		t.Fatal(err)
	}
	for name, at := range keyStamps(t, dir, ids) {
		if at != stamps[name] {
			t.Errorf("%s was issued again", name)
		}
	}
	if again, _ := pki.LoadToken(dir, OperatorName); again != token {
		t.Error("operator.token was made again")
	}
	// A topology with more replicas gets the new instances only.
	bigger := top.Uniform(3)
	if err := Certify(bigger, o); err != nil {
		t.Fatal(err)
	}
	if _, err := pki.Load(dir, "shard-2"); err != nil {
		t.Errorf("the new replica has no certificate: %v", err)
	}
}

// TestHostsGoOnTheGatewayOnly: --host names are on the gateway's
// certificate and no other, and a run with other hosts reissues the
// gateway's alone.
func TestHostsGoOnTheGatewayOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	top := deploy.Default()
	if err := Certify(top, Options{Dir: dir, Hosts: []string{"wololo.example"}}); err != nil {
		t.Fatal(err)
	}
	ids := Identities(top)
	stamps := keyStamps(t, dir, ids)
	for _, hosts := range [][]string{{"wololo.example", "gw.example"}, {"gw.example"}, nil} {
		if err := Certify(top, Options{Dir: dir, Hosts: hosts}); err != nil {
			t.Fatal(err)
		}
		now := keyStamps(t, dir, ids)
		for _, id := range ids {
			c, err := pki.Load(dir, id.Name)
			if err != nil {
				t.Fatal(err)
			}
			gateway := id.Name == "gateway-0"
			names := strings.Join(c.Leaf().DNSNames, ",")
			switch {
			case gateway && names != strings.Join(append([]string{"gateway-0", "localhost"}, hosts...), ","):
				t.Errorf("hosts %v: the gateway's names are %s", hosts, names)
			case gateway && !pki.IsGateway(c.Leaf()):
				t.Errorf("the gateway's certificate lacks the role")
			case !gateway && (pki.IsGateway(c.Leaf()) || len(c.Leaf().IPAddresses) > 0 || (names != id.Name && names != "")):
				t.Errorf("%s carries %s %v %v", id, names, c.Leaf().IPAddresses, c.Leaf().URIs)
			case gateway && now[id.Name] == stamps[id.Name]:
				t.Errorf("hosts %v: the gateway's certificate was kept", hosts)
			case !gateway && now[id.Name] != stamps[id.Name]:
				t.Errorf("hosts %v: %s was issued again", hosts, id)
			}
		}
		stamps = now
	}
}

// TestCertifyFixesModes: a directory and keys loosened by hand are made
// private again on the next run, without reissuing anything.
func TestCertifyFixesModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	top := deploy.Default()
	if err := Certify(top, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	ids := Identities(top)
	stamps := keyStamps(t, dir, ids)
	caKey := pki.KeyPath(pki.CAKeyDir(dir), pki.CAName)
	loose := map[string]os.FileMode{dir: 0o755, pki.CAKeyDir(dir): 0o755, caKey: 0o644, pki.KeyPath(dir, "master-1"): 0o644, pki.KeyPath(dir, "client"): 0o640}
	for path, m := range loose {
		if err := os.Chmod(path, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pki.Load(dir, "master-1"); !errors.Is(err, pki.ErrKeyOpen) {
		t.Fatalf("a 0644 key loaded: %v", err)
	}
	if err := Certify(top, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	for path := range loose {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if st.IsDir() {
			want = 0o700
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: %v after the run, want %v", path, st.Mode().Perm(), want)
		}
	}
	for name, at := range keyStamps(t, dir, ids) {
		if at != stamps[name] {
			t.Errorf("%s was issued again", name)
		}
	}
}

func TestIssueClient(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	top := deploy.Default()
	if err := IssueClient(dir, "", "", top, "alice"); err == nil {
		t.Fatal("issued a client credential without a CA")
	}
	if err := Certify(top, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	if err := IssueClient(dir, "", "", top, "alice"); err != nil {
		t.Fatal(err)
	}
	if c, err := pki.Load(dir, "alice"); err != nil || c.Self != (pki.Identity{Kind: pki.Client, Name: "alice"}) {
		t.Fatalf("alice: %v %v", c, err)
	}
	for _, taken := range []string{"gateway-0", "master-1", OperatorName} {
		if err := IssueClient(dir, "", "", top, taken); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("a client named %q: %v, want a usage error", taken, err)
		}
	}
	// A directory to hand out: the credential and ca.pem, no CA key.
	out := filepath.Join(t.TempDir(), "bob")
	if err := IssueClient(dir, "", out, top, "bob"); err != nil {
		t.Fatal(err)
	}
	if c, err := pki.Load(out, "bob"); err != nil || c.Self.Name != "bob" {
		t.Fatalf("bob from %s: %v", out, err)
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if e.Name() != "bob.pem" && e.Name() != "bob.key" && e.Name() != "ca.pem" {
			t.Errorf("%s holds %s", out, e.Name())
		}
	}
	for _, d := range []string{dir, out} {
		if _, err := os.Stat(pki.KeyPath(d, pki.CAName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the CA's key is in the client directory %s", d)
		}
	}
	if err := IssueClient(dir, "", pki.CAKeyDir(dir), top, "carol"); !errors.Is(err, cli.ErrUsage) {
		t.Errorf("a client credential into the CA's key directory: %v", err)
	}
}

// TestRevoke: `wololo certs revoke --name` lists every certificate issued
// to the name, a process's credentials then refuse it, and issuing the
// name again makes a new one that is not revoked.
func TestRevoke(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	top := deploy.Default()
	if err := Certify(top, Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "alice")
	if err := IssueClient(dir, "", out, top, "alice"); err != nil {
		t.Fatal(err)
	}
	alice, err := pki.Load(out, "alice")
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var stdout, stderr bytes.Buffer
		err := Run(context.Background(), append([]string{"revoke", "--dir", dir}, args...), &stdout, &stderr)
		return stdout.String(), err
	}
	list := func() *pki.Revocations {
		ca, err := pki.ParseCertificate(mustRead(t, pki.CertPath(dir, pki.CAName)))
		if err != nil {
			t.Fatal(err)
		}
		r, err := pki.OpenRevocations(pki.RevocationPath(dir), ca)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if list().Revoked(alice.Leaf()) {
		t.Fatal("revoked before the revocation")
	}
	cases := []struct {
		args []string
		out  string
		err  error
	}{
		{[]string{"--name", "alice"}, "revoked 1 more", nil},
		{[]string{"--name", "alice"}, "revoked 0 more", nil},
		{[]string{"--name", "nobody"}, "", cli.ErrUsage},
		{nil, "", cli.ErrUsage},
		{[]string{"--name", "alice", "--serial", "ab"}, "", cli.ErrUsage},
		{[]string{"--serial", "zz"}, "", cli.ErrUsage},
		{[]string{"--serial", "0a:0b, 0c"}, "revoked 2 more", nil},
	}
	for _, tc := range cases {
		got, err := run(tc.args...)
		if (tc.err == nil) != (err == nil) || (tc.err != nil && !errors.Is(err, tc.err)) || !strings.Contains(got, tc.out) {
			t.Errorf("revoke %v: %q, %v; want %q, %v", tc.args, got, err, tc.out, tc.err)
		}
	}
	r := list()
	if !r.Revoked(alice.Leaf()) || r.Len() != 3 {
		t.Fatalf("alice revoked %v, %d on the list", r.Revoked(alice.Leaf()), r.Len())
	}
	if err := IssueClient(dir, "", out, top, "alice"); err != nil {
		t.Fatal(err)
	}
	again, err := pki.Load(out, "alice")
	if err != nil || again.Leaf().SerialNumber.Cmp(alice.Leaf().SerialNumber) == 0 || list().Revoked(again.Leaf()) {
		t.Fatalf("alice issued again: %v, same serial or revoked", err)
	}
	if n, err := Revoke(dir, "", "", []*big.Int{again.Leaf().SerialNumber}); err != nil || n != 1 {
		t.Fatalf("Revoke by serial = %d, %v", n, err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
