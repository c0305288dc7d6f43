package client

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
)

// TestSubmitTables: --table NAME=F sends each table's name and header
// (columns, where its records begin, size, fingerprint) with the job, in
// order, and uploads each one by name after the two files.
func TestSubmitTables(t *testing.T) {
	g := &queryGateway{results: map[string]string{"civs.csv": "civ,n\n"}, sent: []string{"civs.csv"}}
	addr := serveQueries(t, g)
	dir, args := queryFiles(t)
	regions := "\ufeffciv,region\nfranks,west\n"
	zones := "zone\r\nnorth\r\n"
	for name, text := range map[string]string{"regions.csv": regions, "zones.csv": zones} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args = append(args, "--table", "regions="+filepath.Join(dir, "regions.csv"), "--table", "zones="+filepath.Join(dir, "zones.csv"))
	if _, _, err := runClient(t, append([]string{"submit", "--insecure", "--server", addr, "--quiet", "--out", t.TempDir(), "--job", "j"}, args...)...); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	want := []struct {
		name   string
		cols   []string
		offset int
		size   int
	}{
		{"regions", []string{"civ", "region"}, len("\ufeffciv,region\n"), len(regions)},
		{"zones", []string{"zone"}, len("zone\r\n"), len(zones)},
	}
	if len(g.req.Tables) != len(want) {
		t.Fatalf("CreateJob got %d tables, want %d", len(g.req.Tables), len(want))
	}
	for i, w := range want {
		tb := g.req.Tables[i]
		h := tb.GetHeader()
		if tb.Name != w.name || !slices.Equal(h.GetColumns(), w.cols) || h.GetDataOffset() != int64(w.offset) || h.GetSize() != int64(w.size) || len(h.GetFingerprint()) != 32 {
			t.Errorf("table %d: %v; want %s %q from byte %d of %d, fingerprinted", i, tb, w.name, w.cols, w.offset, w.size)
		}
	}
	var order []string
	for _, s := range g.uploads {
		if s.Table != "" {
			order = append(order, s.Table)
			if s.File != wololov1.InputFile_INPUT_FILE_UNSPECIFIED {
				t.Errorf("the upload of table %s names file %v too", s.Table, s.File)
			}
			continue
		}
		order = append(order, s.File.String())
	}
	if wantOrder := []string{"INPUT_FILE_MATCHES", "INPUT_FILE_PLAYERS", "regions", "zones"}; !slices.Equal(order, wantOrder) {
		t.Errorf("uploads %q, want %q", order, wantOrder)
	}
}

// TestSubmitTableFlags: --table's mistakes are found before the gateway
// is called.
func TestSubmitTableFlags(t *testing.T) {
	dir, files := queryFiles(t)
	base := []string{"submit", "--insecure", "--server", closedAddr(t), "--out", t.TempDir(), "--matches", files[1], "--players", files[3]}
	query := []string{"--query", "civs=" + filepath.Join(dir, "civs.sql")}
	cases := []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"--table", "r=" + files[1]}, cli.ExitUsage, "--table is for the tables of --query queries"},
		{append(slices.Clone(query), "--table", "r"), cli.ExitUsage, "want NAME=FILE"},
		{append(slices.Clone(query), "--table", "r="+filepath.Join(dir, "missing.csv")), cli.ExitError, "missing.csv"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, _, err := runClient(t, append(slices.Clone(base), c.args...)...)
			if cli.ExitCode(err) != c.exit || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v (exit %d), want exit %d saying %q", err, cli.ExitCode(err), c.exit, c.want)
			}
		})
	}
}
