package certs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cli"
	"github.com/wololo/wololo/transport/pki"
)

func TestCertifyMakesEveryIdentityOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	top := deploy.Default()
	if err := Certify(dir, top, nil, "wololo.example"); err != nil {
		t.Fatal(err)
	}
	ids := Identities(top)
	if want := len(top.Instances()) + top.Masters + 2; len(ids) != want {
		t.Fatalf("%d identities, want %d", len(ids), want)
	}
	stamps := map[string]int64{}
	for _, id := range ids {
		creds, err := pki.Load(dir, id.Name)
		if err != nil || creds.Self != id {
			t.Fatalf("%s: %v %v", id, creds, err)
		}
		st, _ := os.Stat(pki.KeyPath(dir, id.Name))
		stamps[id.Name] = st.ModTime().UnixNano()
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
	// Again: nothing is rewritten.
	if err := Certify(dir, top, nil); err != nil {
		t.Fatal(err)
	}
	for name, at := range stamps {
		if st, _ := os.Stat(pki.KeyPath(dir, name)); st.ModTime().UnixNano() != at {
			t.Errorf("%s was issued again", name)
		}
	}
	if again, _ := pki.LoadToken(dir, OperatorName); again != token {
		t.Error("operator.token was made again")
	}
	// A topology with more replicas gets the new instances only.
	bigger := top.Uniform(3)
	if err := Certify(dir, bigger, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := pki.Load(dir, "shard-2"); err != nil {
		t.Errorf("the new replica has no certificate: %v", err)
	}
}

func TestIssueClient(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	top := deploy.Default()
	if err := IssueClient(dir, top, "alice"); err == nil {
		t.Fatal("issued a client credential without a CA")
	}
	if err := Certify(dir, top, nil); err != nil {
		t.Fatal(err)
	}
	if err := IssueClient(dir, top, "alice"); err != nil {
		t.Fatal(err)
	}
	if c, err := pki.Load(dir, "alice"); err != nil || c.Self != (pki.Identity{Kind: pki.Client, Name: "alice"}) {
		t.Fatalf("alice: %v %v", c, err)
	}
	for _, taken := range []string{"gateway-0", "master-1", OperatorName} {
		if err := IssueClient(dir, top, taken); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("a client named %q: %v, want a usage error", taken, err)
		}
	}
}
