package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRefusals(t *testing.T) {
	r := NewRefusals()
	for _, c := range []struct{ plane, code, method string }{
		{"public", "Unauthenticated", "/wololo.v1.JobService/GetJob"},
		{"public", "Unauthenticated", "/wololo.v1.JobService/GetJob"},
		{"internal", "ResourceExhausted", "/grpc.health.v1.Health/Watch"},
	} {
		r.RefusedCall(c.plane, c.code, c.method)
	}
	r.RefusedConnection("public", "too-many-connections")
	reg := prometheus.NewRegistry()
	reg.MustRegister(r.Collectors()...)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += " " + l.GetValue()
			}
			got[key] = m.GetCounter().GetValue()
		}
	}
	cases := []struct {
		name, series string
		want         float64
	}{
		{"calls of one plane, code and method add up", "wololo_rpc_refused_calls_total Unauthenticated /wololo.v1.JobService/GetJob public", 2},
		{"another is its own series", "wololo_rpc_refused_calls_total ResourceExhausted /grpc.health.v1.Health/Watch internal", 1},
		{"connections by plane and reason", "wololo_rpc_refused_connections_total public too-many-connections", 1},
	}
	for _, tc := range cases {
		if got[tc.series] != tc.want {
			t.Errorf("%s: %s = %v, want %v (%v)", tc.name, tc.series, got[tc.series], tc.want, got)
		}
	}
	if len(got) != len(cases) {
		t.Errorf("%d series, want %d: %v", len(got), len(cases), got)
	}
}
