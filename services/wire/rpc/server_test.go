package rpc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// panicky is a Status and a JobService whose handlers panic.
type panicky struct {
	wololov1.UnimplementedStatusServer
	wololov1.UnimplementedJobServiceServer
}

func (panicky) Get(context.Context, *wololov1.GetRequest) (*wololov1.GetResponse, error) {
	panic("status exploded")
}

func (panicky) WatchJob(*wololov1.WatchJobRequest, wololov1.JobService_WatchJobServer) error {
	panic(errors.New("stream exploded"))
}

// startServer serves a new server (plain, without credentials) with jobs
// as its JobService on an in-memory listener until cancel, Serve's result
// then on served, and returns a client connection to it (closed with the
// test).
func startServer(t *testing.T, o Options, jobs wololov1.JobServiceServer) (s *Server, conn *grpc.ClientConn, cancel context.CancelFunc, served <-chan error) {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	wololov1.RegisterJobServiceServer(s.GRPC(), jobs)
	l, dial := testkit.BufListener(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	return s, dial(), cancel, done
}

func TestServer(t *testing.T) {
	_, conn, cancel, served := startServer(t, Options{Status: panicky{}, Grace: 200 * time.Millisecond}, panicky{})
	call, cancelCall := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelCall()

	health := healthpb.NewHealthClient(conn)
	if r, err := health.Check(call, &healthpb.HealthCheckRequest{}); err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v; want SERVING", r, err)
	}
	if _, err := wololov1.NewStatusClient(conn).Get(call, &wololov1.GetRequest{}); status.Code(err) != codes.Internal {
		t.Fatalf("a panicking unary handler gave %v, want Internal", err)
	}
	w, err := wololov1.NewJobServiceClient(conn).WatchJob(call, &wololov1.WatchJobRequest{JobId: "j"})
	if err == nil {
		_, err = w.Recv()
	}
	if status.Code(err) != codes.Internal {
		t.Fatalf("a panicking stream handler gave %v, want Internal", err)
	}
	if r, err := health.Check(call, &healthpb.HealthCheckRequest{}); err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("after the panics health = %v, %v; want SERVING still", r, err)
	}

	refl, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(call)
	if err != nil {
		t.Fatal(err)
	}
	if err := refl.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := refl.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, svc := range resp.GetListServicesResponse().GetService() {
		names = append(names, svc.Name)
	}
	for _, want := range []string{"grpc.health.v1.Health", "wololo.v1.Status", "wololo.v1.JobService"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("reflection lists %v, missing %s", names, want)
		}
	}

	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve = %v after ctx ended", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after ctx ended")
	}
}

func TestNewRequiresStatus(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("a server without Status was built")
	}
}

// fine is a Status and a JobService that answer.
type fine struct {
	wololov1.UnimplementedStatusServer
	wololov1.UnimplementedJobServiceServer
}

func (fine) Get(context.Context, *wololov1.GetRequest) (*wololov1.GetResponse, error) {
	return &wololov1.GetResponse{Instance: "x-0"}, nil
}

func (fine) GetJob(context.Context, *wololov1.GetJobRequest) (*wololov1.GetJobResponse, error) {
	return &wololov1.GetJobResponse{}, nil
}

// TestRecoveringServer: a server started Recovering answers health
// NOT_SERVING with RecoveringService SERVING, serves Status, and refuses
// the process's own services with Unavailable saying it recovers; after
// Recovered it serves everything and says so; stopping, it says neither.
func TestRecoveringServer(t *testing.T) {
	s, conn, cancel, served := startServer(t, Options{Status: fine{}, Recovering: true, Grace: 200 * time.Millisecond}, fine{})
	call, cancelCall := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelCall()
	health := healthpb.NewHealthClient(conn)
	check := func(when, service string, want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		r, err := health.Check(call, &healthpb.HealthCheckRequest{Service: service})
		if err != nil || r.Status != want {
			t.Fatalf("%s: health of %q = %v, %v; want %s", when, service, r, err, want)
		}
	}
	jobs := wololov1.NewJobServiceClient(conn)

	check("recovering", "", healthpb.HealthCheckResponse_NOT_SERVING)
	check("recovering", RecoveringService, healthpb.HealthCheckResponse_SERVING)
	if r, err := wololov1.NewStatusClient(conn).Get(call, &wololov1.GetRequest{}); err != nil || r.Instance != "x-0" {
		t.Fatalf("recovering: Status = %v, %v; want an answer", r, err)
	}
	_, err := jobs.GetJob(call, &wololov1.GetJobRequest{})
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "recovering") || !IsRecovering(err) {
		t.Fatalf("recovering: GetJob = %v (IsRecovering %v); want Unavailable, recovering", err, IsRecovering(err))
	}
	// A process that is down is Unavailable too, and not recovering.
	if down := status.Error(codes.Unavailable, "connection refused"); IsRecovering(down) {
		t.Fatalf("IsRecovering(%v) = true", down)
	}

	s.Recovered()
	check("recovered", "", healthpb.HealthCheckResponse_SERVING)
	check("recovered", RecoveringService, healthpb.HealthCheckResponse_NOT_SERVING)
	if _, err := jobs.GetJob(call, &wololov1.GetJobRequest{}); err != nil {
		t.Fatalf("recovered: GetJob = %v", err)
	}

	// Stopping: neither serving nor recovering, whatever comes after.
	s.health.Shutdown()
	s.Recovered()
	check("stopping", "", healthpb.HealthCheckResponse_NOT_SERVING)
	check("stopping", RecoveringService, healthpb.HealthCheckResponse_NOT_SERVING)
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
}
