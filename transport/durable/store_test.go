package durable

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

func openTest(t *testing.T, dir string) transport.Store {
	t.Helper()
	s, err := Open(dir, Options{Log: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: testkit.Writer(t)})})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, openTest) }

func TestReopen(t *testing.T) { storetest.RunReopen(t, openTest) }

func TestRejectsNUL(t *testing.T) {
	s := openTest(t, t.TempDir())
	defer s.Close()
	bad := storetest.Ch("j", "s\x00", "a", "b")
	for name, err := range map[string]error{
		"commit job":    s.Commit(&transport.Commit{Job: "j\x00"}),
		"commit input":  s.Commit(&transport.Commit{Job: "j", Inputs: map[transport.ChannelID]uint64{bad: 1}}),
		"commit output": s.Commit(&transport.Commit{Job: "j", Outputs: []transport.Entry{{Channel: bad, Seq: 1}}}),
		"trim":          s.Trim(bad, 1),
		"drop":          s.DropJob("a\x00b"),
	} {
		if !errors.Is(err, errNUL) || !strings.HasPrefix(err.Error(), "durable: ") {
			t.Errorf("%s: got error %v", name, err)
		}
	}
	storetest.CheckLoad(t, s, &transport.Image{Jobs: map[string]*transport.JobImage{}})
}

func TestStatsAndClosed(t *testing.T) {
	storetest.StatsAndClosed(t, openTest(t, t.TempDir()), ErrClosed)
}

// A second Open of a directory in use fails rather than sharing it.
func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	defer s.Close()
	if s2, err := Open(dir, Options{}); err == nil {
		s2.Close()
		t.Fatal("second Open of the same directory succeeded")
	} else {
		t.Log(err)
	}
}

// Concurrent commits share WAL syncs (Pebble's group commit), and Stats
// can tell.
func TestGroupCommit(t *testing.T) {
	s := openTest(t, t.TempDir())
	defer s.Close()
	storetest.GroupCommit(t, s)
}

// A commit larger than half a memtable goes through Pebble's large-batch
// path (the batch becomes a memtable of its own); it is as atomic and
// durable as any other.
func TestLargeCommit(t *testing.T) { storetest.LargeCommit(t, openTest) }
