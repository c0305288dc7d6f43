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

	ctx      context.Context
	opts     ClusterOptions
	resolver transport.Resolver
	stores   map[string]transport.Store
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
	c.ctx, c.opts, c.resolver = ctx, opts, transport.StaticResolver(dial)
	c.stores = map[string]transport.Store{}
	for _, in := range top.Instances() {
		c.stores[in.Name()] = transport.NewMemStore()
		if err := c.start(in, listeners[in.Name()]); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) start(in deploy.Instance, l net.Listener) error {
	n, err := Start(c.ctx, Config{
		Topology: c.Topology, Instance: in, Listener: l, Resolver: c.resolver, Store: c.stores[in.Name()],
		Log: c.opts.Log, BatchRows: c.opts.BatchRows, OutboxLimit: c.opts.OutboxLimit,
	})
	if err != nil {
		return err
	}
	c.Nodes[in.Name()] = n
	return nil
}

// Restart stops one instance and starts it again on the same address and
// the same store, as a process restarted on its data directory would be:
// everything it held only in memory is gone. Not safe for concurrent use.
func (c *Cluster) Restart(instance string) error {
	in, err := deploy.ParseInstance(instance)
	if err != nil {
		return err
	}
	n, ok := c.Nodes[instance]
	if !ok {
		return fmt.Errorf("no instance %s", instance)
	}
	n.Stop()
	_ = n.Wait()
	l, err := net.Listen("tcp", c.Addrs[instance])
	if err != nil {
		return fmt.Errorf("listen again for %s: %w", instance, err)
	}
	return c.start(in, l)
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

// Store returns an instance's store.
func (c *Cluster) Store(instance string) transport.Store { return c.stores[instance] }
