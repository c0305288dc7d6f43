package local

import (
	"slices"
	"testing"
)

// TestMasterArgsGoToMastersOnly: MasterArgs end a master's command line
// and no graph process's; ExtraArgs the other way round.
func TestMasterArgsGoToMastersOnly(t *testing.T) {
	c := &Cluster{opts: Options{LogLevel: "info", ExtraArgs: []string{"--batch-rows", "7"}, MasterArgs: []string{"--log-json"}},
		topoPath: "T", peersPath: "P", controlAddr: "C", tlsDir: "S"}
	master := c.argsLocked(&instance{name: "master-2", cmd: "master", addr: "A", admin: "M", dataDir: "D"})
	want := []string{"master", "--id", "2", "--topology", "T", "--listen", "A", "--log-level", "info", "--data", "D",
		"--peers", "P", "--runtime", "local", "--processes", "C", "--admin", "M", "--tls-dir", "S", "--log-json"}
	if !slices.Equal(master, want) {
		t.Errorf("master: %q\nwant     %q", master, want)
	}
	worker := c.argsLocked(&instance{name: "q1-filter-0", cmd: "worker", addr: "A", dataDir: "D"})
	if slices.Contains(worker, "--log-json") || !slices.Contains(worker, "--batch-rows") {
		t.Errorf("worker: %q", worker)
	}
}
