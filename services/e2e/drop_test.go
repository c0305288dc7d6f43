package e2e

import (
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	gw "github.com/wololo/wololo/services/roles/gateway"
	"github.com/wololo/wololo/services/roles/node"
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
	deadline := time.Now().Add(10 * time.Second)
	for _, in := range top.Instances() {
		for {
			img, err := c.Store(in.Name()).Load()
			if err != nil {
				t.Fatal(err)
			}
			delete(img.Jobs, gw.DeletionsJob)
			if len(img.Jobs) == 0 && len(img.Dropped) == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still holds %d jobs (dropped: %v)", in.Name(), len(img.Jobs), img.Dropped)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
