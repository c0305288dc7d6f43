package node

import (
	"context"
	"fmt"
	"net"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/transport"
)

// Cluster is every instance of a topology running in this process, each
// with its own gRPC server on a free loopback port: the embedded demo, and
// the in-process end-to-end tests.
type Cluster struct {
	Topology deploy.Topology
	Nodes    map[string]*Node
	Addrs    map[string]string
}

// ClusterOptions tune a cluster.
type ClusterOptions struct {
	Log         hclog.Logger
	BatchRows   int
	OutboxLimit int
	// Route, if set, may replace the address other instances dial to reach
	// an instance (tests put a connection-cutting proxy there).
	Route func(instance, addr string) string
}

// StartCluster starts every instance of top on 127.0.0.1.
func StartCluster(ctx context.Context, top deploy.Topology, opts ClusterOptions) (*Cluster, error) {
	if err := top.Validate(); err != nil {
		return nil, err
	}
	c := &Cluster{Topology: top, Nodes: map[string]*Node{}, Addrs: map[string]string{}}
	listeners := map[string]net.Listener{}
	for _, in := range top.Instances() {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return nil, fmt.Errorf("listen for %s: %w", in.Name(), err)
		}
		listeners[in.Name()] = l
		c.Addrs[in.Name()] = l.Addr().String()
	}
	dial := map[string]string{}
	for name, addr := range c.Addrs {
		dial[name] = addr
		if opts.Route != nil {
			dial[name] = opts.Route(name, addr)
		}
	}
	resolver := transport.StaticResolver(dial)
	for _, in := range top.Instances() {
		n, err := Start(ctx, Config{
			Topology: top, Instance: in, Listener: listeners[in.Name()], Resolver: resolver,
			Log: opts.Log, BatchRows: opts.BatchRows, OutboxLimit: opts.OutboxLimit,
		})
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes[in.Name()] = n
	}
	return c, nil
}

// GatewayAddr is the address clients use.
func (c *Cluster) GatewayAddr() string {
	return c.Addrs[deploy.Instance{Stage: c.Topology.Gateway().Name}.Name()]
}

// Stop stops every node.
func (c *Cluster) Stop() {
	for _, n := range c.Nodes {
		n.Stop()
	}
}
