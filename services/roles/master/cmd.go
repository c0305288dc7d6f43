package master

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/logflags"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
	"github.com/wololo/wololo/services/ops/admin"
	"github.com/wololo/wololo/services/wire/rpc"
)

const cmdUsage = `usage: wololo master --id N [flags]

Runs master N of the topology's masters (instance master-N). The masters
elect a leader (Bully, with terms and leases); every master probes every
process of the deployment and the other masters, and the acting leader restarts
the dead and the silent through the runtime (a process that answers it is
recovering is alive for --recovery-grace):

  --runtime local    the OS processes of 'wololo local' (its ProcessService)
  --runtime docker   the containers of a compose project, by label
  --runtime swarm    the services of a Docker Swarm stack, by label: a
                     forced service update restarts an instance

Status/Get on its address shows the election and every supervised process.
`

// Run is `wololo master`.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo master", cmdUsage, stderr)
	id := fs.Int("id", 0, "this master's id, 1..masters of the topology (required)")
	topoPath := fs.String("topology", "", "topology JSON file (default: $WOLOLO_TOPOLOGY if set, else the embedded one)")
	listen := fs.String("listen", "", "listen address (default: 0.0.0.0 on the topology's port of master-N)")
	hosts := fs.String("hosts", "127.0.0.1", `other masters' host pattern; "{instance}" becomes the instance name`)
	peers := fs.String("peers", "", "peers file (JSON: instance -> host:port), re-read when it changes; overrides --hosts")
	dataDir := fs.String("data", "", "data directory for the durable term (without it a restart forgets its promises: tests only)")
	runtimeName := fs.String("runtime", "local", `how processes are listed and restarted: "local", "docker" or "swarm"`)
	processes := fs.String("processes", "", "local runtime: address of the runner's ProcessService")
	project := fs.String("docker-project", "wololo", "docker and swarm runtimes: the project label of the deployment's containers or services")
	dockerHost := fs.String("docker-host", "", "docker and swarm runtimes: the engine's (a swarm manager's) address, e.g. unix:///run/wololo-docker/docker.sock (default: $DOCKER_HOST, else the local socket)")
	dockerAPIVersion := fs.String("docker-api-version", deploy.DockerAPIVersion, "docker and swarm runtimes: the Engine API version spoken, pinned, not negotiated (the docker-proxy's --api-version admits only its own; Docker Engine 29 and later need 1.44 or above)")
	timeout := fs.Duration("timeout", DefaultDetection, "a dead or silent process is detected within this (probes every 250ms) and restarted")
	recoveryGrace := fs.Duration("recovery-grace", DefaultRecoveryGrace, "a process that answers it is recovering (loading its store) is left alone this long, then restarted as stuck")
	tick := fs.Duration("tick", DefaultTick, "election tick; every master must use the same")
	logFlags := logflags.Register(fs, "info")
	adminAddr := fs.String("admin", "", `admin HTTP listen address, internal like Status: /metrics (default: 127.0.0.1, loopback only, on the topology's admin port of master-N, 1000 above its gRPC one; 0.0.0.0:PORT for a scraper elsewhere; "none": no admin listener)`)
	tlsFlags := tlsflags.Register(fs, "")
	var rpcLimits rpc.Limits
	rpcLimits.RegisterFlags(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	top, err := deploy.Select(*topoPath)
	if err != nil {
		return err
	}
	if *id < 1 || *id > top.Masters {
		fs.Usage()
		return fmt.Errorf("--id must be 1..%d (the topology's masters), got %d", top.Masters, *id)
	}
	if *timeout < 2*DefaultEvery || *tick <= 0 {
		return fmt.Errorf("--timeout must be at least %s and --tick positive", 2*DefaultEvery)
	}
	if *recoveryGrace < *timeout {
		return fmt.Errorf("--recovery-grace %s must be at least --timeout %s", *recoveryGrace, *timeout)
	}
	self := deploy.Instance{Stage: deploy.MasterStage, Index: *id}
	log := logFlags.Logger("master", stderr).With("instance", self.Name())
	creds, err := tlsFlags.Load(self.Name(), log)
	if err != nil {
		return err
	}

	var rt Runtime
	switch *runtimeName {
	case "local":
		if *processes == "" {
			return errors.New("--runtime local needs --processes (the address 'wololo local' writes to DIR/processes.addr)")
		}
		lr, err := NewLocalRuntime(*processes)
		if err != nil {
			return err
		}
		defer lr.Close()
		rt = lr
	case "docker":
		dr, err := NewDockerRuntime(*project, *dockerHost, *dockerAPIVersion)
		if err != nil {
			return err
		}
		defer dr.Close()
		rt = dr
	case "swarm":
		sr, err := NewSwarmRuntime(*project, *dockerHost, *dockerAPIVersion)
		if err != nil {
			return err
		}
		defer sr.Close()
		rt = sr
	default:
		return fmt.Errorf(`--runtime must be "local", "docker" or "swarm", got %q`, *runtimeName)
	}
	if *dataDir != "" {
		if err := os.MkdirAll(*dataDir, 0o700); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
	}
	resolver := deploy.HostResolver(top, *hosts)
	if *peers != "" {
		resolver = deploy.PeersResolver(*peers)
	}
	addr := *listen
	if addr == "" {
		addr = net.JoinHostPort("0.0.0.0", strconv.Itoa(top.Port(self)))
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	al, err := admin.Listen(*adminAddr, top.AdminPort(self))
	if err != nil {
		l.Close()
		return err
	}
	if al != nil {
		defer al.Close()
	}
	policy := DefaultPolicy
	policy.Timeout = *timeout - DefaultEvery
	policy.RecoveryGrace = *recoveryGrace
	m, err := New(Config{
		Self: *id, Topology: top, Listener: l, Resolver: resolver, Runtime: rt, RuntimeName: *runtimeName,
		DataDir: *dataDir, Tick: *tick, Policy: policy, Credentials: creds, Log: log, Admin: al, RPCLimits: rpcLimits,
	})
	if err != nil {
		l.Close()
		return err
	}
	err = m.Serve(ctx)
	if err != nil {
		log.Error("stopped on a fatal error", "error", err)
		return err
	}
	log.Info("stopped")
	return nil
}
