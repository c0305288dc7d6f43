package chaos

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/certs"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
	"github.com/wololo/wololo/services/ops/healthcheck"
	"github.com/wololo/wololo/services/roles/local"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/tools/compose"
)

// dockerTarget is the containers of one compose project, found by the
// labels the compose generator puts on them (the masters find them the
// same way). It only signals, pauses and inspects; it never starts a
// container: that is the masters' job.
//
// A swarm stack (swarm set) is the same to it: its tasks' containers carry
// the same labels on a one-node swarm, and a restart is a new container, so
// an instance is its running container (else its newest one) and its log
// is its containers' logs in order; its published ports are shifted by
// portShift.
type dockerTarget struct {
	cli       *client.Client
	project   string
	top       deploy.Topology
	host      string // where the published ports answer
	tlsDir    string // the deployment's certificates ("": --insecure)
	swarm     bool
	portShift int // published port - the topology's port

	mu     sync.Mutex
	starts map[string]map[string]bool // instance -> StartedAt values seen
	deaths map[string][]time.Time     // instance -> when its container died (watchDeaths)
	kills  map[string][]time.Time     // instance -> SIGKILLs sent and not yet seen die

	// The log check reads the masters' logs from since on; preface holds
	// a line per master that was acting at since (its "acting started"
	// line is older).
	since   time.Time
	preface map[string]string
}

// watchDeaths records, until ctx ends, when each container of the
// project dies (the engine's die events): container logs have no line for
// a SIGKILL, and the election log check needs to know when a killed
// master stopped.
func (d *dockerTarget) watchDeaths(ctx context.Context) {
	d.since, d.preface = time.Now().UTC(), map[string]string{}
	for _, v := range masterViews(ctx, d, time.Second) {
		if v.Err == nil && v.Role == "leader" && v.Acting {
			d.preface[v.Instance] = actingStartedLine(d.since, v)
		}
	}
	args := filters.NewArgs(filters.Arg("type", "container"), filters.Arg("event", "die"),
		filters.Arg("label", deploy.LabelProject+"="+d.project))
	msgs, errs := d.cli.Events(ctx, events.ListOptions{Filters: args})
	go func() {
		for {
			select {
			case m := <-msgs:
				name := m.Actor.Attributes[deploy.LabelInstance]
				d.mu.Lock()
				var at time.Time
				at, d.kills[name] = deathTime(d.kills[name], time.Unix(0, m.TimeNano).UTC())
				d.deaths[name] = append(d.deaths[name], at)
				d.mu.Unlock()
			case <-errs:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
}

// deathTime is when a container whose die event the engine stamped at
// event stopped: at a SIGKILL this tool sent it shortly before, if any (a
// SIGKILLed process runs no more code once the signal is sent; the engine
// reaps it and reports the death later, by 0.6 s on a loaded machine),
// else at the event. A kill stamped up to killSlack after the event is the
// same death (the call returned after the engine saw the exit); one more
// than killWindow before it is stale and dropped. It returns the kills left
// for later deaths.
func deathTime(kills []time.Time, event time.Time) (time.Time, []time.Time) {
	const killSlack, killWindow = time.Second, 5 * time.Second
	at := event
	var rest []time.Time
	for _, k := range kills {
		switch {
		case k.After(event.Add(killSlack)):
			rest = append(rest, k) // a later death's
		case k.Before(event.Add(-killWindow)):
			// stale: the death it caused was matched already
		case k.Before(at):
			at = k
		}
	}
	return at, rest
}

func newDockerTarget(project string, top deploy.Topology, host, tlsDir string) (*dockerTarget, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return &dockerTarget{cli: cli, project: project, top: top, host: host, tlsDir: tlsDir, starts: map[string]map[string]bool{}, deaths: map[string][]time.Time{}, kills: map[string][]time.Time{}}, nil
}

func (d *dockerTarget) Close() error { return d.cli.Close() }

func (d *dockerTarget) Topology() deploy.Topology { return d.top }

// Addr is the published loopback port: the gateway's public one and the
// masters' (internal plane, for Status).
func (d *dockerTarget) Addr(instance string) string {
	in, err := deploy.ParseInstance(instance)
	if err != nil {
		return ""
	}
	port := d.top.Port(in)
	if in.Stage == d.top.Gateway().Name {
		port = d.top.PublicPort()
	}
	return net.JoinHostPort(d.host, strconv.Itoa(port+d.portShift))
}

// ClientTLS implements target from the deployment's certificate directory.
func (d *dockerTarget) ClientTLS(name string) (*tls.Config, error) {
	if d.tlsDir == "" {
		return nil, nil
	}
	creds, err := pki.Load(d.tlsDir, name)
	if err != nil {
		return nil, err
	}
	return creds.GatewayTLS(tlsflags.Host(d.Addr(d.top.Gateway().Name + "-0"))), nil
}

// OperatorTLS implements target.
func (d *dockerTarget) OperatorTLS(instance string) (*tls.Config, error) {
	if d.tlsDir == "" {
		return nil, nil
	}
	creds, err := pki.Load(d.tlsDir, certs.OperatorName)
	if err != nil {
		return nil, err
	}
	return creds.ClientTLS(instance), nil
}

// containers lists an instance's containers (every instance's if
// instance is ""), newest first.
func (d *dockerTarget) containers(ctx context.Context, instance string) ([]container.Summary, error) {
	args := filters.NewArgs(filters.Arg("label", deploy.LabelProject+"="+d.project))
	if instance != "" {
		args.Add("label", deploy.LabelInstance+"="+instance)
	}
	cs, err := d.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Created > cs[j].Created })
	return cs, nil
}

// current is an instance's container: the one compose made, or of a
// swarm stack's tasks the running one, else the newest.
func current(cs []container.Summary, swarm bool) (container.Summary, error) {
	switch {
	case len(cs) == 0:
		return container.Summary{}, errors.New("no container")
	case !swarm && len(cs) > 1:
		return container.Summary{}, fmt.Errorf("%d containers, want 1", len(cs))
	}
	for _, c := range cs {
		if c.State == container.StateRunning || c.State == container.StatePaused {
			return c, nil
		}
	}
	return cs[0], nil
}

func (d *dockerTarget) inspect(ctx context.Context, instance string) (container.InspectResponse, error) {
	cs, err := d.containers(ctx, instance)
	if err != nil {
		return container.InspectResponse{}, err
	}
	c, err := current(cs, d.swarm)
	if err != nil {
		return container.InspectResponse{}, fmt.Errorf("project %s, instance %s: %w", d.project, instance, err)
	}
	in, err := d.cli.ContainerInspect(ctx, c.ID)
	if d.swarm && cerrdefs.IsNotFound(err) {
		// Listed, then gone before the inspect: the task's container is
		// being replaced, as in Signal.
		return in, fmt.Errorf("%s: %w (%v)", instance, local.ErrNotRunning, err)
	}
	return in, err
}

// Signal implements target: SIGKILL through the engine (the null signal
// only looks).
func (d *dockerTarget) Signal(instance string, sig syscall.Signal) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := d.inspect(ctx, instance)
	if err != nil {
		return 0, err
	}
	if c.State == nil || !c.State.Running {
		return 0, fmt.Errorf("%s: %w", instance, local.ErrNotRunning)
	}
	if sig != 0 {
		// Held across the call, so that watchDeaths handles the container's
		// die event (which can come before the call returns, as it does on
		// a swarm node) only once the kill is recorded: else it would take
		// the death at the event, and match this kill to the next death.
		d.mu.Lock()
		err := d.cli.ContainerKill(ctx, c.ID, strconv.Itoa(int(sig)))
		if err == nil && sig == syscall.SIGKILL {
			// The engine has sent the signal when the call returns.
			d.kills[instance] = append(d.kills[instance], time.Now().UTC())
		}
		d.mu.Unlock()
		if d.swarm && cerrdefs.IsNotFound(err) {
			// The task's container went away meanwhile: it is being
			// replaced.
			return 0, fmt.Errorf("%s: %w (%v)", instance, local.ErrNotRunning, err)
		}
		if err != nil {
			return 0, fmt.Errorf("kill %s: %w", instance, err)
		}
	}
	return c.State.Pid, nil
}

// LoseDisk SIGKILLs an instance's container and empties its data volume
// before the masters start it again, as a node whose disk does not come
// back. The volume is emptied through its directory on this machine
// (the engine's Mountpoint): a remote engine's cannot be, and that is an
// error. A container the masters started again before the volume was
// empty (it may have read part of it) is killed and emptied again.
func (d *dockerTarget) LoseDisk(instance string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := d.inspect(ctx, instance)
	if err != nil {
		return 0, err
	}
	dir := ""
	for _, m := range c.Mounts {
		if m.Destination == compose.DataDir && m.Name != "" {
			v, err := d.cli.VolumeInspect(ctx, m.Name)
			if err != nil {
				return 0, fmt.Errorf("lose %s's disk: %w", instance, err)
			}
			dir = v.Mountpoint
		}
	}
	if dir == "" {
		return 0, fmt.Errorf("lose %s's disk: no named volume at %s", instance, compose.DataDir)
	}
	if _, err := os.Stat(dir); err != nil {
		return 0, fmt.Errorf("lose %s's disk: its volume's directory is not on this machine (a remote engine?): %w", instance, err)
	}
	pid := 0
	for attempt := 0; ; attempt++ {
		killed := time.Now()
		p, err := d.Signal(instance, syscall.SIGKILL)
		if err != nil && attempt == 0 {
			return 0, err
		}
		if attempt == 0 {
			pid = p
		}
		if err := emptyDir(dir); err != nil {
			return pid, fmt.Errorf("lose %s's disk: %w", instance, err)
		}
		wiped := time.Now()
		// Started again while the volume was being emptied: it may have
		// read part of the old store.
		again, err := d.inspect(ctx, instance)
		if err != nil || again.State == nil || !again.State.Running || attempt == 3 {
			return pid, nil
		}
		if started, err := time.Parse(time.RFC3339Nano, again.State.StartedAt); err != nil || started.Before(killed) || started.After(wiped) {
			return pid, nil
		}
	}
}

// emptyDir deletes everything in dir, not dir itself.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// Pause freezes an instance's container (docker pause).
func (d *dockerTarget) Pause(instance string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := d.inspect(ctx, instance)
	if err != nil {
		return 0, err
	}
	if c.State == nil || !c.State.Running || c.State.Paused {
		return 0, fmt.Errorf("%s: %w", instance, local.ErrNotRunning)
	}
	if err := d.cli.ContainerPause(ctx, c.ID); err != nil {
		return 0, fmt.Errorf("pause %s: %w", instance, err)
	}
	return c.State.Pid, nil
}

// Cut disconnects an instance's container from every network it is on
// (docker network disconnect): the process runs on, cut off. restore
// connects it again under the same DNS aliases.
func (d *dockerTarget) Cut(instance string) (restore func() error, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := d.inspect(ctx, instance)
	if err != nil {
		return nil, err
	}
	if c.NetworkSettings == nil || len(c.NetworkSettings.Networks) == 0 {
		return nil, fmt.Errorf("%s is on no network", instance)
	}
	type link struct {
		id      string
		aliases []string
	}
	var cut []link
	for name, ep := range c.NetworkSettings.Networks {
		if err := d.cli.NetworkDisconnect(ctx, ep.NetworkID, c.ID, true); err != nil {
			return nil, fmt.Errorf("disconnect %s from %s: %w", instance, name, err)
		}
		cut = append(cut, link{ep.NetworkID, ep.Aliases})
	}
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, l := range cut {
			if err := d.cli.NetworkConnect(ctx, l.id, c.ID, &network.EndpointSettings{Aliases: l.aliases}); err != nil {
				return fmt.Errorf("reconnect %s: %w", instance, err)
			}
		}
		return nil
	}, nil
}

// MasterLog is a master's whole container log, with a line in the local
// runner's format marking each death watchDeaths saw, so that the log
// check reads both kinds of deployment alike.
func (d *dockerTarget) MasterLog(instance string) ([]byte, error) {
	b, err := d.logs(instance, "all")
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	deaths := append([]time.Time(nil), d.deaths[instance]...)
	d.mu.Unlock()
	return withExitMarkers(append([]byte(d.preface[instance]), b...), instance, deaths), nil
}

// actingStartedLine is the line the master of v would have logged, with
// --log-json, had it started to act at t.
func actingStartedLine(t time.Time, v MasterView) string {
	var b bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Name: "master", Output: &b, JSONFormat: true, TimeFn: func() time.Time { return t }})
	log.With("instance", v.Instance).Info("acting started", "id", v.ID, "term", v.Term)
	return b.String()
}

// jsonLineTime is the @timestamp of an hclog JSON line.
func jsonLineTime(line []byte) (time.Time, bool) {
	if len(line) == 0 || line[0] != '{' {
		return time.Time{}, false
	}
	var l struct {
		Timestamp string `json:"@timestamp"`
	}
	if json.Unmarshal(line, &l) != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, l.Timestamp)
	return t, err == nil
}

// withExitMarkers inserts, before the first line logged after each death,
// a runner marker "pid 0 of X exited (container died)". Only the masters'
// JSON lines carry a time it reads; any other line keeps the previous
// one's.
func withExitMarkers(log []byte, instance string, deaths []time.Time) []byte {
	sort.Slice(deaths, func(i, j int) bool { return deaths[i].Before(deaths[j]) })
	var out bytes.Buffer
	marker := func(t time.Time) {
		fmt.Fprintf(&out, "%s%s: pid 0 of %s exited (container died) after 0s\n", runnerMarker, t.Format(time.RFC3339Nano), instance)
	}
	for _, line := range bytes.SplitAfter(log, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if at, ok := jsonLineTime(bytes.TrimSpace(line)); ok {
			for len(deaths) > 0 && !deaths[0].After(at) {
				marker(deaths[0])
				deaths = deaths[1:]
			}
		}
		out.Write(line)
		if line[len(line)-1] != '\n' {
			out.WriteByte('\n')
		}
	}
	for _, t := range deaths {
		marker(t)
	}
	return out.Bytes()
}

// ElectionDocker runs the election chaos tool against a deployed compose
// project's masters: the same kills, failover timing and checks as
// Election; with o.Partition it ends by cutting the leader off the network
// with docker network disconnect, and checks that the others take over
// and that at most one side acts.
func ElectionDocker(ctx context.Context, o ElectionOptions, top deploy.Topology, project, host, tlsDir string) (*ElectionReport, error) {
	tgt, err := newDockerTarget(project, top, host, tlsDir)
	if err != nil {
		return nil, err
	}
	defer tgt.Close()
	return electionDocker(ctx, o, tgt)
}

// ElectionSwarm is ElectionDocker against a swarm stack deployed on this
// (one-node) swarm (make swarm-up), its ports published from portBase; a
// partition is not supported (a task's container cannot be disconnected
// from the stack's network).
func ElectionSwarm(ctx context.Context, o ElectionOptions, top deploy.Topology, project, host, tlsDir string, portBase int) (*ElectionReport, error) {
	if o.Partition > 0 {
		return nil, errors.New("chaos election: --partition is not supported against a swarm stack")
	}
	tgt, err := newSwarmTarget(project, top, host, tlsDir, portBase)
	if err != nil {
		return nil, err
	}
	defer tgt.Close()
	return electionDocker(ctx, o, tgt)
}

// newSwarmTarget is the target of a swarm stack whose gateway's public
// port is published at portBase.
func newSwarmTarget(project string, top deploy.Topology, host, tlsDir string, portBase int) (*dockerTarget, error) {
	tgt, err := newDockerTarget(project, top, host, tlsDir)
	if err != nil {
		return nil, err
	}
	tgt.swarm, tgt.portShift = true, portBase-top.PublicPort()
	return tgt, nil
}

func electionDocker(ctx context.Context, o ElectionOptions, tgt *dockerTarget) (*ElectionReport, error) {
	top, project := tgt.top, tgt.project
	o.Masters = top.Masters
	if err := o.defaults(); err != nil {
		return nil, err
	}
	gateway := tgt.Addr(top.Gateway().Name + "-0")
	if err := tgt.checkGateway(ctx); err != nil {
		return nil, fmt.Errorf("chaos election: the gateway of project %s does not answer (is it up? %s): %w", project, tgt.upHint(), err)
	}
	size, work, err := prepare(o.Matches, o.Players, o.TempDir, "wololo-chaos-election-docker-")
	if err != nil {
		return nil, fmt.Errorf("chaos election: %w", err)
	}
	rep := &ElectionReport{DataDir: work}
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	tgt.watchDeaths(watchCtx)
	fmt.Fprintf(o.Stdout, "chaos election: project %s, seed %d, %d kills of the leading master among %d; partition of the leader: %s\n",
		project, o.Seed, o.Kills, o.Masters, o.Partition)
	stop := func() { rep.Processes = tgt.Processes() }
	return electionDrive(ctx, o, tgt, gateway, rep, stop, size, tgt.MasterLog,
		tgt.logsAt())
}

// Processes implements target. A container's restarts are the starts
// this target has seen beyond its first (Docker counts only its own
// restart policy's).
func (d *dockerTarget) Processes() []local.Proc {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	all, err := d.containers(ctx, "")
	if err != nil {
		return nil
	}
	byInstance := map[string][]container.Summary{}
	for _, c := range all {
		name := c.Labels[deploy.LabelInstance]
		byInstance[name] = append(byInstance[name], c)
	}
	var cs []container.Summary
	for _, l := range byInstance {
		if c, err := current(l, d.swarm); err == nil {
			cs = append(cs, c)
		}
	}
	var out []local.Proc
	for _, s := range cs {
		c, err := d.cli.ContainerInspect(ctx, s.ID)
		if err != nil || c.State == nil {
			continue
		}
		name := s.Labels[deploy.LabelInstance]
		p := local.Proc{Instance: name, PID: c.State.Pid, Alive: c.State.Running && !c.State.Paused, LogFile: "docker logs " + c.Name[1:]}
		if !c.State.Running {
			p.Exit = fmt.Sprintf("%s (exit code %d)", c.State.Status, c.State.ExitCode)
		}
		if t, err := time.Parse(time.RFC3339Nano, c.State.StartedAt); err == nil {
			p.Started = t
		}
		d.mu.Lock()
		if d.starts[name] == nil {
			d.starts[name] = map[string]bool{}
		}
		// A swarm task's container is created before it starts: one not
		// started yet is no start.
		if !p.Started.IsZero() && p.Started.Year() > 1 {
			d.starts[name][c.State.StartedAt] = true
		}
		p.Restarts = max(len(d.starts[name])-1, 0)
		d.mu.Unlock()
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Instance < out[j].Instance })
	return out
}

// LogTail implements target.
func (d *dockerTarget) LogTail(instance string, lines int) string {
	b, err := d.logs(instance, strconv.Itoa(lines))
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// logs is an instance's container log ("all" lines, or the last n); of a
// swarm stack's instance, all its tasks' containers' logs, oldest first.
func (d *dockerTarget) logs(instance, tail string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !d.swarm || tail != "all" {
		c, err := d.inspect(ctx, instance)
		if err != nil {
			return nil, err
		}
		return d.containerLogs(ctx, instance, c.ID, tail)
	}
	cs, err := d.containers(ctx, instance)
	if err != nil {
		return nil, err
	}
	var all []byte
	for i := len(cs) - 1; i >= 0; i-- {
		b, err := d.containerLogs(ctx, instance, cs[i].ID, tail)
		if err != nil {
			return nil, err
		}
		all = append(all, b...)
	}
	return all, nil
}

func (d *dockerTarget) containerLogs(ctx context.Context, instance, id, tail string) ([]byte, error) {
	opts := container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: tail}
	if !d.since.IsZero() {
		opts.Since = d.since.Format(time.RFC3339Nano)
	}
	rc, err := d.cli.ContainerLogs(ctx, id, opts)
	if err != nil {
		return nil, fmt.Errorf("logs of %s: %w", instance, err)
	}
	defer rc.Close()
	var buf bytes.Buffer
	if _, err := stdcopy.StdCopy(&buf, &buf, rc); err != nil {
		return nil, fmt.Errorf("logs of %s: %w", instance, err)
	}
	return buf.Bytes(), nil
}

// Docker runs the harness against a deployed compose project (`make up`):
// the same job, schedule and check as Local, with containers killed
// through the Docker Engine API, the leading master among them, and one
// worker frozen with docker pause until the masters notice it and
// restart it. It starts and stops nothing: the masters do every restart.
func Docker(ctx context.Context, o Options, project, host, tlsDir string) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	tgt, err := newDockerTarget(project, o.Topology, host, tlsDir)
	if err != nil {
		return nil, err
	}
	defer tgt.Close()
	return runDocker(ctx, o, tgt)
}

// Swarm is Docker against a swarm stack deployed on this (one-node) swarm
// (make swarm-up), its ports published from portBase: the tasks'
// containers are killed and paused alike, and the masters replace them
// with forced service updates.
func Swarm(ctx context.Context, o Options, project, host, tlsDir string, portBase int) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	tgt, err := newSwarmTarget(project, o.Topology, host, tlsDir, portBase)
	if err != nil {
		return nil, err
	}
	defer tgt.Close()
	return runDocker(ctx, o, tgt)
}

func runDocker(ctx context.Context, o Options, tgt *dockerTarget) (*Report, error) {
	project := tgt.project
	if o.Topology.Masters == 0 {
		return nil, errors.New("chaos docker: the topology has no masters, so nothing would restart the killed containers")
	}
	gateway := tgt.Addr(o.Topology.Gateway().Name + "-0")
	if err := tgt.checkGateway(ctx); err != nil {
		return nil, fmt.Errorf("chaos docker: the gateway of project %s does not answer (is it up? %s): %w", project, tgt.upHint(), err)
	}
	want, err := o.expect()
	if err != nil {
		return nil, err
	}
	size, work, err := prepare(o.Matches, o.Players, o.TempDir, "wololo-chaos-docker-")
	if err != nil {
		return nil, err
	}
	rep := &Report{DataDir: work, Stages: map[string]int{}, Phases: map[string]int{},
		LogsAt: tgt.logsAt() + fmt.Sprintf(" (the containers of project %s)", project)}
	rng := newRNG(o.Seed)
	pre, post := plan(o.Topology, o.Kills, rng)
	rep.Planned = len(pre) + len(post)
	fmt.Fprintf(o.Stdout, "chaos: project %s, seed %d, %d kills planned (%d during the upload, %d after it), one worker paused\n",
		project, o.Seed, rep.Planned, len(pre), len(post))
	finish := func() {
		rep.Processes = tgt.Processes()
		for _, p := range rep.Processes {
			rep.Restarts += p.Restarts
		}
	}
	tgt.Processes() // remember every container's current start
	o.freeze = tgt
	return drive(ctx, o, want, tgt, gateway, rep, finish, size, pre, post, rng)
}

// checkGateway asks the gateway's public port for its health, over TLS
// verified with the deployment's CA when it has one.
func (d *dockerTarget) checkGateway(ctx context.Context) error {
	tlsConfig, err := d.ClientTLS(clientName)
	if err != nil {
		return err
	}
	return healthcheck.Check(ctx, d.Addr(d.top.Gateway().Name+"-0"), tlsConfig, 5*time.Second)
}

// upHint is the make target that deploys what the target expects.
func (d *dockerTarget) upHint() string {
	if d.swarm {
		return "make swarm-up"
	}
	return "make up"
}

// logsAt is the command that shows an instance's log.
func (d *dockerTarget) logsAt() string {
	if d.swarm {
		return fmt.Sprintf("docker service logs %s_<instance>", d.project)
	}
	return fmt.Sprintf("docker logs %s-<instance>", d.project)
}

// DefaultDockerTLSDir is where `make up` has `wololo certs` write the
// compose deployment's CA and certificates (the compose file's secrets).
const DefaultDockerTLSDir = "deploy/tls"
