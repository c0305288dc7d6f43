package deploy

// The peers file is the smallest possible address registry: a JSON object
// mapping every instance name to the "host:port" it listens on now. A
// process that is restarted or replaced may listen on a new port; whoever
// starts it rewrites the file (FormatPeers, then an atomic replace with
// services/base/atomicfile), and its peers, which resolve through PeersResolver,
// find it at the next dial. This package formats and reads the file; it
// writes none.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FormatPeers returns the peers file of addrs (instance name →
// "host:port"): a JSON object with its keys sorted. It refuses a name that
// is no instance or an address that is no host:port. The writer must
// replace the file atomically (a temporary file renamed over it), so that a
// reader sees either the old file or the new one, never a torn one.
func FormatPeers(addrs map[string]string) ([]byte, error) {
	if err := checkPeers(addrs); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(addrs, "", "  ") // map keys come out sorted
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReadPeers reads a peers file in the form of FormatPeers (or written by
// hand).
func ReadPeers(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read peers file: %w", err)
	}
	addrs, err := parsePeers(b)
	if err != nil {
		return nil, fmt.Errorf("peers file %s: %w", path, err)
	}
	return addrs, nil
}

func parsePeers(b []byte) (map[string]string, error) {
	var addrs map[string]string
	if err := json.Unmarshal(b, &addrs); err != nil {
		return nil, fmt.Errorf("want a JSON object of instance → \"host:port\": %w", err)
	}
	if addrs == nil {
		return nil, errors.New("want a JSON object of instance → \"host:port\", got null")
	}
	return addrs, checkPeers(addrs)
}

func checkPeers(addrs map[string]string) error {
	var errs []error
	for _, name := range sortedKeys(addrs) {
		if _, err := ParseInstance(name); err != nil {
			errs = append(errs, err)
		}
		host, port, err := net.SplitHostPort(addrs[name])
		if err != nil || host == "" || port == "" || port == "0" {
			errs = append(errs, fmt.Errorf("instance %s: address %q is not host:port", name, addrs[name]))
		}
	}
	return errors.Join(errs...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// HostResolver resolves an instance to host:port, where host is pattern
// with "{instance}" replaced by the instance name ("127.0.0.1" on one
// machine; "{instance}" where every instance is a host of its own name, as
// in compose) and port is the topology's port of the instance.
func HostResolver(top Topology, pattern string) func(instance string) (string, error) {
	return func(name string) (string, error) {
		in, err := ParseInstance(name)
		if err != nil {
			return "", err
		}
		port := top.Port(in)
		if port == 0 {
			return "", fmt.Errorf("instance %s is not in the topology", name)
		}
		return net.JoinHostPort(strings.ReplaceAll(pattern, "{instance}", name), strconv.Itoa(port)), nil
	}
}

// PeersResolver resolves instance names through the peers file at path.
// Each call stats the file and re-reads it only when it changed (another
// file renamed over it, or a different modification time or size), so it
// is cheap enough to call on every dial. It is safe for concurrent use.
// An instance the file does not name is an error that says so; so is a
// missing or unreadable file (the previous contents are not used, so a
// broken registry is noticed rather than silently outdated).
func PeersResolver(path string) func(instance string) (string, error) {
	r := &peersResolver{path: path}
	return r.resolve
}

type peersResolver struct {
	path string

	mu    sync.Mutex
	info  os.FileInfo // of the file last read
	mtime time.Time
	size  int64
	addrs map[string]string
}

func (r *peersResolver) resolve(instance string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	info, err := os.Stat(r.path)
	if err != nil {
		return "", fmt.Errorf("resolve %s: peers file: %w", instance, err)
	}
	if r.info == nil || !os.SameFile(r.info, info) || !info.ModTime().Equal(r.mtime) || info.Size() != r.size {
		addrs, err := ReadPeers(r.path)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", instance, err)
		}
		r.info, r.mtime, r.size, r.addrs = info, info.ModTime(), info.Size(), addrs
	}
	addr, ok := r.addrs[instance]
	if !ok {
		known := sortedKeys(r.addrs)
		if len(known) > 12 {
			known = append(known[:12], "...")
		}
		return "", fmt.Errorf("peers file %s has no address for instance %q (it names %s)", r.path, instance, strings.Join(known, ", "))
	}
	return addr, nil
}
