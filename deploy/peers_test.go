package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestPeersRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "peers.json")
	want := map[string]string{"gateway-0": "127.0.0.1:7100", "q3-joiner-1": "127.0.0.1:40001", "matches-filter-0": "[::1]:7101"}
	if err := WritePeers(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPeers(path)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read %v, wrote %v", got, want)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWritePeersRefusesBadEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "peers.json")
	if err := WritePeers(path, map[string]string{"gateway-0": "127.0.0.1:7100"}); err != nil {
		t.Fatal(err)
	}
	for _, addrs := range []map[string]string{
		{"gateway-0": "127.0.0.1"},    // no port
		{"gateway-0": "127.0.0.1:0"},  // port 0 is not an address
		{"gateway": "127.0.0.1:7100"}, // not an instance name
		{"q3-joiner-1": ":7100"},      // no host
	} {
		if err := WritePeers(path, addrs); err == nil {
			t.Errorf("WritePeers(%v) succeeded", addrs)
		}
	}
	got, err := ReadPeers(path)
	if err != nil || got["gateway-0"] != "127.0.0.1:7100" || len(got) != 1 {
		t.Fatalf("a refused write changed the file: %v, %v", got, err)
	}
}

func TestReadPeersErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"garbage": "not json",
		"array":   `["gateway-0"]`,
		"null":    `null`,
		"badaddr": `{"gateway-0": "nowhere"}`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(body), 0o644)
		if _, err := ReadPeers(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v, want one naming %s", name, err, path)
		}
	}
	if _, err := ReadPeers(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestPeersResolverFollowsRewrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "peers.json")
	if err := WritePeers(path, map[string]string{"gateway-0": "127.0.0.1:7100", "q3-joiner-0": "127.0.0.1:7101"}); err != nil {
		t.Fatal(err)
	}
	resolve := PeersResolver(path)
	if a, err := resolve("q3-joiner-0"); err != nil || a != "127.0.0.1:7101" {
		t.Fatalf("resolve = %q, %v", a, err)
	}
	// Same size, new port: the rename makes it a new file, so it is seen
	// even if the modification time did not move.
	if err := WritePeers(path, map[string]string{"gateway-0": "127.0.0.1:7100", "q3-joiner-0": "127.0.0.1:7202"}); err != nil {
		t.Fatal(err)
	}
	if a, err := resolve("q3-joiner-0"); err != nil || a != "127.0.0.1:7202" {
		t.Fatalf("after rewrite resolve = %q, %v", a, err)
	}
	_, err := resolve("q4-joiner-3")
	if err == nil || !strings.Contains(err.Error(), `"q4-joiner-3"`) || !strings.Contains(err.Error(), "gateway-0") {
		t.Fatalf("unknown instance: %v", err)
	}
	os.Remove(path)
	if _, err := resolve("gateway-0"); err == nil {
		t.Fatal("resolved through a removed peers file")
	}
	if err := WritePeers(path, map[string]string{"gateway-0": "127.0.0.1:9999"}); err != nil {
		t.Fatal(err)
	}
	if a, err := resolve("gateway-0"); err != nil || a != "127.0.0.1:9999" {
		t.Fatalf("after re-creation resolve = %q, %v", a, err)
	}
}

func TestPeersResolverCachesAndIsConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "peers.json")
	addrs := map[string]string{}
	for _, in := range Default().Instances() {
		addrs[in.Name()] = fmt.Sprintf("127.0.0.1:%d", Default().Port(in))
	}
	if err := WritePeers(path, addrs); err != nil {
		t.Fatal(err)
	}
	resolve := PeersResolver(path)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				for name, want := range addrs {
					got, err := resolve(name)
					if err != nil || (got != want && !strings.HasPrefix(got, "127.0.0.2:")) {
						errs <- fmt.Errorf("resolve %s = %q, %v", name, got, err)
						return
					}
				}
			}
		}()
	}
	// Meanwhile move every instance to another host, a few times: readers
	// must only ever see a whole old or a whole new file.
	for i := 0; i < 20; i++ {
		moved := map[string]string{}
		for name, a := range addrs {
			if i%2 == 0 {
				a = "127.0.0.2:" + a[strings.LastIndexByte(a, ':')+1:]
			}
			moved[name] = a
		}
		if err := WritePeers(path, moved); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func BenchmarkPeersResolver(b *testing.B) {
	path := filepath.Join(b.TempDir(), "peers.json")
	if err := WritePeers(path, map[string]string{"gateway-0": "127.0.0.1:7100"}); err != nil {
		b.Fatal(err)
	}
	resolve := PeersResolver(path)
	for b.Loop() {
		if _, err := resolve("gateway-0"); err != nil {
			b.Fatal(err)
		}
	}
}
