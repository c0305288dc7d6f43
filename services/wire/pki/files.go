package pki

import (
	"bufio"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// A certificate directory DIR holds what the deployment's processes are
// handed: ca.pem (the CA's certificate), crl.pem (its revocation list) and
// NAME.pem, NAME.key for each identity. The CA's key is not among them: it
// lives in its own directory (DIR/ca by default, or any other: `wololo
// certs --ca-dir`), with the index of every certificate the CA issued, so
// that a directory given to a client or mounted into a container never
// holds what can issue certificates. Every directory is 0700, every key
// 0600, and the functions that write here make them so again each time
// (Tighten).

// CertPath and KeyPath are where a name's certificate and key live in dir.
func CertPath(dir, name string) string { return filepath.Join(dir, name+".pem") }

// KeyPath: see CertPath.
func KeyPath(dir, name string) string { return filepath.Join(dir, name+".key") }

// RevocationName is the file stem of the CA's revocation list, beside
// ca.pem.
const RevocationName = "crl"

// RevocationPath is where the revocation list of dir's CA lives.
func RevocationPath(dir string) string { return CertPath(dir, RevocationName) }

// CAKeyDir is where the CA's key lives by default: a subdirectory of dir.
func CAKeyDir(dir string) string { return filepath.Join(dir, CAName) }

// indexName is the CA's record of what it issued, in its key directory:
// one line per certificate, "SERIAL KIND NAME NOT-AFTER".
const indexName = "issued.txt"

// ContainerSecretsDir is where Docker (compose and swarm) mounts a
// container's secrets. A key there may be readable by group or others:
// compose bind-mounts a secret with its host file's mode, so a container
// running as an unprivileged user can only read a key made readable on the
// host (in a 0700 directory there); inside the container no other user
// exists to read it. Anywhere else a key must be 0600.
const ContainerSecretsDir = "/run/secrets"

// ErrKeyOpen is what Load says of a key other users may read.
var ErrKeyOpen = errors.New("key open to other users")

// Load reads the credentials of name from dir (ca.pem, NAME.pem, NAME.key)
// and checks peers against dir's revocation list (crl.pem) if it has one.
// A key other users may read is refused (see ContainerSecretsDir).
func Load(dir, name string) (*Credentials, error) {
	caPEM, err := os.ReadFile(CertPath(dir, CAName))
	if err != nil {
		return nil, fmt.Errorf("tls: %w (make them with `wololo certs --dir %s`)", err, dir)
	}
	certPEM, err := os.ReadFile(CertPath(dir, name))
	if err != nil {
		return nil, fmt.Errorf("tls: %w (make them with `wololo certs --dir %s`)", err, dir)
	}
	if err := checkKeyMode(KeyPath(dir, name)); err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	keyPEM, err := os.ReadFile(KeyPath(dir, name))
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	c, err := NewCredentials(caPEM, certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tls: %s in %s: %w", name, dir, err)
	}
	caCert, err := ParseCertificate(caPEM)
	if err != nil {
		return nil, fmt.Errorf("tls: %s: %w", CertPath(dir, CAName), err)
	}
	r, err := OpenRevocations(RevocationPath(dir), caCert)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	c.CheckRevocations(r)
	return c, nil
}

// checkKeyMode refuses a key whose mode lets group or others at it,
// outside ContainerSecretsDir.
func checkKeyMode(path string) error {
	if runtime.GOOS == "windows" {
		return nil // no Unix modes to speak of
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if keyModeOK(st.Mode().Perm(), abs) {
		return nil
	}
	return fmt.Errorf("%s: %w (mode %04o): run `chmod 600 %s`; a key must be 0600 outside a container's %s", path, ErrKeyOpen, st.Mode().Perm(), path, ContainerSecretsDir)
}

// keyModeOK: a key with mode perm at abs is private enough to use.
func keyModeOK(perm fs.FileMode, abs string) bool {
	return perm&0o077 == 0 || filepath.Dir(abs) == ContainerSecretsDir
}

// ParseCertificate reads the first PEM certificate of certPEM.
func ParseCertificate(certPEM []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(certPEM)
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(b.Bytes)
}

// LoadCA reads the CA: its certificate from dir (ca.pem) and its key from
// keyDir (CAKeyDir(dir) if ""). A key still in dir, where earlier versions
// kept it, is moved to keyDir first.
func LoadCA(dir, keyDir string) (*CA, error) {
	if keyDir == "" {
		keyDir = CAKeyDir(dir)
	}
	if err := apart(dir, keyDir); err != nil {
		return nil, err
	}
	if err := moveLegacyKey(dir, keyDir); err != nil {
		return nil, err
	}
	certPEM, err := os.ReadFile(CertPath(dir, CAName))
	if err != nil {
		return nil, err
	}
	if err := Tighten(keyDir); err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(KeyPath(keyDir, CAName))
	if err != nil {
		return nil, err
	}
	cert, err := ParseCertificate(certPEM)
	if err != nil {
		return nil, fmt.Errorf("ca certificate in %s: %w", dir, err)
	}
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, fmt.Errorf("ca key in %s: not PEM", keyDir)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("ca key in %s: %w", keyDir, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("%s is not a CA certificate", CertPath(dir, CAName))
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("the CA key in %s is not the key of %s", keyDir, CertPath(dir, CAName))
	}
	return &CA{Cert: cert, key: key, pem: certPEM, dir: dir, keyDir: keyDir}, nil
}

// apart refuses a CA key directory that is the credentials' directory.
func apart(dir, keyDir string) error {
	a, err1 := filepath.Abs(dir)
	b, err2 := filepath.Abs(keyDir)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if a == b {
		return fmt.Errorf("the CA's key directory %s is the certificate directory: the key that issues certificates must not be among the credentials handed out", keyDir)
	}
	return nil
}

// moveLegacyKey moves dir/ca.key into keyDir.
func moveLegacyKey(dir, keyDir string) error {
	old, dst := KeyPath(dir, CAName), KeyPath(keyDir, CAName)
	if _, err := os.Stat(old); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("two CA keys: %s and %s; keep the one that signed %s and remove the other", old, dst, CertPath(dir, CAName))
	}
	if err := mkdirPrivate(keyDir); err != nil {
		return err
	}
	if err := os.Rename(old, dst); err != nil {
		return fmt.Errorf("move the CA key out of %s: %w", dir, err)
	}
	return nil
}

// OpenCA loads the CA of dir (its key in keyDir, CAKeyDir(dir) if ""), or
// makes and writes one if there is none, and writes its empty revocation
// list if dir has none. It makes dir and keyDir 0700 and every key in them
// 0600, and reports whether it made the CA.
func OpenCA(dir, keyDir string) (*CA, bool, error) {
	if keyDir == "" {
		keyDir = CAKeyDir(dir)
	}
	if err := apart(dir, keyDir); err != nil {
		return nil, false, err
	}
	for _, d := range []string{dir, keyDir} {
		if err := mkdirPrivate(d); err != nil {
			return nil, false, fmt.Errorf("certificate directory: %w", err)
		}
	}
	ca, err := LoadCA(dir, keyDir)
	made := false
	switch {
	case err == nil:
	case !errors.Is(err, fs.ErrNotExist):
		return nil, false, err
	default:
		if _, statErr := os.Stat(CertPath(dir, CAName)); statErr == nil {
			return nil, false, fmt.Errorf("%s is there but not its key (%s): %w", CertPath(dir, CAName), KeyPath(keyDir, CAName), err)
		}
		if ca, err = NewCA("Wololo CA"); err != nil {
			return nil, false, err
		}
		ca.dir, ca.keyDir = dir, keyDir
		keyDER, err := x509.MarshalECPrivateKey(ca.key)
		if err != nil {
			return nil, false, err
		}
		if err := writeFile(KeyPath(keyDir, CAName), pemBlock("EC PRIVATE KEY", keyDER), 0o600); err != nil {
			return nil, false, err
		}
		if err := writeFile(CertPath(dir, CAName), ca.pem, 0o644); err != nil {
			return nil, false, err
		}
		made = true
	}
	if _, err := os.Stat(RevocationPath(dir)); errors.Is(err, fs.ErrNotExist) {
		if _, err := ca.Revoke(RevocationPath(dir)); err != nil {
			return nil, false, err
		}
	}
	return ca, made, Tighten(dir)
}

// mkdirPrivate makes dir 0700, also when it was there already.
func mkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// Tighten makes dir 0700 and every key (*.key) in it 0600, whatever they
// were: a directory or key made by hand, or loosened since, is private
// again after any run of `wololo certs`.
func Tighten(dir string) error {
	if err := mkdirPrivate(dir); err != nil {
		return err
	}
	keys, err := filepath.Glob(filepath.Join(dir, "*.key"))
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := os.Chmod(k, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// Ensure writes a certificate as s says into dir unless one is there
// already that is the CA's, for the same identity, with the same names,
// not revoked and valid for at least a month more. It makes the key of an
// existing one 0600 and reports whether it wrote one.
func (ca *CA) Ensure(dir string, s Spec) (bool, error) {
	if err := mkdirPrivate(dir); err != nil {
		return false, err
	}
	if err := os.Chmod(KeyPath(dir, s.ID.Name), 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if c, err := Load(dir, s.ID.Name); err == nil && c.Self == s.ID && ca.keeps(c.Leaf(), s) {
		return false, nil
	}
	is, err := ca.IssueSpec(s)
	if err != nil {
		return false, err
	}
	if err := writeFile(KeyPath(dir, s.ID.Name), is.KeyPEM, 0o600); err != nil {
		return false, err
	}
	if err := writeFile(CertPath(dir, s.ID.Name), is.CertPEM, 0o644); err != nil {
		return false, err
	}
	return true, ca.record(s.ID, is.Cert)
}

// keeps: leaf was issued by ca as s says, is valid for a month more and
// is not on ca's revocation list.
func (ca *CA) keeps(leaf *x509.Certificate, s Spec) bool {
	if time.Until(leaf.NotAfter) < 30*24*time.Hour || leaf.CheckSignatureFrom(ca.Cert) != nil || !s.matches(leaf) {
		return false
	}
	if ca.dir == "" {
		return true
	}
	revoked, err := ca.revokedSerials()
	return err == nil && !revoked[leaf.SerialNumber.String()]
}

// IndexEntry is one certificate the CA issued.
type IndexEntry struct {
	Serial   *big.Int
	ID       Identity
	NotAfter time.Time
}

// record appends what was issued to the CA's index (none for a CA in
// memory).
func (ca *CA) record(id Identity, cert *x509.Certificate) error {
	if ca.keyDir == "" {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(ca.keyDir, indexName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("the CA's index: %w", err)
	}
	_, err = fmt.Fprintf(f, "%s %s %s %s\n", cert.SerialNumber.Text(16), id.Kind, id.Name, cert.NotAfter.UTC().Format(time.RFC3339))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("the CA's index: %w", err)
	}
	return nil
}

// IssuedTo lists every certificate the CA's index says it issued to name.
func (ca *CA) IssuedTo(name string) ([]IndexEntry, error) {
	if ca.keyDir == "" {
		return nil, nil
	}
	f, err := os.Open(filepath.Join(ca.keyDir, indexName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []IndexEntry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 {
			return nil, fmt.Errorf("the CA's index, line %d: want SERIAL KIND NAME NOT-AFTER", n)
		}
		serial, ok := new(big.Int).SetString(fields[0], 16)
		notAfter, err := time.Parse(time.RFC3339, fields[3])
		if !ok || err != nil {
			return nil, fmt.Errorf("the CA's index, line %d: bad serial or date", n)
		}
		if fields[2] == name {
			out = append(out, IndexEntry{Serial: serial, ID: Identity{Kind: Kind(fields[1]), Name: fields[2]}, NotAfter: notAfter})
		}
	}
	return out, sc.Err()
}

// writeFile writes through a temporary file and a rename, so that a reader
// never sees half a key.
func writeFile(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
