package e2e

import (
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/node"
	"github.com/wololo/wololo/services/schema"
	"github.com/wololo/wololo/transport"
)

// TestForgedClaimsAreRefused sends the graph, over its real gRPC ports,
// the malformed and out-of-range claims that used to crash or wedge a
// process, and checks each is refused with its code; then a real job runs
// beside them and its four answers are byte-equal to the reference.
func TestForgedClaimsAreRefused(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	gateway := c.GatewayAddr()
	conn, err := transport.NewClient(gateway)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stage := wololov1.NewStageServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// open runs one Exchange to the gateway with the given Open frame and
	// returns how it ended.
	open := func(o *wololov1.Open) error {
		s, err := stage.Exchange(ctx)
		if err != nil {
			return err
		}
		if err := s.Send(&wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Open{Open: o}}); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		for {
			if _, err := s.Recv(); err != nil {
				return err
			}
		}
	}
	results := func(job, sender string, inc uint64) *wololov1.Open {
		return &wololov1.Open{JobId: job, Stream: "q3-civs", Sender: sender, Receiver: "gateway-0", Incarnation: inc}
	}
	cases := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"a job id with a NUL byte", func() error { return open(results("a\x00b", "q3-aggregator-0", 1)) }, codes.InvalidArgument},
		{"a 1 MB job id", func() error { return open(results(strings.Repeat("j", 1<<20), "q3-aggregator-0", 1)) }, codes.InvalidArgument},
		{"a sender that is no neighbour", func() error { return open(results("j", "q4-joiner-0", 1)) }, codes.PermissionDenied},
		{"a stream the gateway does not take from that sender", func() error {
			return open(&wololov1.Open{JobId: "j", Stream: "q2-tokens", Sender: "q3-aggregator-0", Receiver: "gateway-0", Incarnation: 1})
		}, codes.InvalidArgument},
		{"the largest incarnation", func() error { return open(results("j", "q3-aggregator-0", math.MaxUint64)) }, codes.InvalidArgument},
		{"an announce of the largest incarnation", func() error {
			_, err := stage.Announce(ctx, &wololov1.AnnounceRequest{Sender: "q3-aggregator-0", Incarnation: math.MaxUint64})
			return err
		}, codes.InvalidArgument},
		{"a drop of a malformed job id", func() error {
			_, err := stage.DropJob(ctx, &wololov1.DropJobRequest{JobId: "x\x00"})
			return err
		}, codes.InvalidArgument},
		{"a job created under a malformed id", func() error {
			h := func(f schema.File) *wololov1.FileHeader {
				return &wololov1.FileHeader{Columns: schema.RequiredColumns[f], Size: 100, DataOffset: 10}
			}
			_, err := wololov1.NewJobServiceClient(conn).CreateJob(ctx, &wololov1.CreateJobRequest{JobId: "a\x00b", Matches: h(schema.Matches), Players: h(schema.Players)})
			if err != nil && !strings.Contains(err.Error(), "job id") {
				return errors.New("refused for another reason: " + err.Error())
			}
			return err
		}, codes.InvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < 3; i++ { // repeated: a refusal must not leave a crash or a stall behind
				if got := status.Code(tc.call()); got != tc.want {
					t.Fatalf("attempt %d: code %s, want %s", i+1, got, tc.want)
				}
			}
		})
	}
	submit(t, c, testDatasets(t)[0])
}
