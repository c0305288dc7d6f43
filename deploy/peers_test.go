package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// writePeers stands in for the writer of the peers file, which lives
// outside this package: FormatPeers, then a temporary file renamed over
// path, as services/base/atomicfile does.
func writePeers(tb testing.TB, path string, addrs map[string]string) {
	tb.Helper()
	b, err := FormatPeers(addrs)
	if err != nil {
		tb.Fatalf("FormatPeers(%v): %v", addrs, err)
	}
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		tb.Fatal(err)
	}
}

func TestPeersRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "peers.json")
	want := map[string]string{"gateway-0": "127.0.0.1:7100", "q3-joiner-1": "127.0.0.1:40001", "matches-filter-0": "[::1]:7101"}
	b, err := FormatPeers(want)
	if err != nil {
		t.Fatal(err)
	}
	const golden = `{
  "gateway-0": "127.0.0.1:7100",
  "matches-filter-0": "[::1]:7101",
  "q3-joiner-1": "127.0.0.1:40001"
}
`
	if string(b) != golden {
		t.Errorf("FormatPeers = %q, want %q", b, golden)
	}
	writePeers(t, path, want)
	got, err := ReadPeers(path)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read %v, wrote %v", got, want)
	}
}

func TestFormatPeersRefusesBadEntries(t *testing.T) {
	for _, addrs := range []map[string]string{
		{"gateway-0": "127.0.0.1"},    // no port
		{"gateway-0": "127.0.0.1:0"},  // port 0 is not an address
		{"gateway": "127.0.0.1:7100"}, // not an instance name
		{"q3-joiner-1": ":7100"},      // no host
	} {
		if b, err := FormatPeers(addrs); err == nil {
			t.Errorf("FormatPeers(%v) = %q, want an error", addrs, b)
		}
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
	writePeers(t, path, map[string]string{"gateway-0": "127.0.0.1:7100", "q3-joiner-0": "127.0.0.1:7101"})
	resolve := PeersResolver(path)
	if a, err := resolve("q3-joiner-0"); err != nil || a != "127.0.0.1:7101" {
		t.Fatalf("resolve = %q, %v", a, err)
	}
	// Same size, new port: the rename makes it a new file, so it is seen
	// even if the modification time did not move.
	writePeers(t, path, map[string]string{"gateway-0": "127.0.0.1:7100", "q3-joiner-0": "127.0.0.1:7202"})
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
	writePeers(t, path, map[string]string{"gateway-0": "127.0.0.1:9999"})
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
	writePeers(t, path, addrs)
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
		writePeers(t, path, moved)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func BenchmarkPeersResolver(b *testing.B) {
	path := filepath.Join(b.TempDir(), "peers.json")
	writePeers(b, path, map[string]string{"gateway-0": "127.0.0.1:7100"})
	resolve := PeersResolver(path)
	for b.Loop() {
		if _, err := resolve("gateway-0"); err != nil {
			b.Fatal(err)
		}
	}
}
