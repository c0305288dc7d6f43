package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/dataflow/sql/sqlops"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
	"github.com/wololo/wololo/transport"
)

// Cluster is every instance of a topology running in this process, each
// with its own gRPC server on a free loopback port: the embedded demo, and
// the in-process end-to-end tests. Unless Insecure, they speak mutual TLS
// with certificates of a CA made for the cluster and kept in memory only;
// ClientTLS gives a client a certificate of it.
type Cluster struct {
	Topology deploy.Topology
	Nodes    map[string]*Node
	Addrs    map[string]string // internal plane, by instance
	// PublicAddr is the gateway's public address, for clients.
	PublicAddr string
	// CA is the cluster's certificate authority; nil if Insecure.
	CA *pki.CA
	// AdminAddrs are the instances' admin HTTP listeners (/metrics), by
	// instance, with ClusterOptions.Admin; nil without.
	AdminAddrs map[string]string

	opts    ClusterOptions
	dial    map[string]string // the address each instance is dialled at (Route's)
	stores  map[string]transport.Store
	running map[string]serving // by instance
	public  net.Listener
}

// serving is one node's Serve call in the background.
type serving struct {
	stop context.CancelFunc
	done chan struct{} // closed when Serve has returned
	err  *error        // Serve's result, once done
}

// ClusterOptions tune a cluster.
type ClusterOptions struct {
	Log         hclog.Logger
	OutboxLimit int
	// Route, if set, may replace the address other instances dial to reach
	// an instance (tests put a connection-cutting proxy there); an
	// instance sending to itself (the gateway's channels of the rows it
	// gathers) dials its own address.
	Route func(instance, addr string) string
	// Insecure runs plain TCP without certificates or identity checks.
	Insecure bool
	// RevocationList, if set, is the path of a revocation list of the
	// cluster's CA (CA.Revoke writes it) that every instance checks its
	// peers against, as processes loading their credentials from a
	// directory do.
	RevocationList string
	// MaxJobs, by instance name, is the jobs that instance holds at once
	// (Config.MaxJobs); the default for any other.
	MaxJobs map[string]int
	// RPCLimits are every instance's: see Config.RPCLimits.
	RPCLimits rpc.Limits
	// MaxHeldBytes is the gateway's: see Config.MaxHeldBytes.
	MaxHeldBytes int64
	// JobBudget is every instance's: see Config.JobBudget.
	JobBudget sqlops.Budget
	// DataDir, if set, gives each instance DataDir/INSTANCE as its
	// Config.DataDir (the stores stay the cluster's, SetStore's): there the
	// gateway keeps the jobs' inputs, which a rebuild replays. Without it
	// the gateway keeps none, and a lost job fails for its client to
	// submit again.
	DataDir string
	// Admin gives every instance an admin HTTP listener on a free
	// loopback port (Config.Admin; Cluster.AdminAddrs), as a process of
	// the deployment has: its /metrics, and the gateway's page.
	Admin bool
}

// StartCluster starts every instance of top on 127.0.0.1; they serve until
// Stop.
func StartCluster(top deploy.Topology, opts ClusterOptions) (*Cluster, error) {
	if err := top.Validate(); err != nil {
		return nil, err
	}
	c := &Cluster{Topology: top, Nodes: map[string]*Node{}, Addrs: map[string]string{}, running: map[string]serving{}}
	if !opts.Insecure {
		ca, err := pki.NewCA("Wololo in-process CA")
		if err != nil {
			return nil, err
		}
		c.CA = ca
	}
	public, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for clients: %w", err)
	}
	c.public, c.PublicAddr = public, public.Addr().String()
	listeners := map[string]net.Listener{}
	for _, in := range top.Instances() {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			public.Close()
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
	c.opts, c.dial = opts, dial
	c.stores = map[string]transport.Store{}
	for _, in := range top.Instances() {
		c.stores[in.Name()] = transport.NewMemStore()
		if err := c.start(in, listeners[in.Name()]); err != nil {
			c.Stop()
			return nil, err
		}
	}
	// Started is serving: every node has recovered its (empty) store, so
	// that a first call is not refused as one to a recovering process.
	timeout := time.After(startTimeout)
	for name, n := range c.Nodes {
		select {
		case <-n.Recovered():
		case <-c.running[name].done:
			err := fmt.Errorf("%s stopped before it served: %v", name, *c.running[name].err)
			c.Stop()
			return nil, err
		case <-timeout:
			c.Stop()
			return nil, fmt.Errorf("%s did not recover its empty store within %s", name, startTimeout)
		}
	}
	return c, nil
}

// resolverFor is the addresses instance self dials: the others' as
// Route gave them, its own where it listens.
func (c *Cluster) resolverFor(self string) rpc.Resolver {
	dial := maps.Clone(c.dial)
	dial[self] = c.Addrs[self]
	return rpc.StaticResolver(dial)
}

// startTimeout bounds how long StartCluster waits for its nodes to serve.
const startTimeout = time.Minute

func (c *Cluster) start(in deploy.Instance, l net.Listener) error {
	cfg := Config{
		Topology: c.Topology, Instance: in, Listener: l, Resolver: c.resolverFor(in.Name()), Store: c.stores[in.Name()],
		Log: c.opts.Log, OutboxLimit: c.opts.OutboxLimit, MaxJobs: c.opts.MaxJobs[in.Name()], MaxHeldBytes: c.opts.MaxHeldBytes,
		JobBudget: c.opts.JobBudget, RPCLimits: c.opts.RPCLimits,
	}
	if in.Stage == c.Topology.Gateway().Name {
		cfg.Public = c.public
	}
	fail := func(err error) error {
		l.Close()
		if cfg.Admin != nil {
			cfg.Admin.Close()
		}
		return err
	}
	if c.opts.DataDir != "" {
		cfg.DataDir = filepath.Join(c.opts.DataDir, in.Name())
	}
	if c.opts.Admin {
		addr := c.AdminAddrs[in.Name()] // the same address after a Restart
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		al, err := net.Listen("tcp", addr)
		if err != nil {
			return fail(fmt.Errorf("listen for %s's admin: %w", in.Name(), err))
		}
		if c.AdminAddrs == nil {
			c.AdminAddrs = map[string]string{}
		}
		c.AdminAddrs[in.Name()] = al.Addr().String()
		cfg.Admin = al
	}
	if c.CA != nil {
		spec := pki.Spec{ID: pki.Identity{Kind: pki.Instance, Name: in.Name()}, Gateway: in.Stage == c.Topology.Gateway().Name}
		creds, err := c.CA.CredentialsFor(spec)
		if err != nil {
			return fail(err)
		}
		if c.opts.RevocationList != "" {
			list, err := pki.OpenRevocations(c.opts.RevocationList, c.CA.Cert)
			if err != nil {
				return fail(err)
			}
			creds.CheckRevocations(list)
			creds.SetLog(c.opts.Log)
		}
		cfg.Credentials = creds
	}
	n, err := New(cfg)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := serving{stop: cancel, done: make(chan struct{}), err: new(error)}
	go func() {
		*run.err = n.Serve(ctx)
		close(run.done)
	}()
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

// Exited is closed when the instance's current Serve has returned, on its
// own (a fatal error: see Err) or stopped by Stop or Restart.
func (c *Cluster) Exited(instance string) <-chan struct{} {
	if run, ok := c.running[instance]; ok {
		return run.done
	}
	done := make(chan struct{})
	close(done)
	return done
}

// Err is what the instance's current Serve returned, once Exited is
// closed; nil before.
func (c *Cluster) Err(instance string) error {
	run, ok := c.running[instance]
	if !ok {
		return nil
	}
	select {
	case <-run.done:
		return *run.err
	default:
		return nil
	}
}

// SetStore makes the instance run on s from its next Restart on (a test's
// wrapper of its store, or another store altogether).
func (c *Cluster) SetStore(instance string, s transport.Store) { c.stores[instance] = s }

// Restart stops one instance and starts it again on the same address and
// the same store, as a process restarted on its data directory would be:
// everything it held only in memory is gone. Not safe for concurrent use.
func (c *Cluster) Restart(instance string) error {
	if err := c.StopInstance(instance); err != nil {
		return err
	}
	return c.StartInstance(instance)
}

// StopInstance stops one instance, as a process that exits: its store stays,
// and StartInstance starts it again on it. Not safe for concurrent use.
func (c *Cluster) StopInstance(instance string) error {
	if _, ok := c.Nodes[instance]; !ok {
		return fmt.Errorf("no instance %s", instance)
	}
	c.stop(instance)
	return nil
}

// StartInstance starts an instance StopInstance stopped, on the same address and the
// same store. Not safe for concurrent use.
func (c *Cluster) StartInstance(instance string) error {
	in, err := deploy.ParseInstance(instance)
	if err != nil {
		return err
	}
	if _, ok := c.Nodes[instance]; !ok {
		return fmt.Errorf("no instance %s", instance)
	}
	l, err := net.Listen("tcp", c.Addrs[instance])
	if err != nil {
		return fmt.Errorf("listen again for %s: %w", instance, err)
	}
	if in.Stage == c.Topology.Gateway().Name {
		if c.public, err = net.Listen("tcp", c.PublicAddr); err != nil {
			l.Close()
			return fmt.Errorf("listen again for clients: %w", err)
		}
	}
	return c.start(in, l)
}

// GatewayAddr is the address clients use: the gateway's public plane.
func (c *Cluster) GatewayAddr() string { return c.PublicAddr }

// ClientTLS is a TLS config for a client of the given name (a new
// certificate of the cluster's CA each call) dialing the gateway's public
// address, which it verifies as the gateway's; nil if the cluster is
// Insecure.
func (c *Cluster) ClientTLS(name string) (*tls.Config, error) {
	creds, err := c.credentials(pki.Identity{Kind: pki.Client, Name: name})
	if creds == nil {
		return nil, err
	}
	return creds.GatewayTLS("127.0.0.1"), nil
}

// OperatorTLS is a TLS config to call an instance's Status (internal
// plane) as an operator; nil if the cluster is Insecure.
func (c *Cluster) OperatorTLS(instance string) (*tls.Config, error) {
	creds, err := c.credentials(pki.Identity{Kind: pki.Operator, Name: "operator"})
	if creds == nil {
		return nil, err
	}
	return creds.ClientTLS(instance), nil
}

func (c *Cluster) credentials(id pki.Identity) (*pki.Credentials, error) {
	if c.CA == nil {
		return nil, nil
	}
	return c.CA.Credentials(id)
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

// ReloadRevocations has every instance read the revocation list again
// now (ClusterOptions.RevocationList), as each does by itself every
// pki.ReloadEvery: a test takes a revocation in at once, and the calls of
// a certificate it revokes are ended before it returns.
func (c *Cluster) ReloadRevocations() {
	for _, n := range c.Nodes {
		if n.cfg.Credentials != nil {
			n.cfg.Credentials.ReloadRevocations()
		}
	}
}

// Store returns an instance's store.
func (c *Cluster) Store(instance string) transport.Store { return c.stores[instance] }
