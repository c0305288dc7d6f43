package local

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/atomicfile"
	"github.com/wololo/wololo/services/base/backoff"
	"github.com/wololo/wololo/services/cmdline/certs"
	"github.com/wololo/wololo/services/cmdline/logflags"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
)

// DefaultDataDir is where `wololo local` keeps its data, logs and peers
// file unless told otherwise.
const DefaultDataDir = "data/local"

// ErrNotRunning is returned when signalling an instance that has no live
// process (it is waiting to be restarted, or the cluster stopped).
var ErrNotRunning = errors.New("instance has no running process")

// Options describe a local cluster. Only Topology-less zero values have
// defaults; see each field.
type Options struct {
	// Binary is the wololo binary to run; os.Executable() if empty.
	Binary string
	// Topology to run; deploy.Default() if it has no stages.
	Topology deploy.Topology
	// DataDir holds DIR/X (the data directory of instance X), DIR/X.log,
	// DIR/peers.json and DIR/topology.json; DefaultDataDir if empty.
	DataDir string
	// BasePort replaces the topology's base_port when non-zero.
	BasePort int
	// FreePorts picks free loopback ports instead (for tests and the crash
	// harness): one per instance when the binary takes --peers, otherwise
	// a free run of consecutive ports.
	FreePorts bool
	// Log receives the runner's own events (starts, exits, restarts).
	Log hclog.Logger
	// ExtraArgs are appended to every graph process's flags.
	ExtraArgs []string
	// MasterArgs are appended to every master's flags: --log-json for a
	// tool that reads the masters' logs (the election chaos check).
	MasterArgs []string
	// Stdout, if set, also receives every line the children write,
	// prefixed with "[instance] ". The log files are written either way.
	Stdout io.Writer
	// LogJSON gives every child --log-json, and writes the runner's own
	// lines in each log file (start, exit) as JSON too, so that every
	// line of DIR/X.log is one JSON object.
	LogJSON bool
	// LogLevel is the children's --log-level; "info" if empty.
	LogLevel string
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL;
	// 10 s if zero.
	StopGrace time.Duration
	// ReadyTimeout bounds how long Start waits for every child to answer
	// its Status RPC; 60 s if zero.
	ReadyTimeout time.Duration
	// Restart is the restart policy; DefaultRestartPolicy's values where
	// zero.
	Restart RestartPolicy
	// Manual leaves restarts to someone else (the masters): a process that
	// dies stays down until Start is called for its instance.
	Manual bool
	// Insecure runs every process with --insecure (plain TCP, no
	// certificates); otherwise Start makes the CA and every certificate in
	// DIR/tls (see Certify) and the processes speak mutual TLS.
	Insecure bool
	// Control serves the ProcessService (see control.go) on a 0600 Unix
	// socket whose address is written to DIR/processes.addr, for the
	// masters.
	Control bool
	// Masters runs this many `wololo master` processes (master-1 ..
	// master-N, the topology's masters count is replaced by it) as children
	// too; it implies Manual and Control: the masters do every restart,
	// including each other's.
	Masters int
}

// Proc describes one process of the cluster.
type Proc struct {
	Instance string
	PID      int // the current process, or the last one if none is alive
	Alive    bool
	Replaced bool // a process Replace detached from its instance
	Restarts int  // times the runner restarted the instance
	Started  time.Time
	Addr     string
	DataDir  string
	LogFile  string
	// PeakRSS is this process's peak resident set in bytes: VmHWM from
	// /proc while it runs, its rusage once it exited.
	PeakRSS int64
	// MaxPeakRSS is the largest PeakRSS of every process the instance had.
	MaxPeakRSS int64
	// Exit describes how the last process ended ("" while it runs).
	Exit string
}

// Cluster is a running local cluster.
type Cluster struct {
	opts      Options
	log       hclog.Logger
	top       deploy.Topology
	dir       string
	peersPath string
	topoPath  string
	gateway   string // instance name of the gateway
	public    string // the gateway's public address, for clients
	tlsDir    string // "" when Insecure

	mu       sync.Mutex
	insts    map[string]*instance
	order    []string
	stopping bool
	stopCh   chan struct{}
	stopOnce sync.Once
	stopErr  error
	done     chan struct{}
	wg       sync.WaitGroup

	controlAddr    string
	controlStopped chan struct{} // closed once the ProcessService stopped
	lock           *dirLock      // the data directory's, released by Stop
}

type instance struct {
	name     string
	cmd      string // "gateway" or "worker"
	addr     string
	admin    string // the admin HTTP listener's address
	dataDir  string
	logPath  string
	cur      *proc // nil while down
	last     *proc
	replaced []*proc
	restarts int
	starts   int
	maxRSS   int64
	backoff  *backoff.Backoff
	startReq chan struct{} // Manual mode: a request to start the instance
	// loseDisk: the next start deletes the data directory first (LoseDisk).
	loseDisk bool
}

type proc struct {
	pid     int
	started time.Time
	logFrom int64 // where its output starts in the instance's log file
	done    chan struct{}
	// set before done is closed
	exited time.Time
	state  *os.ProcessState
	rss    int64 // peak RSS in bytes, from rusage
}

// Start writes the topology and peers files, starts every instance and
// waits until each answers on its address. Cancelling ctx stops the cluster
// gracefully (as Stop does).
//
// With FreePorts, a start that finds one of the ports it picked taken is
// made again on other free ports, up to freePortAttempts starts: a port
// is free when picked, but the kernel may hand it to any other socket of
// the machine (an outgoing connection's ephemeral port) before the
// child binds it, and such a start failed the crash harness's runs in
// CI. A port the user chose (BasePort, the topology's) is not retried.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	for attempt := 1; ; attempt++ {
		c, err := start(ctx, o)
		var taken *PortInUseError
		if err == nil || !o.FreePorts || !errors.As(err, &taken) || !taken.Ours || attempt == freePortAttempts {
			return c, err
		}
		if o.Log != nil {
			o.Log.Warn("a port picked free was taken before its process listened on it: starting again on other free ports", "port", taken.Addr, "whose", taken.What, "attempt", attempt+1, "of", freePortAttempts)
		}
	}
}

// freePortAttempts is how many starts Start makes on free ports.
const freePortAttempts = 3

// start is one Start on the ports o names or picks.
func start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the wololo binary: %w", err)
		}
		o.Binary = exe
	} else if strings.ContainsRune(o.Binary, filepath.Separator) {
		// A path like bin/wololo: the processes run in their own
		// directories, where it would name nothing.
		abs, err := filepath.Abs(o.Binary)
		if err != nil {
			return nil, fmt.Errorf("the wololo binary %s: %w", o.Binary, err)
		}
		o.Binary = abs
	}
	if len(o.Topology.Stages) == 0 {
		o.Topology = deploy.Default()
	}
	if err := o.Topology.Validate(); err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	if o.DataDir == "" {
		o.DataDir = DefaultDataDir
	}
	if o.Log == nil {
		o.Log = hclog.NewNullLogger()
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 10 * time.Second
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	if o.Masters < 0 {
		return nil, fmt.Errorf("masters must not be negative, got %d", o.Masters)
	}
	if o.Masters > 0 {
		o.Manual, o.Control = true, true
	}
	o.Topology.Masters = o.Masters
	dir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	// A data directory this start makes is removed again if it fails
	// before any process ran in it (a port taken): nothing is left
	// behind. One with a process's log in it is kept, for the log.
	_, statErr := os.Stat(dir)
	fresh, spawned := errors.Is(statErr, fs.ErrNotExist), false
	// Only this user reads the stores, logs and the ProcessService socket.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	// One runner per data directory (see LockFile); held until Stop.
	lock, err := lockDataDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	up := false
	defer func() {
		if !up {
			lock.release()
			if fresh && !spawned {
				os.RemoveAll(dir)
			}
		}
	}()
	c := &Cluster{
		opts: o, log: o.Log, top: o.Topology, dir: dir, lock: lock,
		peersPath: filepath.Join(dir, "peers.json"), topoPath: filepath.Join(dir, "topology.json"),
		insts: map[string]*instance{}, stopCh: make(chan struct{}), done: make(chan struct{}),
	}

	// Ports: the gateway's public one, then one per process.
	all := append(c.top.Instances(), c.top.MasterInstances()...)
	n := len(all)
	if o.BasePort != 0 {
		c.top.BasePort = o.BasePort
	}
	var free []int
	if o.FreePorts { // the public port, then a gRPC and an admin port per process
		if free, err = pickFreePorts(2*n + 1); err != nil {
			return nil, fmt.Errorf("%w", err)
		}
	}
	c.public = net.JoinHostPort("127.0.0.1", strconv.Itoa(c.top.PublicPort()))
	if free != nil {
		c.public, free = net.JoinHostPort("127.0.0.1", strconv.Itoa(free[0])), free[1:]
	}
	for i, in := range all {
		port, adminPort := c.top.Port(in), c.top.AdminPort(in)
		if free != nil {
			port, adminPort = free[i], free[n+i]
		}
		st, _ := c.top.Stage(in.Stage)
		ins := &instance{
			name: in.Name(), cmd: "worker",
			addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			admin:   net.JoinHostPort("127.0.0.1", strconv.Itoa(adminPort)),
			dataDir: filepath.Join(dir, in.Name()),
			logPath: filepath.Join(dir, in.Name()+".log"),
			backoff: newBackoff(o.Restart), startReq: make(chan struct{}, 1),
		}
		switch {
		case in.Stage == deploy.MasterStage:
			ins.cmd = "master"
		case st.Role == "gateway":
			ins.cmd = "gateway"
			c.gateway = ins.name
		}
		c.insts[ins.name] = ins
		c.order = append(c.order, ins.name)
	}
	if err := checkPorts(c.portUsesLocked()); err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	// The CA and the credentials once the ports are known free: a start
	// that fails on a port taken makes nothing.
	if !o.Insecure {
		c.tlsDir = filepath.Join(dir, "tls")
		if err := certs.Certify(o.Topology, certs.Options{Dir: c.tlsDir, Log: c.log}); err != nil {
			return nil, fmt.Errorf("%w", err)
		}
	}
	b, err := json.MarshalIndent(c.top, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	if err := os.WriteFile(c.topoPath, append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("write topology: %w", err)
	}
	if err := c.writePeersLocked(); err != nil {
		return nil, fmt.Errorf("%w", err)
	}

	// The masters need the ProcessService's address on their command line.
	if o.Control {
		if err := c.serveControl(); err != nil {
			return nil, fmt.Errorf("%w", err)
		}
	}

	// Children.
	first := map[string]*proc{}
	c.mu.Lock()
	spawned = true
	for _, name := range c.order {
		ins := c.insts[name]
		p, err := c.spawnLocked(ins)
		if err != nil {
			c.mu.Unlock()
			c.Stop()
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		ins.cur, first[name] = p, p
		c.wg.Add(1)
		go c.supervise(ins)
	}
	c.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
			c.log.Info("stopping the cluster", "reason", ctx.Err())
			c.Stop()
		case <-c.stopCh:
		}
	}()
	rctx, cancel := context.WithTimeout(ctx, o.ReadyTimeout)
	defer cancel()
	for _, name := range c.order {
		if err := c.waitInstance(rctx, name, first[name]); err != nil {
			c.Stop()
			return nil, fmt.Errorf("%w", err)
		}
	}
	up = true
	c.log.Info("cluster up", "processes", len(c.order), "gateway", c.GatewayAddr(), "dashboard", c.DashboardURL(), "data", c.dir, "tasks", tasksLine(c.top))
	return c, nil
}

// addrsLocked is every instance's current address.
func (c *Cluster) addrsLocked() map[string]string {
	m := map[string]string{}
	for name, ins := range c.insts {
		m[name] = ins.addr
	}
	return m
}

// writePeersLocked replaces the peers file with every instance's current
// address, atomically and durably.
func (c *Cluster) writePeersLocked() error {
	b, err := deploy.FormatPeers(c.addrsLocked())
	if err == nil {
		err = atomicfile.Write(c.peersPath, b, 0o644)
	}
	if err != nil {
		return fmt.Errorf("peers file %s: %w", c.peersPath, err)
	}
	return nil
}

// args are a child's command line.
func (c *Cluster) argsLocked(ins *instance) []string {
	args := []string{ins.cmd}
	extra := c.opts.ExtraArgs
	switch ins.cmd {
	case "master":
		in, _ := deploy.ParseInstance(ins.name)
		args = append(args, "--id", strconv.Itoa(in.Index), "--runtime", "local", "--processes", c.controlAddr)
		extra = c.opts.MasterArgs // ExtraArgs are the graph processes' flags
	case "worker":
		args = append(args, "--instance", ins.name)
	default:
		args = append(args, "--public", c.public)
	}
	args = append(args, "--topology", c.topoPath, "--listen", ins.addr, "--admin", ins.admin,
		"--data", ins.dataDir, "--peers", c.peersPath)
	args = append(args, c.tlsArgs()...)
	args = append(args, (&logflags.Flags{Level: c.opts.LogLevel, JSON: c.opts.LogJSON}).Args()...)
	return append(args, extra...)
}

// tlsArgs are every child's TLS flags.
func (c *Cluster) tlsArgs() []string {
	if c.tlsDir == "" {
		return []string{"--insecure"}
	}
	return []string{"--tls-dir", c.tlsDir}
}

// spawnLocked starts a process for ins and a goroutine that reaps it,
// on an empty data directory if ins lost its disk (LoseDisk).
func (c *Cluster) spawnLocked(ins *instance) (*proc, error) {
	lost := ins.loseDisk
	if lost {
		if err := os.RemoveAll(ins.dataDir); err != nil {
			return nil, fmt.Errorf("delete the data directory of %s: %w", ins.name, err)
		}
		ins.loseDisk = false
	}
	if err := os.MkdirAll(ins.dataDir, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(ins.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	var logFrom int64
	if fi, err := logf.Stat(); err == nil {
		logFrom = fi.Size()
	}
	args := c.argsLocked(ins)
	ins.starts++
	if lost {
		c.mark(logf, time.Now(), fmt.Sprintf("data directory %s deleted before start #%d: the disk of %s was lost", ins.dataDir, ins.starts, ins.name), "disk lost", "instance", ins.name, "data", ins.dataDir)
	}
	command := filepath.Base(c.opts.Binary) + " " + strings.Join(args, " ")
	c.mark(logf, time.Now(), fmt.Sprintf("start #%d of %s: %s", ins.starts, ins.name, command), "start", "instance", ins.name, "start", ins.starts, "command", command)
	cmd := exec.Command(c.opts.Binary, args...)
	cmd.Dir = c.dir
	var out io.Writer = logf
	if c.opts.Stdout != nil {
		out = &teeWriter{file: logf, prefix: "[" + ins.name + "] ", to: c.opts.Stdout}
	}
	cmd.Stdout, cmd.Stderr = out, out
	// Own process group: a Ctrl-C in the terminal reaches the runner only,
	// which stops the children in order. Pdeathsig: a runner that dies
	// (even by SIGKILL) takes its children with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		c.mark(logf, time.Time{}, fmt.Sprintf("start failed: %v", err), "start failed", "instance", ins.name, "error", err)
		logf.Close()
		return nil, err
	}
	p := &proc{pid: cmd.Process.Pid, started: time.Now(), logFrom: logFrom, done: make(chan struct{})}
	ins.last = p
	go func() {
		err := cmd.Wait()
		p.exited = time.Now()
		p.state = cmd.ProcessState
		if p.state != nil {
			if ru, ok := p.state.SysUsage().(*syscall.Rusage); ok {
				p.rss = ru.Maxrss * 1024 // kilobytes on Linux
			}
		}
		if tw, ok := out.(*teeWriter); ok {
			tw.flush()
		}
		how, uptime := describeExit(p.state, err), p.exited.Sub(p.started).Round(time.Millisecond)
		c.mark(logf, p.exited, fmt.Sprintf("pid %d of %s exited (%s) after %s", p.pid, ins.name, how, uptime), "exited", "instance", ins.name, "pid", p.pid, "how", how, "uptime", uptime)
		logf.Close()
		c.mu.Lock()
		ins.maxRSS = max(ins.maxRSS, p.rss)
		c.mu.Unlock()
		close(p.done)
	}()
	c.log.Debug("started", "instance", ins.name, "pid", p.pid, "addr", ins.addr)
	return p, nil
}

// mark writes one of the runner's own lines into an instance's log file:
// "---- wololo local AT: TEXT" (no time if at is zero; tools/chaos reads
// these), or with LogJSON an hclog JSON line of msg and its keys.
func (c *Cluster) mark(w io.Writer, at time.Time, text, msg string, kv ...any) {
	if !c.opts.LogJSON {
		if at.IsZero() {
			fmt.Fprintf(w, "---- wololo local: %s\n", text)
		} else {
			fmt.Fprintf(w, "---- wololo local %s: %s\n", at.Format(time.RFC3339Nano), text)
		}
		return
	}
	if at.IsZero() {
		at = time.Now()
	}
	hclog.New(&hclog.LoggerOptions{Name: "local", Output: w, JSONFormat: true, TimeFn: func() time.Time { return at }}).Info(msg, kv...)
}

func describeExit(st *os.ProcessState, err error) string {
	if st == nil {
		return fmt.Sprintf("wait: %v", err)
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	return "exit status " + strconv.Itoa(st.ExitCode())
}

// supervise restarts ins whenever its process dies, until the cluster stops.
func (c *Cluster) supervise(ins *instance) {
	defer c.wg.Done()
	for {
		c.mu.Lock()
		if c.stopping {
			c.mu.Unlock()
			return
		}
		p := ins.cur
		if p == nil {
			var err error
			if p, err = c.spawnLocked(ins); err != nil {
				delay := ins.backoff.Failed(time.Now(), 0).Delay
				c.mu.Unlock()
				c.log.Error("cannot start", "instance", ins.name, "error", err, "retry-in", delay)
				if !c.sleep(delay) {
					return
				}
				continue
			}
			ins.cur = p
			ins.restarts++
			c.log.Info("restarted", "instance", ins.name, "pid", p.pid, "restarts", ins.restarts)
		}
		c.mu.Unlock()

		<-p.done

		c.mu.Lock()
		if ins.cur != p { // Replace put a new process in its place: follow that one
			c.mu.Unlock()
			continue
		}
		ins.cur = nil
		if c.stopping {
			c.mu.Unlock()
			return
		}
		if c.opts.Manual {
			c.mu.Unlock()
			c.log.Warn("process died; waiting to be told to start it", "instance", ins.name, "pid", p.pid, "how", describeExit(p.state, nil))
			select {
			case <-ins.startReq:
				continue
			case <-c.stopCh:
				return
			}
		}
		uptime := p.exited.Sub(p.started)
		d := ins.backoff.Failed(p.exited, uptime)
		delay, loop, recent := restartDelay(d), d.CrashLoop, d.Recent
		c.mu.Unlock()
		exit := describeExit(p.state, nil)
		if loop {
			c.log.Error("CRASH LOOP: instance keeps dying; restarting at the maximum backoff", "instance", ins.name, "deaths", recent, "window", ins.backoff.Policy().LoopWindow, "last", exit, "retry-in", delay, "log", ins.logPath)
		} else {
			c.log.Warn("process died", "instance", ins.name, "pid", p.pid, "how", exit, "uptime", uptime.Round(time.Millisecond), "restart-in", delay)
		}
		if !c.sleep(delay) {
			return
		}
	}
}

// sleep waits d unless the cluster stops first (then it returns false).
func (c *Cluster) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.stopCh:
		return false
	}
}

// WaitReady waits until every instance's current process answers its
// Status RPC under its own name.
func (c *Cluster) WaitReady(ctx context.Context) error {
	for _, name := range c.order {
		if err := c.WaitInstance(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// WaitInstance waits until the instance's current process answers its
// Status RPC under its own name and pid, done recovering from its store.
func (c *Cluster) WaitInstance(ctx context.Context, name string) error {
	return c.waitInstance(ctx, name, nil)
}

// waitInstance is WaitInstance. At the start, first is the process Start
// started for the instance: the wait then fails at once when that process
// exits by itself (a port taken is named) or another process answers on
// its address, instead of waiting for ReadyTimeout or taking another
// cluster's answer for its own.
func (c *Cluster) waitInstance(ctx context.Context, name string, first *proc) error {
	var lastErr error
	for {
		c.mu.Lock()
		ins, ok := c.insts[name]
		var addr string
		pid := 0
		if ok {
			addr = ins.addr
			if ins.cur != nil {
				pid = ins.cur.pid
			}
		}
		stopping := c.stopping
		c.mu.Unlock()
		if !ok {
			return fmt.Errorf("no instance %q", name)
		}
		if stopping {
			return errors.New("the cluster is stopping")
		}
		if pid == 0 {
			lastErr = errors.New("no process of it is running")
		} else if lastErr = c.probe(ctx, addr, name, pid); lastErr == nil {
			return nil
		}
		if first != nil {
			if foreign := (*foreignError)(nil); errors.As(lastErr, &foreign) {
				return fmt.Errorf("%s: %w", name, lastErr)
			}
			if err := c.exitedAtStart(ins, first); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s at %s is not answering (%v); the end of %s:\n%s", name, addr, lastErr, c.insts[name].logPath, c.LogTail(name, 15))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// exitedAtStart is the error of an instance whose first process exited by
// itself before it answered (nil while it runs, or if it was killed by a
// signal: a master restarting it). A port that was taken is named.
func (c *Cluster) exitedAtStart(ins *instance, p *proc) error {
	select {
	case <-p.done:
	default:
		return nil
	}
	if p.state != nil {
		if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return nil
		}
	}
	how := describeExit(p.state, nil)
	out := c.logSince(ins, p, 15)
	if addr := portTakenIn(out); addr != "" {
		c.mu.Lock()
		inUse := portInUse(c.portUsesLocked(), addr)
		c.mu.Unlock()
		return fmt.Errorf("%s exited (%s) at start: %w", ins.name, how, inUse)
	}
	return fmt.Errorf("%s exited (%s) before it answered; the end of %s:\n%s", ins.name, how, ins.logPath, out)
}

// logSince is the last lines process p wrote to its instance's log file.
func (c *Cluster) logSince(ins *instance, p *proc, lines int) string {
	f, err := os.Open(ins.logPath)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, p.logFrom, 1<<40))
	if err != nil {
		return err.Error()
	}
	return tail(b, lines)
}

// portUsesLocked is every address the cluster listens on, and whose it is.
func (c *Cluster) portUsesLocked() []portUse {
	uses := []portUse{{c.public, "the gateway's public port"}}
	for _, name := range c.order {
		ins := c.insts[name]
		uses = append(uses, portUse{ins.addr, name + "'s gRPC port"}, portUse{ins.admin, name + "'s admin port"})
	}
	return uses
}

// foreignError: a process other than the one this runner started answers
// on an instance's address.
type foreignError struct {
	addr, instance string // the address, and the instance it answers as
	pid, want      int64
}

func (e *foreignError) Error() string {
	return fmt.Sprintf("%s is answered by pid %d (as %s), not by pid %d that this runner started: another process holds the port (another wololo local?)", e.addr, e.pid, e.instance, e.want)
}

// probe asks addr's Status whether it is instance name's process pid, done
// recovering.
func (c *Cluster) probe(ctx context.Context, addr, name string, pid int) error {
	tlsConfig, err := c.OperatorTLS(name)
	if err != nil {
		return err
	}
	conn, err := rpc.NewClient(addr, tlsConfig)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	r, err := wololov1.NewStatusClient(conn).Get(ctx, &wololov1.GetRequest{})
	if err != nil {
		return err
	}
	if r.Pid != int64(pid) {
		return &foreignError{addr: addr, instance: r.Instance, pid: r.Pid, want: int64(pid)}
	}
	if r.Instance != name {
		return fmt.Errorf("%s answers as %q", addr, r.Instance)
	}
	if r.Recovering {
		return fmt.Errorf("%s is recovering from its store", name)
	}
	return nil
}

// LogTail is the last lines of an instance's log file.
func (c *Cluster) LogTail(name string, lines int) string {
	b, err := os.ReadFile(filepath.Join(c.dir, name+".log"))
	if err != nil {
		return err.Error()
	}
	return tail(b, lines)
}

// GatewayAddr is the address clients use: the gateway's public port.
func (c *Cluster) GatewayAddr() string { return c.public }

// TLSDir is where the CA and the certificates are ("" when Insecure).
func (c *Cluster) TLSDir() string { return c.tlsDir }

// ClientTLS is the TLS config of the client credential name (made by
// Certify: "client"; others with `wololo certs client`) for the gateway's
// public port; nil when Insecure.
func (c *Cluster) ClientTLS(name string) (*tls.Config, error) {
	if c.tlsDir == "" {
		return nil, nil
	}
	creds, err := pki.Load(c.tlsDir, name)
	if err != nil {
		return nil, err
	}
	return creds.GatewayTLS(tlsflags.Host(c.public)), nil
}

// OperatorTLS is the TLS config for calling an instance's Status (internal
// plane) with the operator credential; nil when Insecure.
func (c *Cluster) OperatorTLS(instance string) (*tls.Config, error) {
	if c.tlsDir == "" {
		return nil, nil
	}
	creds, err := pki.Load(c.tlsDir, certs.OperatorName)
	if err != nil {
		return nil, err
	}
	return creds.ClientTLS(instance), nil
}

// AdminAddr is an instance's admin HTTP listener (/metrics), "" if
// unknown. It keeps its port across restarts; Replace gives it another.
func (c *Cluster) AdminAddr(instance string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ins, ok := c.insts[instance]; ok {
		return ins.admin
	}
	return ""
}

// DashboardURL is the gateway's web page of the whole deployment, with the
// operator's token in it (services/ops/admin: the page is the operator's
// only), as a browser opens it.
func (c *Cluster) DashboardURL() string {
	u := "http://" + c.AdminAddr(c.gateway) + "/"
	if token := c.OperatorToken(); token != "" {
		u += "?token=" + url.QueryEscape(token)
	}
	return u
}

// OperatorToken is the operator's bearer token for the admin listeners
// (operator.token in TLSDir); "" when Insecure, or if it cannot be read.
func (c *Cluster) OperatorToken() string {
	if c.tlsDir == "" {
		return ""
	}
	token, err := pki.LoadToken(c.tlsDir, certs.OperatorName)
	if err != nil {
		return ""
	}
	return token
}

// Addr is an instance's current address ("" if unknown).
func (c *Cluster) Addr(instance string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ins, ok := c.insts[instance]; ok {
		return ins.addr
	}
	return ""
}

// Instances lists every instance name, in topology order.
func (c *Cluster) Instances() []string { return append([]string(nil), c.order...) }

// Topology is the topology the children run (with the ports in use).
func (c *Cluster) Topology() deploy.Topology { return c.top }

// DataDir is the cluster's absolute data directory.
func (c *Cluster) DataDir() string { return c.dir }

// PeersFile is the path of the peers file.
func (c *Cluster) PeersFile() string { return c.peersPath }

// LogFile is the path of an instance's log file.
func (c *Cluster) LogFile(instance string) string { return filepath.Join(c.dir, instance+".log") }

// StartInstance asks for a stopped instance to be started (Manual mode;
// in the default mode the runner restarts by itself). It reports whether
// the instance was down.
func (c *Cluster) StartInstance(instance string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ins, ok := c.insts[instance]
	if !ok {
		return false, fmt.Errorf("no instance %q", instance)
	}
	if c.stopping {
		return false, errors.New("the cluster is stopping")
	}
	if p := ins.cur; p != nil {
		select {
		case <-p.done:
			// Dead, and its supervise goroutine has not taken note yet
			// (Processes already lists it exited): it is down, and that
			// goroutine waits for this request.
		default:
			return false, nil
		}
	}
	select {
	case ins.startReq <- struct{}{}:
	default: // a request is already pending
	}
	return true, nil
}

// Kill sends sig to the current process of the instance.
func (c *Cluster) Kill(instance string, sig syscall.Signal) error {
	_, err := c.Signal(instance, sig)
	return err
}

// Signal sends sig to the current process of the instance and returns its
// pid; ErrNotRunning if the instance is down (waiting for its restart).
func (c *Cluster) Signal(instance string, sig syscall.Signal) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, p, err := c.runningLocked(instance)
	if err != nil {
		return 0, err
	}
	// The process is not reaped before done closes, so its pid cannot have
	// been reused.
	if err := syscall.Kill(p.pid, sig); err != nil {
		return 0, fmt.Errorf("signal %s (pid %d): %w", instance, p.pid, err)
	}
	return p.pid, nil
}

// runningLocked is the instance and its current process, or an error
// wrapping ErrNotRunning while it is down (or the cluster stops).
func (c *Cluster) runningLocked(name string) (*instance, *proc, error) {
	ins, ok := c.insts[name]
	if !ok {
		return nil, nil, fmt.Errorf("no instance %q", name)
	}
	p := ins.cur
	if p == nil || c.stopping {
		return nil, nil, fmt.Errorf("%s: %w", name, ErrNotRunning)
	}
	select {
	case <-p.done:
		return nil, nil, fmt.Errorf("%s: %w", name, ErrNotRunning)
	default:
	}
	return ins, p, nil
}

// LoseDisk plays the loss of an instance's machine: it SIGKILLs the
// instance's process and has its next start (the supervisor's, or the
// masters') begin on an empty data directory, as a process restarted on
// a new node or a new volume would. It returns the killed pid, or an
// error wrapping ErrNotRunning while the instance is down (its disk is
// then left as it is).
func (c *Cluster) LoseDisk(instance string) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ins, p, err := c.runningLocked(instance)
	if err != nil {
		return 0, err
	}
	if ins.cmd == "master" {
		return 0, fmt.Errorf("%s: a master's disk is not to be lost here (it restarts the others)", instance)
	}
	ins.loseDisk = true // before the kill: the restart it causes starts empty
	if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil {
		ins.loseDisk = false
		return 0, fmt.Errorf("kill %s (pid %d): %w", instance, p.pid, err)
	}
	return p.pid, nil
}

// Replace starts a new process for the instance on a new free port with
// newDataDir (the instance's current data directory if empty), points the
// peers file at it and supervises it from now on, without touching the old
// process: the caller may have stopped it (SIGSTOP) to play a zombie. Stop
// kills replaced processes.
func (c *Cluster) Replace(instance string, newDataDir string) error {
	ports, err := FreePorts(2) // the old process may hold its admin port too
	if err != nil {
		return fmt.Errorf("replace %s: %w", instance, err)
	}
	port := ports[0]
	c.mu.Lock()
	defer c.mu.Unlock()
	ins, ok := c.insts[instance]
	if !ok {
		return fmt.Errorf("no instance %q", instance)
	}
	if c.stopping {
		return errors.New("replace: the cluster is stopping")
	}
	oldAddr, oldDir, oldAdmin := ins.addr, ins.dataDir, ins.admin
	ins.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ins.admin = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	if newDataDir != "" {
		if ins.dataDir, err = filepath.Abs(newDataDir); err != nil {
			ins.addr, ins.admin = oldAddr, oldAdmin
			return err
		}
	}
	if err := c.writePeersLocked(); err != nil {
		ins.addr, ins.dataDir, ins.admin = oldAddr, oldDir, oldAdmin
		return fmt.Errorf("replace %s: %w", instance, err)
	}
	p, err := c.spawnLocked(ins)
	if err != nil {
		return fmt.Errorf("replace %s: %w", instance, err)
	}
	if ins.cur != nil {
		ins.replaced = append(ins.replaced, ins.cur)
	}
	c.log.Info("replaced", "instance", instance, "pid", p.pid, "addr", ins.addr, "data", ins.dataDir, "old-addr", oldAddr)
	ins.cur = p
	return nil
}

// Processes describes every instance's current (or last) process, then
// every process Replace detached.
func (c *Cluster) Processes() []Proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out, replaced []Proc
	for _, name := range c.order {
		ins := c.insts[name]
		p := ins.cur
		if p == nil {
			p = ins.last
		}
		pr := c.describeLocked(ins, p)
		pr.MaxPeakRSS = max(ins.maxRSS, pr.PeakRSS)
		out = append(out, pr)
		for _, z := range ins.replaced {
			zr := c.describeLocked(ins, z)
			zr.Replaced, zr.Addr, zr.DataDir, zr.MaxPeakRSS = true, "", "", zr.PeakRSS
			replaced = append(replaced, zr)
		}
	}
	return append(out, replaced...)
}

func (c *Cluster) describeLocked(ins *instance, p *proc) Proc {
	pr := Proc{Instance: ins.name, Restarts: ins.restarts, Addr: ins.addr, DataDir: ins.dataDir, LogFile: ins.logPath}
	if p == nil {
		return pr
	}
	pr.PID, pr.Started = p.pid, p.started
	select {
	case <-p.done:
		pr.PeakRSS, pr.Exit = p.rss, describeExit(p.state, nil)
	default:
		pr.Alive = true
		pr.PeakRSS = vmHWM(p.pid)
	}
	return pr
}

// vmHWM reads a live process's peak resident set (bytes) from /proc.
func vmHWM(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			fields := strings.Fields(rest) // "12345 kB"
			if len(fields) >= 1 {
				kb, _ := strconv.ParseInt(fields[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// Done is closed once the cluster has stopped.
func (c *Cluster) Done() <-chan struct{} { return c.done }

// Stop stops the cluster gracefully: no more restarts, SIGTERM to every
// child, SIGKILL to those still running after the grace period (and at
// once to processes Replace detached, which may be stopped). It returns an
// error naming the children that did not exit 0 on SIGTERM. It is safe to
// call more than once and from several goroutines.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		c.stopping = true
		close(c.stopCh)
		type target struct {
			name string
			p    *proc
		}
		var live []target
		var zombies []*proc
		for _, name := range c.order {
			ins := c.insts[name]
			if ins.cur != nil {
				live = append(live, target{name, ins.cur})
			}
			for _, z := range ins.replaced {
				syscall.Kill(z.pid, syscall.SIGKILL)
				zombies = append(zombies, z)
			}
		}
		c.mu.Unlock()
		for _, t := range live {
			syscall.Kill(t.p.pid, syscall.SIGTERM)
			syscall.Kill(t.p.pid, syscall.SIGCONT) // in case a test stopped it
		}
		deadline := time.Now().Add(c.opts.StopGrace)
		var errs []error
		for _, t := range live {
			select {
			case <-t.p.done:
			case <-time.After(time.Until(deadline)):
			}
			select {
			case <-t.p.done:
				if t.p.state != nil && !t.p.state.Success() {
					errs = append(errs, fmt.Errorf("%s (pid %d) %s after SIGTERM", t.name, t.p.pid, describeExit(t.p.state, nil)))
				}
			default:
				syscall.Kill(t.p.pid, syscall.SIGKILL)
				<-t.p.done
				errs = append(errs, fmt.Errorf("%s (pid %d) did not stop within %s of SIGTERM; killed", t.name, t.p.pid, c.opts.StopGrace))
			}
		}
		c.wg.Wait()
		for _, z := range zombies {
			<-z.done
		}
		c.stopErr = errors.Join(errs...)
		if c.stopErr != nil {
			c.log.Warn("cluster stopped, not cleanly", "error", c.stopErr)
		} else {
			c.log.Info("cluster stopped")
		}
		if c.controlStopped != nil {
			<-c.controlStopped // its socket is gone before another runner may make its own
		}
		c.lock.release() // every child is gone: another runner may have the directory
		close(c.done)
	})
	<-c.done
	return c.stopErr
}

// teeWriter writes a child's output to its log file and, line by line with
// a prefix, to another writer.
type teeWriter struct {
	file   io.Writer
	prefix string
	to     io.Writer
	mu     sync.Mutex
	buf    []byte
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if _, err := w.file.Write(b); err != nil {
		return 0, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := append([]byte(w.prefix), w.buf[:i+1]...)
		w.to.Write(line)
		w.buf = w.buf[i+1:]
	}
	return len(b), nil
}

func (w *teeWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.to.Write(append(append([]byte(w.prefix), w.buf...), '\n'))
		w.buf = nil
	}
}

// FormatProcesses writes a table of processes: instance, pid, restarts,
// peak RSS.
func FormatProcesses(w io.Writer, procs []Proc) {
	sorted := append([]Proc(nil), procs...)
	sort.SliceStable(sorted, func(i, j int) bool { return !sorted[i].Replaced && sorted[j].Replaced })
	fmt.Fprintf(w, "  %-20s %8s %8s %10s  %s\n", "instance", "pid", "restarts", "peak RSS", "state")
	var total int64
	for _, p := range sorted {
		state := "running"
		if !p.Alive {
			state = p.Exit
		}
		if p.Replaced {
			state = "replaced, " + state
		}
		total += p.MaxPeakRSS
		fmt.Fprintf(w, "  %-20s %8d %8d %10s  %s\n", p.Instance, p.PID, p.Restarts, megabytes(p.MaxPeakRSS), state)
	}
	fmt.Fprintf(w, "  %-20s %8s %8s %10s\n", "total", "", "", megabytes(total))
}

// megabytes formats a peak RSS; 0 is "-": the runtime did not measure it
// (containers, whose memory the Docker runtime does not report).
func megabytes(b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MB", float64(b)/1e6)
}

// tasksLine names the tasks a job's plan runs on, with their instances
// ("gateway[1], shard[2]"), as the cluster-up line says them; the
// topology's own stage chains when it has no such shape.
func tasksLine(top deploy.Topology) string {
	shape, err := physical.ShapeOf(top)
	if err != nil {
		return strings.Join(top.Tasks(), "; ")
	}
	if shape.Shard.Name == shape.Gateway.Name {
		return fmt.Sprintf("%s[%d]", shape.Gateway.Name, shape.Gateway.Replicas)
	}
	return fmt.Sprintf("%s[%d], %s[%d]", shape.Gateway.Name, shape.Gateway.Replicas, shape.Shard.Name, shape.Shard.Replicas)
}
