package rpcserver

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

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

func TestServer(t *testing.T) {
	s, err := New(Options{Status: panicky{}, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	wololov1.RegisterJobServiceServer(s.GRPC(), panicky{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()

	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
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
