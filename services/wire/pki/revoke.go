package pki

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// The revocation list is an X.509 CRL signed by the CA, in PEM, beside
// ca.pem (RevocationPath). Why a CRL and not a plain list of serials: a
// process verifies it with the CA certificate it already trusts, so a list
// that is half-written, damaged or not the CA's is refused (the last good
// one stays) rather than read as "no one is revoked"; its number only
// grows, so an older list put back does not take revocations back; and it
// is a standard format (`openssl crl -in crl.pem -text`).
//
// A process reads the list when it loads its credentials (a broken one
// fails the start) and then, at most every ReloadEvery, looks whether the
// file changed and reads it again: a revocation takes effect without any
// restart, for new connections at the handshake and for open ones at
// their next call (Credentials.CheckPeer). A list read anew that revokes
// more than the last tells those who asked (OnChange): a server then ends
// the calls it has open for the newly revoked certificates, which may
// make no next call for a long time (a Watch stream). Reload reads it at
// once, for a server's periodic look and for tests. The CA rewrites the file in
// place, not through a rename, so that a container that has it
// bind-mounted (compose's secrets) sees the new list too; a reader that
// catches it half-written fails its signature check and reads it again a
// moment later. A list that disappears keeps the last one read.

// ReloadEvery is how often a process looks whether its revocation list
// changed.
const ReloadEvery = time.Second

// Revocations is the CA's revocation list as a process checks it.
type Revocations struct {
	path string
	ca   *x509.Certificate

	mu      sync.Mutex
	log     hclog.Logger
	serials map[string]bool // decimal serials
	number  *big.Int
	stamp   stamp // of the file last read
	checked time.Time
	every   time.Duration // ReloadEvery; tests shorten it

	// subs are told of every list read anew that revokes a serial the
	// last did not (OnChange); next numbers them.
	subs map[int]func()
	next int
}

// stamp tells a file's versions apart.
type stamp struct {
	mod  time.Time
	size int64
}

// OpenRevocations reads the list at path, signed by ca; a missing file is
// an empty list (read once it appears), a list that is not ca's or not a
// CRL an error.
func OpenRevocations(path string, ca *x509.Certificate) (*Revocations, error) {
	r := &Revocations{path: path, ca: ca, log: hclog.NewNullLogger(), serials: map[string]bool{}, number: new(big.Int), checked: time.Now(), every: ReloadEvery}
	if err := r.load(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return r, nil
}

// SetLog is where r says it reloaded the list, or could not.
func (r *Revocations) SetLog(log hclog.Logger) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = log
}

// Revoked says whether cert is on the list, reading the list again first
// if it changed and was last looked at ReloadEvery ago or more.
func (r *Revocations) Revoked(cert *x509.Certificate) bool {
	r.mu.Lock()
	var tell []func()
	if now := time.Now(); now.Sub(r.checked) >= r.every {
		r.checked = now
		_, tell = r.refresh()
	}
	revoked := r.serials[cert.SerialNumber.String()]
	r.mu.Unlock()
	for _, f := range tell {
		f()
	}
	return revoked
}

// Reload reads the list again now if the file changed, and reports
// whether it now revokes a serial it did not before; those who asked
// (OnChange) are told before it returns.
func (r *Revocations) Reload() bool {
	r.mu.Lock()
	r.checked = time.Now()
	grew, tell := r.refresh()
	r.mu.Unlock()
	for _, f := range tell {
		f()
	}
	return grew
}

// OnChange has f called, on the goroutine that read it, after every list
// read anew that revokes a serial the last did not; stop ends that. f
// must not wait for anything that reads the list.
func (r *Revocations) OnChange(f func()) (stop func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.subs == nil {
		r.subs = map[int]func(){}
	}
	id := r.next
	r.next++
	r.subs[id] = f
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.subs, id)
	}
}

// Len is how many certificates the list revokes.
func (r *Revocations) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.serials)
}

// refresh reads the list again if the file changed, and reports whether
// it revokes a serial the last list did not, and then whom to tell
// (OnChange's). Call it with mu held, and them without.
func (r *Revocations) refresh() (grew bool, tell []func()) {
	st, err := os.Stat(r.path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.log.Warn("revocation list unreadable; the last one read stays", "path", r.path, "error", err)
		}
		return false, nil
	}
	if (stamp{st.ModTime(), st.Size()}) == r.stamp {
		return false, nil
	}
	before := r.serials
	if err := r.load(); err != nil {
		r.log.Warn("revocation list not reloaded; the last one read stays", "path", r.path, "error", err)
		return false, nil
	}
	r.log.Info("revocation list reloaded", "path", r.path, "revoked", len(r.serials), "number", r.number.String())
	for serial := range r.serials {
		if !before[serial] {
			for _, f := range r.subs {
				tell = append(tell, f)
			}
			return true, tell
		}
	}
	return false, nil
}

// load reads the file: its stamp first, so that a change while reading is
// read again next time.
func (r *Revocations) load() error {
	st, err := os.Stat(r.path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(r.path)
	if err != nil {
		return err
	}
	list, err := parseList(data, r.ca)
	if err != nil {
		return fmt.Errorf("revocation list %s: %w", r.path, err)
	}
	number := list.Number
	if number == nil {
		number = new(big.Int)
	}
	if number.Cmp(r.number) < 0 {
		return fmt.Errorf("revocation list %s: number %s is older than the %s already read", r.path, number, r.number)
	}
	serials := map[string]bool{}
	for _, e := range list.RevokedCertificateEntries {
		serials[e.SerialNumber.String()] = true
	}
	r.serials, r.number, r.stamp = serials, number, stamp{st.ModTime(), st.Size()}
	return nil
}

// parseList reads a PEM CRL and checks that ca signed it.
func parseList(data []byte, ca *x509.Certificate) (*x509.RevocationList, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "X509 CRL" {
		return nil, errors.New("no PEM X509 CRL")
	}
	list, err := x509.ParseRevocationList(b.Bytes)
	if err != nil {
		return nil, err
	}
	if err := list.CheckSignatureFrom(ca); err != nil {
		return nil, fmt.Errorf("not signed by the CA: %w", err)
	}
	return list, nil
}

// Revoke writes the list at path again: what it listed, plus serials,
// signed by the CA with a number one above. It reports how many of serials
// were not listed yet. With no serials it writes the list as it is (an
// empty one where there was none).
func (ca *CA) Revoke(path string, serials ...*big.Int) (int, error) {
	var entries []x509.RevocationListEntry
	number := new(big.Int)
	listed := map[string]bool{}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		old, err := parseList(data, ca.Cert)
		if err != nil {
			return 0, fmt.Errorf("revocation list %s: %w", path, err)
		}
		entries = old.RevokedCertificateEntries
		if old.Number != nil {
			number.Set(old.Number)
		}
		for _, e := range entries {
			listed[e.SerialNumber.String()] = true
		}
	case !errors.Is(err, fs.ErrNotExist):
		return 0, err
	}
	now := time.Now()
	added := 0
	for _, s := range serials {
		if !listed[s.String()] {
			listed[s.String()] = true
			entries = append(entries, x509.RevocationListEntry{SerialNumber: s, RevocationTime: now})
			added++
		}
	}
	tmpl := &x509.RevocationList{
		RevokedCertificateEntries: entries, Number: number.Add(number, big.NewInt(1)),
		ThisUpdate: now, NextUpdate: ca.Cert.NotAfter,
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, ca.Cert, ca.key)
	if err != nil {
		return 0, fmt.Errorf("revocation list: %w", err)
	}
	out := pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
	if data == nil {
		return added, writeFile(path, out, 0o644)
	}
	// In place, not by a rename: a bind-mounted file keeps showing the
	// inode it was mounted with.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(out); err != nil {
		f.Close()
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	return added, f.Close()
}

// revokedSerials are the serials on the list of the CA's directory (none
// for a CA in memory).
func (ca *CA) revokedSerials() (map[string]bool, error) {
	out := map[string]bool{}
	if ca.dir == "" {
		return out, nil
	}
	data, err := os.ReadFile(RevocationPath(ca.dir))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	list, err := parseList(data, ca.Cert)
	if err != nil {
		return nil, err
	}
	for _, e := range list.RevokedCertificateEntries {
		out[e.SerialNumber.String()] = true
	}
	return out, nil
}
