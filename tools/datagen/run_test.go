package datagen

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/cli"
)

func TestRun(t *testing.T) {
	ctx := context.Background()
	var out, errb bytes.Buffer
	if err := Run(ctx, []string{"-h"}, &out, &errb); !errors.Is(err, flag.ErrHelp) || !strings.Contains(errb.String(), "-matches") {
		t.Errorf("-h: err %v, usage %q", err, errb.String())
	}
	for _, args := range [][]string{
		{"--matches", "-5"}, {"--matches", "0"}, {"--matches", "lots"}, {"--seed", "x"},
		{"--out", ""}, {"--nope"}, {"extra"},
	} {
		if err := Run(ctx, args, io.Discard, io.Discard); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	dir := filepath.Join(t.TempDir(), "a", "b")
	out.Reset()
	if err := Run(ctx, []string{"--matches", "500", "--seed", "9", "--out", dir, "--crlf"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "rows/s") || !strings.Contains(s, "MB/s") {
		t.Errorf("summary %q", s)
	}
	var m, p bytes.Buffer
	if _, err := datagen.Generate(datagen.Config{Matches: 500, Seed: 9, CRLF: true}, &m, &p); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"matches.csv": m.Bytes(), "match_players.csv": p.Bytes()} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: err %v, %d bytes, want the %d bytes of Generate", name, err, len(got), len(data))
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := Run(cctx, []string{"--matches", "5000", "--out", t.TempDir()}, io.Discard, io.Discard); err == nil {
		t.Error("cancelled context: no error")
	}
}
