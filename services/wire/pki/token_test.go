package pki

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTokens: a token the CA signed names its identity to every holder of
// credentials of that CA; anything else is refused with ErrBadToken.
func TestTokens(t *testing.T) {
	ca, _ := NewCA("mine")
	other, _ := NewCA("theirs")
	shard, _ := ca.Credentials(Identity{Instance, "shard-0"}) // any process of the CA checks
	operator := Identity{Operator, "operator"}
	good, err := ca.Token(operator, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := shard.CheckToken(good); err != nil || id != operator {
		t.Fatalf("the CA's own token: %v, %v", id, err)
	}
	theirs, _ := other.Token(operator, time.Hour)
	expired, _ := ca.Token(operator, -time.Second)
	parts := strings.Split(good, ".")
	forged := parts[0] + "." + b64.EncodeToString([]byte(`{"kind":"operator","name":"operator","exp":9999999999,"id":"x"}`)) + "." + parts[2]
	for name, tok := range map[string]string{
		"empty":                   "",
		"another CA's":            theirs,
		"expired":                 expired,
		"payload changed":         forged,
		"signature cut":           parts[0] + "." + parts[1] + "." + parts[2][:10],
		"another version":         "wololo2." + parts[1] + "." + parts[2],
		"two parts":               parts[1] + "." + parts[2],
		"not base64":              parts[0] + ".!!!." + parts[2],
		"far too long":            good + strings.Repeat("A", maxToken),
		"the CA's certificate":    string(ca.PEM()),
		"a random string":         "0123456789abcdef0123456789abcdef",
		"good with trailing junk": good + "x",
	} {
		if id, err := shard.CheckToken(tok); !errors.Is(err, ErrBadToken) {
			t.Errorf("%s token: %v, %v; want ErrBadToken", name, id, err)
		}
	}
}

// TestEnsureToken: written 0600 beside the certificates, kept while valid,
// replaced when it is not the CA's.
func TestEnsureToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	ca, _, err := OpenCA(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	op := Identity{Operator, "operator"}
	if wrote, err := ca.EnsureToken(dir, op); err != nil || !wrote {
		t.Fatalf("first EnsureToken: %v %v", wrote, err)
	}
	st, err := os.Stat(TokenPath(dir, "operator"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v, want mode 0600", st, err)
	}
	first, _ := LoadToken(dir, "operator")
	if wrote, err := ca.EnsureToken(dir, op); err != nil || wrote {
		t.Fatalf("second EnsureToken rewrote a valid token: %v %v", wrote, err)
	}
	other, _ := NewCA("theirs")
	theirs, _ := other.Token(op, time.Hour)
	if err := os.WriteFile(TokenPath(dir, "operator"), []byte(theirs), 0o600); err != nil {
		t.Fatal(err)
	}
	if wrote, err := ca.EnsureToken(dir, op); err != nil || !wrote {
		t.Fatalf("another CA's token was kept: %v %v", wrote, err)
	}
	if now, _ := LoadToken(dir, "operator"); now == first || now == theirs {
		t.Fatal("the token was not replaced")
	}
}
