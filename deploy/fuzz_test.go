package deploy

import (
	"maps"
	"path/filepath"
	"testing"
)

// FuzzParseTopology: no input makes Parse panic, and a topology it accepts
// can be walked (instances, ports, tasks, replica changes) without one.
func FuzzParseTopology(f *testing.F) {
	f.Add(defaultTopology)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"base_port": 7100, "masters": 3, "tasks": [{"name": "gateway", "role": "gateway", "replicas": 1}]}`))
	f.Add([]byte(`{"tasks": [{"name": "a", "replicas": -1}]}`))
	f.Add([]byte(`{"stages": [], "streams": []}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		top, err := Parse(b)
		if err != nil {
			return
		}
		if err := top.Validate(); err != nil {
			t.Fatalf("Parse accepted what Validate refuses: %v", err)
		}
		for _, in := range append(top.Instances(), top.MasterInstances()...) {
			top.Port(in)
			back, err := ParseInstance(in.Name())
			if err != nil || back != in {
				t.Fatalf("instance %+v: name %q parses as %+v, %v", in, in.Name(), back, err)
			}
		}
		for _, s := range top.Stages {
			top.Replicas(s.Name)
		}
		top.Shard()
		top.Tasks()
		top.Uniform(2)
	})
}

// FuzzParseInstance: an accepted name is <stage>-<index> and names
// itself again, up to leading zeros in the index.
func FuzzParseInstance(f *testing.F) {
	for _, s := range []string{"shard-1", "gateway-0", "master-3", "-1", "a-", "a--1", "a-01", "a-+1", "x-99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		in, err := ParseInstance(name)
		if err != nil {
			return
		}
		if in.Stage == "" || in.Index < 0 {
			t.Fatalf("%q accepted as %+v", name, in)
		}
		again, err := ParseInstance(in.Name())
		if err != nil || again != in {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", name, in, in.Name(), again, err)
		}
	})
}

// FuzzParsePeers: no peers file makes the parser panic, and what it
// accepts survives FormatPeers and ReadPeers unchanged.
func FuzzParsePeers(f *testing.F) {
	f.Add([]byte(`{"gateway-0": "127.0.0.1:7100", "q3-joiner-1": "q3-joiner-1:7108"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"gateway": "127.0.0.1:7100"}`))
	f.Add([]byte(`{"gateway-0": "127.0.0.1:0"}`))
	f.Add([]byte(`{"gateway-0": "[::1]:7100"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		addrs, err := parsePeers(b)
		if err != nil {
			return
		}
		path := filepath.Join(t.TempDir(), "peers.json")
		writePeers(t, path, addrs)
		back, err := ReadPeers(path)
		if err != nil || !maps.Equal(back, addrs) {
			t.Fatalf("peers %v read back as %v, %v", addrs, back, err)
		}
	})
}
