package master

import (
	"context"
	"fmt"
	"strconv"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/wire/rpc"
)

// Process is what a Runtime knows of one instance.
type Process struct {
	Instance string
	Running  bool
	PID      int64  // the OS process id, where the runtime knows it
	Ref      string // what names the current process: its pid, or its container's short id
	Exit     string // how the last one ended, when not running
	Restarts int
	Address  string // where it serves gRPC (health, Status)
}

// Runtime starts and stops the processes of a deployment. It decides
// nothing: the leading master calls it. It keeps nothing a master needs
// either: a second Runtime on the same deployment (a newly elected
// master's) lists the same processes and drives them as the first does.
// Its methods are safe for concurrent use, and a call whose context is
// done fails rather than acting. services/roles/master/runtimetest is the
// suite that checks every implementation against this contract.
type Runtime interface {
	// List describes every instance it knows, each once: whether its
	// process runs (a paused one does: the probes find it silent), what
	// names the process (Ref), where it serves, and how the last one ended
	// (Exit) when none runs. An instance whose process is being started
	// may be left out until it runs.
	List(ctx context.Context) ([]Process, error)
	// Start starts an instance that is not running; it reports whether it
	// had to. One that runs, or is being started, is left alone: asked
	// twice, it starts one process. An instance it does not know is an
	// error.
	Start(ctx context.Context, instance string) (bool, error)
	// Kill stops an instance's process at once (a wedged or paused one);
	// one that does not run is left as it is, without an error. An
	// instance it does not know is an error.
	Kill(ctx context.Context, instance string) error
}

// LocalRuntime is the Runtime of `wololo local`: the runner owns the OS
// processes and serves the ProcessService; the masters call it.
type LocalRuntime struct {
	conn  *grpc.ClientConn
	procs wololov1.ProcessServiceClient
}

// NewLocalRuntime connects to a runner's ProcessService at addr.
func NewLocalRuntime(addr string) (*LocalRuntime, error) {
	conn, err := rpc.NewClient(addr, nil)
	if err != nil {
		return nil, fmt.Errorf("process service at %s: %w", addr, err)
	}
	return &LocalRuntime{conn: conn, procs: wololov1.NewProcessServiceClient(conn)}, nil
}

// Close closes the connection.
func (r *LocalRuntime) Close() error { return r.conn.Close() }

// List implements Runtime.
func (r *LocalRuntime) List(ctx context.Context) ([]Process, error) {
	l, err := r.procs.ListProcesses(ctx, &wololov1.ListProcessesRequest{})
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	out := make([]Process, 0, len(l.Processes))
	for _, p := range l.Processes {
		out = append(out, Process{Instance: p.Instance, Running: p.Running, PID: p.Pid, Ref: strconv.FormatInt(p.Pid, 10), Exit: p.Exit, Restarts: int(p.Restarts), Address: p.Address})
	}
	return out, nil
}

// Start implements Runtime.
func (r *LocalRuntime) Start(ctx context.Context, instance string) (bool, error) {
	resp, err := r.procs.StartProcess(ctx, &wololov1.StartProcessRequest{Instance: instance})
	if err != nil {
		return false, fmt.Errorf("start %s: %w", instance, err)
	}
	return resp.Started, nil
}

// Kill implements Runtime. The runner refuses to signal an instance with
// no running process (FailedPrecondition): there is nothing to kill.
func (r *LocalRuntime) Kill(ctx context.Context, instance string) error {
	_, err := r.procs.SignalProcess(ctx, &wololov1.SignalProcessRequest{Instance: instance, Signal: int32(syscall.SIGKILL)})
	if err != nil && status.Code(err) != codes.FailedPrecondition {
		return fmt.Errorf("kill %s: %w", instance, err)
	}
	return nil
}
