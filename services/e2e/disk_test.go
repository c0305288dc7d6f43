package e2e

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/roles/local"
)

// dirBytes is the size of the store files under a local cluster's data
// directory: the tables and metadata, and apart from them the write-ahead
// logs. The processes' own log files (DIR/X.log) are not counted.
func dirBytes(t *testing.T, dir string) (tables, wal int64) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Dir(path) == dir {
			return nil // vanished files, and files of the runner itself
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if filepath.Ext(path) == ".log" {
			wal += info.Size()
		} else {
			tables += info.Size()
		}
		return nil
	})
	return tables, wal
}

// TestDiskReturnsToBaseline runs a job on durable processes and checks that
// once the client deletes the job, every process's store shrinks back to
// about what it was before the job: the segment store deletes or compacts
// the job's segments once they hold nothing live (an idle store compacts
// its current segment too). Files named *.log (Pebble's write-ahead logs,
// with --store pebble) are counted apart as a bounded, reused overhead.
func TestDiskReturnsToBaseline(t *testing.T) {
	bin := testkit.WololoBinary(t)
	d := testDatasets(t)[2]
	dir := t.TempDir()
	// Started: every process has opened its store and answers.
	c := startLocal(t, local.Options{
		Binary: bin, DataDir: dir,
	})
	baseline, _ := dirBytes(t, dir)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := t.TempDir()
	if _, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: d.matches, Players: d.players, Out: out, Keep: true, JobID: "disk"}); err != nil {
		t.Fatal(err)
	}
	compareOutputs(t, d, out)
	duringTables, duringWAL := dirBytes(t, dir)
	during := duringTables + duringWAL
	conn, err := client.Dial(c.GatewayAddr(), clientTLS(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := wololov1.NewJobServiceClient(conn).DeleteJob(ctx, &wololov1.DeleteJobRequest{JobId: "disk"}); err != nil {
		t.Fatal(err)
	}
	// A store keeps a few small files (its lock, the tombstone) whatever it
	// holds; allow them, not the job's data.
	const slack = 1 << 20
	var after, wal int64
	if !testkit.Await(30*time.Second, func() bool { after, wal = dirBytes(t, dir); return after <= baseline+slack }) {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if info, e := d.Info(); e == nil && !d.IsDir() && info.Size() > 100000 {
				t.Logf("%s %d", p, info.Size())
			}
			return nil
		})
		t.Fatalf("data dirs: %d bytes before the job, %d with it, still %d after it was deleted", baseline, during, after)
	}
	t.Logf("store tables: %d bytes before the job, %d with it (tables and logs), %d after it was deleted; write-ahead logs %d bytes", baseline, during, after, wal)
	if max := int64(len(c.Instances())) * 3 * 32 << 20; wal > max {
		t.Errorf("write-ahead logs hold %d bytes, more than 3 memtables per process", wal)
	}
	if during < baseline+2*slack {
		t.Errorf("the job's state took only %d bytes on disk; the test proves nothing", during-baseline)
	}
}
