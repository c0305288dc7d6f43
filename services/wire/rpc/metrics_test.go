package rpc

import (
	"context"
	"strings"
	"testing"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// serverMetrics are go-grpc-middleware's server metrics with the plane's
// label, as services/ops/metrics.NewRPCServerMetrics makes them (less the
// histogram, which this test does not read).
func serverMetrics(plane Plane) *grpcprom.ServerMetrics {
	return grpcprom.NewServerMetrics(grpcprom.WithServerCounterOptions(grpcprom.WithConstLabels(prometheus.Labels{"plane": plane.String()})))
}

// handled is the text of m's grpc_server_handled_total series.
func handled(t *testing.T, m prometheus.Collector) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range fams {
		if f.GetName() == "grpc_server_handled_total" {
			if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b.String()
}

// TestMetricsSeeWhatTheChainDecides: the gRPC metrics' interceptor comes
// first, so every call is counted with the code the rest of the chain
// ended it with: a recovered panic (Internal), the recovering gate
// (Unavailable), authorization (PermissionDenied), and OK.
func TestMetricsSeeWhatTheChainDecides(t *testing.T) {
	m := serverMetrics(Internal)
	s, conn, _, _ := startServer(t, Options{Status: panicky{}, Recovering: true, Metrics: m}, panicky{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	wololov1.NewStatusClient(conn).Get(ctx, &wololov1.GetRequest{})
	if w, err := wololov1.NewJobServiceClient(conn).WatchJob(ctx, &wololov1.WatchJobRequest{JobId: "j"}); err == nil {
		w.Recv()
	}
	s.Recovered()

	secure := serverMetrics(Internal)
	_, dial := tlsServerWith(t, Options{Status: fine{}, Metrics: secure, Grace: 100 * time.Millisecond})
	wololov1.NewStatusClient(dial(alice)).Get(ctx, &wololov1.GetRequest{})
	if _, err := wololov1.NewStatusClient(dial(master)).Get(ctx, &wololov1.GetRequest{}); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name string
		m    prometheus.Collector
		want string
	}{
		{"health", m, `grpc_server_handled_total{grpc_code="OK",grpc_method="Check",grpc_service="grpc.health.v1.Health",grpc_type="unary",plane="internal"} 1`},
		{"a panic recovered", m, `grpc_server_handled_total{grpc_code="Internal",grpc_method="Get",grpc_service="wololo.v1.Status",grpc_type="unary",plane="internal"} 1`},
		{"refused while recovering", m, `grpc_server_handled_total{grpc_code="Unavailable",grpc_method="WatchJob",grpc_service="wololo.v1.JobService",grpc_type="server_stream",plane="internal"} 1`},
		{"refused by authorization", secure, `grpc_server_handled_total{grpc_code="PermissionDenied",grpc_method="Get",grpc_service="wololo.v1.Status",grpc_type="unary",plane="internal"} 1`},
		{"authorized", secure, `grpc_server_handled_total{grpc_code="OK",grpc_method="Get",grpc_service="wololo.v1.Status",grpc_type="unary",plane="internal"} 1`},
	} {
		if got := handled(t, c.m); !strings.Contains(got, c.want) {
			t.Errorf("%s: no %s in\n%s", c.name, c.want, got)
		}
	}
}
