package e2e

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	gw "github.com/wololo/wololo/services/roles/gateway"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/transport"
)

// TestFetchedJobIsDroppedEverywhere: once the client has its results (and
// deletes the job, as Submit does), every process drops the job's state and
// keeps only a tombstone (and the gateway the memory of the deletion,
// gateway.DeletionsJob, no job's records).
func TestFetchedJobIsDroppedEverywhere(t *testing.T) {
	d := testDatasets(t)[0]
	top := deploy.Default()
	c := startCluster(t, top, node.ClusterOptions{})
	submit(t, c, d)
	waitStores(t, c, "every store to drop the fetched job", 10*time.Second, instanceNames(top), func(img *transport.Image) bool {
		return len(img.Jobs) == 0 && len(img.Dropped) == 1
	})
}

// waitStores waits until each of the instances' stores holds what holds
// says of its image (without the gateway's memory of deletions,
// gateway.DeletionsJob, which is no job), and fails the test after d naming the instance, what
// the test waited for and the jobs and tombstones its store holds.
func waitStores(t *testing.T, c *node.Cluster, what string, d time.Duration, instances []string, holds func(*transport.Image) bool) {
	t.Helper()
	for _, in := range instances {
		var img *transport.Image
		if !testkit.Await(d, func() bool {
			var err error
			if img, err = c.Store(in).Load(); err != nil {
				t.Fatalf("%s's store: %v", in, err)
			}
			delete(img.Jobs, gw.DeletionsJob) // the gateway's memory of the deletions, no job
			return holds(img)
		}) {
			t.Fatalf("timed out after %s waiting for %s: %s's store holds jobs %v, tombstones %v", d, what, in, slices.Sorted(maps.Keys(img.Jobs)), img.Dropped)
		}
	}
}

// instanceNames are the names of the topology's instances.
func instanceNames(top deploy.Topology) []string {
	var out []string
	for _, in := range top.Instances() {
		out = append(out, in.Name())
	}
	return out
}
