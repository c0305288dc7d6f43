package pki

// Tokens: bearer credentials the CA vouches for, for HTTP callers that
// cannot present a certificate without pain (a browser, Prometheus, curl
// on the admin listener; see services/ops/admin for why a token and not mutual
// TLS there).
//
// A token is "wololo1.PAYLOAD.SIGNATURE", both parts base64url without
// padding: the payload is JSON naming an identity, an expiry and a random
// id; the signature is the CA key's ECDSA signature over a fixed prefix and
// the payload. Signed rather than random because of who checks it: every
// process holds the CA's certificate already and checks a token with its
// public key, so no process holds anything that would let it present the
// token, and handing out the CA's certificate hands out no secret. The
// prefix keeps a token's signature from being anything else the CA signs
// (certificates are signed over DER, never over this prefix).
//
// The price of checking without a list: a token that leaked stays valid
// until it expires (TokenValidity, as a certificate) or the CA is
// replaced, exactly as a leaked certificate does; its random id is what a
// revocation list would name.

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// tokenVersion starts every token; tokenDomain starts what the CA signs.
const (
	tokenVersion = "wololo1"
	tokenDomain  = "wololo token v1\n"
	// maxToken bounds what is decoded at all: a real token is about 200
	// bytes.
	maxToken = 1024
)

// TokenValidity is how long a token Token makes is valid: as long as a
// certificate Issue makes.
const TokenValidity = CertValidity

// ErrBadToken is every refusal of a token: malformed, not the CA's,
// expired.
var ErrBadToken = errors.New("not a token of this deployment's CA")

type tokenClaims struct {
	Kind    Kind   `json:"kind"`
	Name    string `json:"name"`
	Expires int64  `json:"exp"` // Unix seconds
	ID      string `json:"id"`  // random, to tell tokens apart (and revoke one)
}

var b64 = base64.RawURLEncoding

// Token makes a bearer token for id, valid for validity.
func (ca *CA) Token(id Identity, validity time.Duration) (string, error) {
	if err := id.Validate(); err != nil {
		return "", err
	}
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", fmt.Errorf("token id: %w", err)
	}
	payload, err := json.Marshal(tokenClaims{Kind: id.Kind, Name: id.Name, Expires: time.Now().Add(validity).Unix(), ID: hex.EncodeToString(nonce[:])})
	if err != nil {
		return "", err
	}
	digest := tokenDigest(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, ca.key, digest[:])
	if err != nil {
		return "", fmt.Errorf("sign token for %s: %w", id, err)
	}
	return tokenVersion + "." + b64.EncodeToString(payload) + "." + b64.EncodeToString(sig), nil
}

func tokenDigest(payload []byte) [32]byte {
	return sha256.Sum256(append([]byte(tokenDomain), payload...))
}

// CheckToken returns the identity a token names if the CA these
// credentials trust signed it and it has not expired; else an error
// wrapping ErrBadToken.
func (c *Credentials) CheckToken(token string) (Identity, error) {
	id, _, err := checkToken(c.cas, token, time.Now())
	return id, err
}

func checkToken(cas []*x509.Certificate, token string, now time.Time) (Identity, time.Time, error) {
	if len(token) > maxToken {
		return Identity{}, time.Time{}, fmt.Errorf("%w: longer than %d bytes", ErrBadToken, maxToken)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] != tokenVersion {
		return Identity{}, time.Time{}, fmt.Errorf("%w: not %s.PAYLOAD.SIGNATURE", ErrBadToken, tokenVersion)
	}
	payload, err1 := b64.DecodeString(parts[1])
	sig, err2 := b64.DecodeString(parts[2])
	if err1 != nil || err2 != nil {
		return Identity{}, time.Time{}, fmt.Errorf("%w: not base64url", ErrBadToken)
	}
	digest := tokenDigest(payload)
	signed := false
	for _, ca := range cas {
		if pub, ok := ca.PublicKey.(*ecdsa.PublicKey); ok && ecdsa.VerifyASN1(pub, digest[:], sig) {
			signed = true
			break
		}
	}
	if !signed {
		return Identity{}, time.Time{}, fmt.Errorf("%w: the signature is not the CA's", ErrBadToken)
	}
	// Only now, signed by the CA, is the payload worth parsing.
	var cl tokenClaims
	if err := json.Unmarshal(payload, &cl); err != nil {
		return Identity{}, time.Time{}, fmt.Errorf("%w: payload: %v", ErrBadToken, err)
	}
	id := Identity{Kind: cl.Kind, Name: cl.Name}
	if err := id.Validate(); err != nil {
		return Identity{}, time.Time{}, fmt.Errorf("%w: %v", ErrBadToken, err)
	}
	expires := time.Unix(cl.Expires, 0)
	if !now.Before(expires) {
		return Identity{}, time.Time{}, fmt.Errorf("%w: expired at %s", ErrBadToken, expires.UTC().Format(time.RFC3339))
	}
	return id, expires, nil
}

// TokenPath is where a name's token lives in dir (NAME.token, beside
// NAME.pem).
func TokenPath(dir, name string) string { return filepath.Join(dir, name+".token") }

// LoadToken reads the token of name from dir.
func LoadToken(dir, name string) (string, error) {
	b, err := os.ReadFile(TokenPath(dir, name))
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// EnsureToken writes a token for id into dir (0600) unless a token of the
// CA's for the same identity, valid for at least a month more, is there
// already. It reports whether it wrote one.
func (ca *CA) EnsureToken(dir string, id Identity) (bool, error) {
	if tok, err := LoadToken(dir, id.Name); err == nil {
		got, expires, err := checkToken([]*x509.Certificate{ca.Cert}, tok, time.Now())
		if err == nil && got == id && time.Until(expires) >= 30*24*time.Hour {
			return false, nil
		}
	}
	tok, err := ca.Token(id, TokenValidity)
	if err != nil {
		return false, err
	}
	return true, writeFile(TokenPath(dir, id.Name), []byte(tok+"\n"), 0o600)
}

// parseCerts is every certificate of a PEM file; blocks that do not parse
// are skipped (x509.CertPool.AppendCertsFromPEM skips them too).
func parseCerts(pemData []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for len(pemData) > 0 {
		var block *pem.Block
		block, pemData = pem.Decode(pemData)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if cert, err := x509.ParseCertificate(block.Bytes); err == nil {
			out = append(out, cert)
		}
	}
	return out
}
