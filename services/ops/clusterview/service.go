package clusterview

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// Service is the Cluster gRPC service on a Gatherer.
func Service(g *Gatherer) wololov1.ClusterServer { return service{g: g} }

type service struct {
	wololov1.UnimplementedClusterServer
	g *Gatherer
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
