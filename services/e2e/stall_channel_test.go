package e2e

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/transport/transporttest"
)

// TestStallNamesTheFailingChannel holds a job whose shards cannot deliver
// their results (the gateway's internal plane refuses connections, through
// a proxy) and submits it with a short stall timeout: the submit gives up
// naming the channels whose batches the gateway never acknowledged, from
// which shard, and their links' last errors, where it used to name only
// the stages; `client status` of the held job names them too.
func TestStallNamesTheFailingChannel(t *testing.T) {
	d := testDatasets(t)[0]
	c, gwProxy := startClusterGatewayProxied(t, node.ClusterOptions{})
	gwName := deploy.Instance{Stage: deploy.Default().Gateway().Name}.Name()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gwProxy.Refuse(true)
	defer gwProxy.Refuse(false)
	_, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: d.matches, Players: d.players,
		Out: t.TempDir(), JobID: "held", StallTimeout: 3 * time.Second})
	if !errors.Is(err, cli.ErrStalled) {
		t.Fatalf("submit of a job whose results cannot reach the gateway: %v, want it stalled", err)
	}
	t.Logf("submit: %v", err)
	channel := regexp.MustCompile(`channel c\d+-\S+ from shard-\d to ` + gwName + `: \d+ batches unacknowledged \(not connected; last error: [^)]+\)`)
	if !channel.MatchString(err.Error()) {
		t.Errorf("the stall does not name a channel to the gateway with its last error (%s):\n%v", channel, err)
	}

	var stdout, stderr bytes.Buffer
	args := []string{"status", "--tls-dir", clientDir(t, c, "client"), "--server", c.GatewayAddr(), "--job", "held"}
	if err := client.Run(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("client status: %v\n%s", err, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "  not acknowledged: ") || !channel.MatchString(out) {
		t.Errorf("client status of the held job does not name its failing channels:\n%s", out)
	}
}

// startClusterGatewayProxied starts a cluster of the default topology
// whose gateway the other processes reach through a proxy (o.Route), and
// returns it with the proxy: Refuse(true) cuts the gateway's internal
// plane off.
func startClusterGatewayProxied(t *testing.T, o node.ClusterOptions) (*node.Cluster, *transporttest.Proxy) {
	t.Helper()
	gwName := deploy.Instance{Stage: deploy.Default().Gateway().Name}.Name()
	var gwProxy *transporttest.Proxy
	o.Route = func(instance, addr string) string {
		if instance != gwName {
			return addr
		}
		p, err := transporttest.NewProxy(addr)
		if err != nil {
			t.Fatal(err)
		}
		gwProxy = p
		return p.Addr()
	}
	c := startCluster(t, deploy.Default(), o)
	t.Cleanup(gwProxy.Close)
	return c, gwProxy
}
