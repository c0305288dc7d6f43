package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/roles/node"
)

// FuzzPipelineVsReference feeds arbitrary bytes as both files through the
// whole system (the client's header checks, the gateway's ingest, the
// graph) and through the reference: either both refuse the input, or both
// answer, with the same four files and the same report.
func FuzzPipelineVsReference(f *testing.F) {
	header := "token,ladder,mirror,average_rating,map,server,duration\n"
	pheader := "match,rating,civ,winner\n"
	f.Add([]byte(header+"a,RM_1v1,false,2100,arena,eastus,2:30:00\n"), []byte(pheader+"a,1500,Franks,true\na,2500,Huns,false\n"))
	f.Add([]byte(header+"t\xff,RM_TEAM,0,2001,islands,x,0:01:00\n"), []byte(pheader+"t\xff,2001,Fran\xe7ais,1\n"))
	f.Add([]byte(header+"\"open,RM_1v1\n"), []byte(pheader+"x,1,\"a\"\"b\",1\r\n\n"))
	f.Add([]byte("token,map\n"), []byte(pheader))
	f.Add([]byte(header), []byte("match,rating,civ,winner,civ\n"))
	f.Add([]byte("\xef\xbb\xbf\n"+header+"z,RM_1v1,False,3000,arena,eastus,1 day, 0:00:01\n"), []byte(""))
	cluster, err := node.StartCluster(deploy.Default(), node.ClusterOptions{Log: hclog.NewNullLogger()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(cluster.Stop)
	f.Fuzz(func(t *testing.T, matches, players []byte) {
		dir := t.TempDir()
		d := &dataset{name: "fuzz", matches: filepath.Join(dir, "matches.csv"), players: filepath.Join(dir, "match_players.csv")}
		if err := os.WriteFile(d.matches, matches, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(d.players, players, 0o644); err != nil {
			t.Fatal(err)
		}
		want, refErr := reference.EvaluateFiles(d.matches, d.players)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out := filepath.Join(dir, "out")
		sum, err := client.Submit(ctx, client.SubmitOptions{Server: cluster.GatewayAddr(), TLS: clientTLS(t, cluster), Matches: d.matches, Players: d.players, Out: out, Reach: 10 * time.Second})
		// The job fails for too many malformed records exactly when the
		// rule says so of the reference's counts.
		if refErr == nil {
			limit := schema.MalformedLimit(schema.DefaultMaxMalformed)
			past := limit.Exceeded(want.Report.Matches.Rows, want.Report.Matches.Malformed) || limit.Exceeded(want.Report.Players.Rows, want.Report.Players.Malformed)
			if failed := errors.Is(err, cli.ErrJobFailed) && strings.Contains(err.Error(), "--max-malformed"); failed != past {
				t.Fatalf("the system: %v; the reference counts %+v and %+v, past the limit: %v", err, want.Report.Matches, want.Report.Players, past)
			}
			if past {
				return
			}
		}
		switch {
		case refErr != nil && err != nil:
			return // both refuse
		case refErr != nil:
			t.Fatalf("the reference refuses (%v), the system answers", refErr)
		case err != nil:
			t.Fatalf("the system refuses (%v), the reference answers", err)
		}
		testkit.SameFiles(t, out, want.Files())
		for _, r := range []struct {
			gotRows, gotBad, wantRows, wantBad int64
		}{{sum.Job.Matches.Rows, sum.Job.Matches.Malformed, want.Report.Matches.Rows, want.Report.Matches.Malformed},
			{sum.Job.Players.Rows, sum.Job.Players.Malformed, want.Report.Players.Rows, want.Report.Players.Malformed}} {
			if r.gotRows != r.wantRows || r.gotBad != r.wantBad {
				t.Fatalf("report rows %d malformed %d, the reference's %d and %d", r.gotRows, r.gotBad, r.wantRows, r.wantBad)
			}
		}
	})
}
