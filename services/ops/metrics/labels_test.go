package metrics

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/version"
)

// everything is a registry with every collector of this package, each
// with something to show: a job on the node, a refused call, a gRPC call,
// a gateway's upload and job, the data directory's disk.
func everything(t *testing.T) *Registry {
	t.Helper()
	reg := New("gateway", "gateway-0", "gateway", version.Info{Version: "v1.2.3", Commit: "abc123", Modified: true, Go: "go1.26.8"})
	refusals := NewRefusals()
	refusals.RefusedCall("public", "Unauthenticated", "/wololo.v1.JobService/GetJob")
	rpc := NewRPCServerMetrics("public")
	_, err := rpc.UnaryServerInterceptor()(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/wololo.v1.JobService/GetJob"},
		func(context.Context, any) (any, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	gw := NewGateway(GatewayLabels{Files: []string{"matches.csv"}, Uploads: []string{"complete"}, Outcomes: []string{"done"}},
		func() []*wololov1.ClusterJob {
			return []*wololov1.ClusterJob{{JobId: "j1", Client: "alice", State: "running"}}
		})
	gw.Committed("matches.csv", 100, 3, 1)
	node := NewNodeCollector(NodeSource{Status: func() *wololov1.GetResponse {
		return &wololov1.GetResponse{Jobs: []*wololov1.JobProgress{{JobId: "j1", RowsIn: 3,
			Outputs: []*wololov1.OutputChannel{{Stream: "matches", Receiver: "shard-0", LastSeq: 2}}}}}
	}})
	cs := append(append(NewStoreTimes().Collectors(), refusals.Collectors()...), rpc, gw, node, NewDiskCollector(t.TempDir()))
	if err := reg.Register(cs...); err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestNoSeriesCarriesTheScrapersLabels: no series of a process carries
// "job" or "instance", the labels Prometheus gives every series of a
// target (a series' own would overwrite them under honor_labels, or be
// renamed exported_job); every one names its process and stage, and a
// job's series name the job by wololo_job.
func TestNoSeriesCarriesTheScrapersLabels(t *testing.T) {
	fams, err := everything(t).reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	jobSeries := 0
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for _, taken := range []string{"job", "instance"} {
				if _, ok := labels[taken]; ok {
					t.Errorf("%s %v: carries %q, a scraper's target label", f.GetName(), labels, taken)
				}
			}
			if labels[LabelProcess] != "gateway-0" || labels["stage"] != "gateway" {
				t.Errorf("%s %v: want process gateway-0 and stage gateway", f.GetName(), labels)
			}
			if labels[LabelJob] == "j1" {
				jobSeries++
			}
		}
	}
	if jobSeries == 0 {
		t.Error("no series names the job j1 by wololo_job")
	}
}

// TestProcessMetricsExported: build info, the gRPC server's metrics, the
// gateway's counters (at zero before anything happened) and job states,
// and the data directory's disk are served; the public handler sums the
// job states over jobs and clients into a count per state.
func TestProcessMetricsExported(t *testing.T) {
	reg := everything(t)
	get := func(public bool) string {
		h := reg.Handler()
		if public {
			h = reg.PublicHandler()
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		b, _ := io.ReadAll(rec.Body)
		return string(b)
	}
	full, public := get(false), get(true)
	cases := []struct {
		name, text, want string
	}{
		{"build info", full, `wololo_build_info{commit="abc123-modified",go_version="go1.26.8",process="gateway-0",role="gateway",stage="gateway",version="v1.2.3"} 1`},
		{"grpc calls by code", full, `grpc_server_handled_total{grpc_code="OK",grpc_method="GetJob",grpc_service="wololo.v1.JobService",grpc_type="unary",plane="public",process="gateway-0",stage="gateway"} 1`},
		{"grpc latency", full, `grpc_server_handling_seconds_count{grpc_method="GetJob",grpc_service="wololo.v1.JobService",grpc_type="unary",plane="public",process="gateway-0",stage="gateway"} 1`},
		{"uploads, at zero", full, `wololo_gateway_uploads_total{file="matches.csv",outcome="complete",process="gateway-0",stage="gateway"} 0`},
		{"job outcomes, at zero", full, `wololo_gateway_jobs_ended_total{outcome="done",process="gateway-0",stage="gateway"} 0`},
		{"malformed records", full, `wololo_gateway_malformed_records_total{file="matches.csv",process="gateway-0",stage="gateway"} 1`},
		{"bytes", full, `wololo_gateway_upload_bytes_total{file="matches.csv",process="gateway-0",stage="gateway"} 100`},
		{"a job's state", full, `wololo_gateway_job_state{client="alice",process="gateway-0",stage="gateway",state="running",wololo_job="j1"} 1`},
		{"jobs by state, public", public, `wololo_gateway_job_state{process="gateway-0",stage="gateway",state="running"} 1`},
		{"disk size", full, `wololo_data_filesystem_size_bytes{process="gateway-0",stage="gateway"} `},
		{"disk free", full, `wololo_data_filesystem_avail_bytes{process="gateway-0",stage="gateway"} `},
	}
	for _, c := range cases {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("%s: no %s in\n%s", c.name, c.want, c.text)
		}
	}
	if strings.Contains(public, "alice") || strings.Contains(public, "j1") {
		t.Errorf("the public handler names a client or a job:\n%s", public)
	}
}

// TestDiskCollectorOfAMissingDirectory: a directory that cannot be read
// gives no series rather than zeros (a full disk would look like one).
func TestDiskCollectorOfAMissingDirectory(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewDiskCollector(t.TempDir() + "/missing"))
	fams, err := reg.Gather()
	if err != nil || len(fams) != 0 {
		t.Errorf("gathered %v, %v; want nothing", fams, err)
	}
}
