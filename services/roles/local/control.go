package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/atomicfile"
)

// ControlFile is where, in the data directory, a cluster started with
// Options.Control writes the address of its ProcessService.
const ControlFile = "processes.addr"

// controlServer is the ProcessService of a cluster: the masters' view of
// and hand on the processes the runner owns.
type controlServer struct {
	wololov1.UnimplementedProcessServiceServer
	c *Cluster
}

// ControlSocket is the Unix socket, in the data directory, the
// ProcessService listens on.
const ControlSocket = "processes.sock"

// serveControl serves the ProcessService on a Unix socket in the data
// directory that only this user may open (0600, in a 0700 directory: the
// service starts and kills processes, so no other local user may reach it,
// as any could a loopback port), writes its address to DIR/processes.addr
// and stops when the cluster does, removing the socket. A socket already
// there was left by a runner that died (this one holds the directory's
// lock, LockFile): it is removed first.
func (c *Cluster) serveControl() error {
	sock := filepath.Join(c.dir, ControlSocket)
	if err := os.Remove(sock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("process service: stale socket: %w", err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("process service: %w", err)
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		l.Close()
		return fmt.Errorf("process service: %w", err)
	}
	addr := "unix://" + sock
	s := grpc.NewServer()
	wololov1.RegisterProcessServiceServer(s, &controlServer{c: c})
	path := filepath.Join(c.dir, ControlFile)
	if err := atomicfile.Write(path, []byte(addr+"\n"), 0o600); err != nil {
		l.Close()
		return err
	}
	c.controlAddr = addr
	c.controlStopped = make(chan struct{})
	go func() { _ = s.Serve(l) }()
	go func() {
		<-c.stopCh
		s.Stop() // closes the listener, which removes the socket
		close(c.controlStopped)
	}()
	return nil
}

// ControlAddr is the ProcessService's address ("" without Options.Control).
func (c *Cluster) ControlAddr() string { return c.controlAddr }

func (s *controlServer) ListProcesses(context.Context, *wololov1.ListProcessesRequest) (*wololov1.ListProcessesResponse, error) {
	out := &wololov1.ListProcessesResponse{}
	for _, p := range s.c.Processes() {
		if p.Replaced {
			continue
		}
		info := &wololov1.ProcessInfo{
			Instance: p.Instance, Pid: int64(p.PID), Running: p.Alive, Exit: p.Exit,
			Restarts: int32(p.Restarts), Address: p.Addr,
		}
		if p.Alive {
			info.UptimeSeconds = time.Since(p.Started).Seconds()
		}
		out.Processes = append(out.Processes, info)
	}
	return out, nil
}

func (s *controlServer) StartProcess(_ context.Context, req *wololov1.StartProcessRequest) (*wololov1.StartProcessResponse, error) {
	started, err := s.c.StartInstance(req.GetInstance())
	if err != nil {
		return nil, status.Error(codes.NotFound, err.Error())
	}
	return &wololov1.StartProcessResponse{Started: started}, nil
}

func (s *controlServer) SignalProcess(_ context.Context, req *wololov1.SignalProcessRequest) (*wololov1.SignalProcessResponse, error) {
	if req.GetSignal() < 0 || req.GetSignal() > 64 {
		return nil, status.Errorf(codes.InvalidArgument, "no signal %d", req.GetSignal())
	}
	pid, err := s.c.Signal(req.GetInstance(), syscall.Signal(req.GetSignal()))
	switch {
	case errors.Is(err, ErrNotRunning):
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	case err != nil:
		return nil, status.Error(codes.NotFound, err.Error())
	}
	return &wololov1.SignalProcessResponse{Pid: int64(pid)}, nil
}
