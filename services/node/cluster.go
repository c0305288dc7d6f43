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

	opts     ClusterOptions
	resolver transport.Resolver
	stores   map[string]transport.Store
	running  map[string]serving // by instance
}

// serving is one node's Serve call in the background.
type serving struct {
	stop context.CancelFunc
	done chan error // Serve's result
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

// StartCluster starts every instance of top on 127.0.0.1; they serve until
// Stop.
func StartCluster(top deploy.Topology, opts ClusterOptions) (*Cluster, error) {
	if err := top.Validate(); err != nil {
		return nil, err
	}
	c := &Cluster{Topology: top, Nodes: map[string]*Node{}, Addrs: map[string]string{}, running: map[string]serving{}}
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
	c.opts, c.resolver = opts, transport.StaticResolver(dial)
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
	n, err := New(Config{
		Topology: c.Topology, Instance: in, Listener: l, Resolver: c.resolver, Store: c.stores[in.Name()],
		Log: c.opts.Log, BatchRows: c.opts.BatchRows, OutboxLimit: c.opts.OutboxLimit,
	})
	if err != nil {
		l.Close()
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := serving{stop: cancel, done: make(chan error, 1)}
	go func() { run.done <- n.Serve(ctx) }()
	c.Nodes[in.Name()] = n
	c.running[in.Name()] = run
	return nil
}

// stop stops one instance and waits until it has.
func (c *Cluster) stop(instance string) {
	if run, ok := c.running[instance]; ok {
		run.stop()
		<-run.done
		delete(c.running, instance)
	}
}

// Restart stops one instance and starts it again on the same address and
// the same store, as a process restarted on its data directory would be:
// everything it held only in memory is gone. Not safe for concurrent use.
func (c *Cluster) Restart(instance string) error {
	in, err := deploy.ParseInstance(instance)
	if err != nil {
		return err
	}
	if _, ok := c.Nodes[instance]; !ok {
		return fmt.Errorf("no instance %s", instance)
	}
	c.stop(instance)
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

// Stop stops every node and waits until they have.
func (c *Cluster) Stop() {
	for _, run := range c.running {
		run.stop()
	}
	for name, run := range c.running {
		<-run.done
		delete(c.running, name)
	}
}

// Store returns an instance's store.
func (c *Cluster) Store(instance string) transport.Store { return c.stores[instance] }
