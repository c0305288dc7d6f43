package metrics

import (
	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
)

// NewRPCServerMetrics returns the metrics of one gRPC server of a process,
// unregistered (they are a prometheus.Collector): go-grpc-middleware's
// grpc_server_started_total, grpc_server_handled_total (by gRPC code),
// grpc_server_msg_received_total, grpc_server_msg_sent_total and the
// grpc_server_handling_seconds histogram, by grpc_type, grpc_service and
// grpc_method, with the server's plane ("internal", "public") as a
// constant label so that a gateway's two servers, which both serve
// health, stay apart in one registry. services/wire/rpc puts its
// interceptors first in the chain (Options.Metrics).
//
// Why that library: its names and labels are the ones the usual gRPC
// dashboards and alerts query, it is maintained (the successor of
// go-grpc-prometheus), and it costs a counter per call and per stream
// message. The methods are not pre-initialised (InitializeMetrics): with
// every method times every code that would be hundreds of series per
// process, most of them never non-zero; a method's series appear with its
// first call, which the masters' health checks and Status calls make
// within seconds of a start.
func NewRPCServerMetrics(plane string) *grpcprom.ServerMetrics {
	labels := prometheus.Labels{"plane": plane}
	return grpcprom.NewServerMetrics(
		grpcprom.WithServerCounterOptions(grpcprom.WithConstLabels(labels)),
		grpcprom.WithServerHandlingTimeHistogram(grpcprom.WithHistogramConstLabels(labels), grpcprom.WithHistogramBuckets(LatencyBuckets)),
	)
}
