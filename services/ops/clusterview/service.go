package clusterview

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// Service is the Cluster gRPC service on a Gatherer; del drops a job by
// its internal id (the gateway's; its error a gRPC status).
func Service(g *Gatherer, del func(job string) error) wololov1.ClusterServer {
	return service{g: g, del: del}
}

type service struct {
	wololov1.UnimplementedClusterServer
	g   *Gatherer
	del func(job string) error
}

// DeleteJob drops any client's job (the operator's: the service is
// served to operator certificates only).
func (s service) DeleteJob(_ context.Context, req *wololov1.ClusterDeleteJobRequest) (*wololov1.ClusterDeleteJobResponse, error) {
	if req.GetJobId() == "" {
		return nil, status.Error(codes.InvalidArgument, "the job's id is required (as wololo top shows it)")
	}
	if err := s.del(req.GetJobId()); err != nil {
		return nil, err
	}
	return &wololov1.ClusterDeleteJobResponse{}, nil
}

// Get returns a snapshot of the deployment.
func (s service) Get(ctx context.Context, _ *wololov1.ClusterGetRequest) (*wololov1.ClusterGetResponse, error) {
	return s.g.Get(ctx), nil
}

// StatusOver asks instances for their Status over connections conn gives
// (an rpc.Pool's Conn, say).
func StatusOver(conn func(instance string) (*grpc.ClientConn, string, error)) StatusFunc {
	return func(ctx context.Context, instance string) (*wololov1.GetResponse, error) {
		c, _, err := conn(instance)
		if err != nil {
			return nil, err
		}
		return wololov1.NewStatusClient(c).Get(ctx, &wololov1.GetRequest{})
	}
}

// JSON is a snapshot as the web page and `wololo top --json` give it:
// protojson with the proto field names, zero values included.
func JSON(s *wololov1.ClusterGetResponse) ([]byte, error) {
	return protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true, Multiline: true}.Marshal(s)
}
