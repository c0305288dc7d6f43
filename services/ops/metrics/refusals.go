package metrics

import "github.com/prometheus/client_golang/prometheus"

// Refusals counts what a process's gRPC servers refuse
// (services/wire/rpc.RefusalCounter): calls by plane, gRPC code and
// method, connections by plane and reason. The labels are bounded: the
// methods are those the server serves (any other is "unknown"), the codes
// and reasons a handful; no caller, address or job is a label.
type Refusals struct {
	calls *prometheus.CounterVec
	conns *prometheus.CounterVec
}

// NewRefusals returns unregistered counters; Collectors lists them.
func NewRefusals() *Refusals {
	return &Refusals{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "rpc_refused_calls_total",
			Help: "Calls refused before their handler ran, or ended for sending no first message: by plane, gRPC code and method.",
		}, []string{"plane", "code", "method"}),
		conns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "rpc_refused_connections_total",
			Help: "Connections closed by the server's per-address caps or a failed handshake: by plane and reason.",
		}, []string{"plane", "reason"}),
	}
}

// RefusedCall counts one refused call.
func (r *Refusals) RefusedCall(plane, code, method string) {
	r.calls.WithLabelValues(plane, code, method).Inc()
}

// RefusedConnection counts one refused connection.
func (r *Refusals) RefusedConnection(plane, reason string) {
	r.conns.WithLabelValues(plane, reason).Inc()
}

// Collectors are the counters, to register.
func (r *Refusals) Collectors() []prometheus.Collector {
	return []prometheus.Collector{r.calls, r.conns}
}
