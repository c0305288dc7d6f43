package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/wololo/wololo/deploy/observability"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/datagen"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/roles/local"
	"github.com/wololo/wololo/services/wire/rpc"
)

// TestWatchingALocalCluster runs the topology as OS processes with its
// three masters and one job slowed down by small batches, and while it
// runs checks what an operator sees of it: every process's /metrics has
// the families the README lists, with sane values; `wololo top --json`
// has every process serving and one leader; the gateway's web page,
// opened in headless Chromium, draws the stages and a non-zero rate. After
// the job, the rows every sender committed to a stream equal the rows its
// receivers applied; after a SIGKILL, the leading master counts the
// restart and the restarted process reports its recovery time; and after
// the leading master's SIGKILL, the new acting leader has timed its
// failover.
func TestWatchingALocalCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a local cluster")
	}
	bin := testkit.WololoBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "dataset")
	if _, err := datagen.WriteDir(datagen.Config{Matches: 120000, Seed: 4}, data); err != nil {
		t.Fatal(err)
	}
	c := startLocal(t, local.Options{
		Binary: bin, DataDir: filepath.Join(dir, "cluster"),
		Masters: 3,
	})
	t.Logf("dashboard: %s", c.DashboardURL())

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	tlsConfig, err := c.ClientTLS("client")
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	// The job's rows flow until the page has been seen: its players file
	// goes up a piece at a time until release, so that the page's rates
	// are of a running job however fast the job would have run.
	release, submitted := pacedJob(ctx, t, client.SubmitOptions{
		Server: c.GatewayAddr(), TLS: tlsConfig, JobID: "observed",
		Matches: filepath.Join(data, "matches.csv"), Players: filepath.Join(data, "match_players.csv"),
	})
	defer release()

	// Wait until rows flow into the graph.
	for {
		if m := scrape(t, c, "gateway-0"); sum(m, "wololo_channel_sent_rows_total", nil) > 0 {
			break
		}
		select {
		case err := <-submitted:
			t.Fatalf("the job ended (%v) before any rows were seen in the gateway's metrics", err)
		case <-time.After(100 * time.Millisecond):
		}
	}

	// A standing job beside it, whose latest version the page shows.
	small := filepath.Join(dir, "small")
	if _, err := datagen.WriteDir(datagen.Config{Matches: 2000, Seed: 5}, small); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Submit(ctx, client.SubmitOptions{
		Server: c.GatewayAddr(), TLS: tlsConfig, JobID: "standing", Keep: true, Standing: true, Out: filepath.Join(dir, "standing"),
		Matches: filepath.Join(small, "matches.csv"), Players: filepath.Join(small, "match_players.csv"),
	}); err != nil {
		t.Fatalf("the standing job: %v", err)
	}

	t.Run("web page in headless Chromium", func(t *testing.T) {
		browser := findChromium()
		if browser == "" {
			t.Skip("SKIPPED: no headless Chromium (chromium, chromium-browser or google-chrome on PATH); `make chromium` installs Debian's")
		}
		url := c.DashboardURL()
		// Until the gateway's snapshot has a rate on some stream (rates
		// need two gatherings a second apart), so that the page's first
		// one shows it.
		testkit.WaitFor(t, "a stream with a rate in /api/cluster", 30*time.Second, func() bool {
			var snap struct {
				Streams []streamRate `json:"streams"`
			}
			if err := json.Unmarshal(get(t, "http://"+c.AdminAddr("gateway-0")+"/api/cluster", c.OperatorToken()), &snap); err != nil {
				t.Fatal(err)
			}
			return slices.ContainsFunc(snap.Streams, func(s streamRate) bool { return s.RowsPerSecond > 0 })
		})
		dom := chromium(t, ctx, browser, "--dump-dom", "--virtual-time-budget=2000", url)
		for _, stage := range []string{"gateway", "shard"} {
			if !strings.Contains(dom, `data-stage="`+stage+`"`) {
				t.Errorf("the page has no box for stage %s:\n%.2000s", stage, dom)
			}
		}
		if !regexp.MustCompile(`epoch 1: q1 [0-9.k]+ rows \(\+[0-9.k]+ −0\), q2 `).MatchString(dom) {
			t.Errorf("the page does not show the standing job's latest version (epoch 1, each query's rows and change):\n%.3000s", dom)
		}
		rates := regexp.MustCompile(`class="rate" data-stream="([^"]+)" data-rate="([0-9.]+)"`).FindAllStringSubmatch(dom, -1)
		best := 0.0
		for _, m := range rates {
			v, _ := strconv.ParseFloat(m[2], 64)
			best = max(best, v)
		}
		if len(rates) != 6 || best <= 0 {
			meta := regexp.MustCompile(`id="meta">[^<]*`).FindString(dom)
			t.Errorf("want the 6 streams with a non-zero rate on one while the job runs; the page says %q and shows %q", meta, rates)
		}
		if path := os.Getenv("WOLOLO_DASHBOARD_SCREENSHOT"); path != "" {
			chromium(t, ctx, browser, "--screenshot="+path, "--window-size=1100,1250", "--hide-scrollbars", "--virtual-time-budget=2500", url)
			t.Logf("screenshot: %s", path)
		}
	})

	t.Run("metrics during the job", func(t *testing.T) {
		graph := map[string][]string{
			"gateway-0": {"wololo_channel_sent_rows_total", "wololo_channel_sent_batches_total", "wololo_channel_sent_bytes_total",
				"wololo_outbox_depth_batches", "wololo_channel_lag_batches", "wololo_backpressure_wait_seconds_total", "wololo_job_rows_in_total",
				"wololo_gateway_jobs_created_total", "wololo_gateway_jobs_ended_total", "wololo_gateway_uploads_total", "wololo_gateway_upload_bytes_total",
				"wololo_gateway_records_total", "wololo_gateway_malformed_records_total", "wololo_gateway_job_state"},
			"shard-0": {"wololo_channel_received_rows_total", "wololo_channel_received_batches_total", "wololo_channel_received_bytes_total",
				"wololo_channel_watermark", "wololo_job_rows_in_total", "wololo_job_rows_out_total"},
		}
		common := []string{"wololo_store_commits_total", "wololo_store_committed_bytes_total", "wololo_store_syncs_total",
			"wololo_store_commit_seconds", "wololo_store_sync_seconds", "wololo_recovery_seconds", "wololo_process_incarnation", "go_goroutines",
			"wololo_build_info", "grpc_server_handled_total", "grpc_server_started_total", "wololo_data_filesystem_avail_bytes", "wololo_data_filesystem_size_bytes"}
		for inst, families := range graph {
			m := scrape(t, c, inst)
			for _, f := range append(families, common...) {
				if m[f] == nil {
					t.Errorf("%s: no %s", inst, f)
				}
			}
			if got := m["wololo_process_incarnation"].GetMetric(); len(got) != 1 || label(got[0], "process") != inst || label(got[0], "stage") == "" {
				t.Errorf("%s: wololo_process_incarnation %v: want one series labelled with its process and stage", inst, got)
			}
			// No series may carry the labels a scraper sets on a target.
			for name, f := range m {
				for _, s := range f.GetMetric() {
					if label(s, "job") != "" || label(s, "instance") != "" {
						t.Errorf("%s: %s carries job or instance: %v", inst, name, s.GetLabel())
					}
				}
			}
			if n := count(m, "wololo_store_commit_seconds"); n == 0 {
				t.Errorf("%s: no commit timed in wololo_store_commit_seconds", inst)
			}
			if n := count(m, "wololo_store_sync_seconds"); n == 0 {
				t.Errorf("%s: no sync timed in wololo_store_sync_seconds (the store is durable)", inst)
			}
		}
		// The masters listen for a leader before they elect one.
		testkit.WaitFor(t, "master-1 to know a leader (wololo_master_leader_info)", 15*time.Second, func() bool {
			return sum(scrape(t, c, "master-1"), "wololo_master_leader_info", nil) != 0
		})
		for _, inst := range []string{"master-1", "master-2", "master-3"} {
			m := scrape(t, c, inst)
			for _, f := range []string{"wololo_master_term", "wololo_master_leader_info", "wololo_master_acting", "wololo_build_info", "grpc_server_handled_total", "wololo_master_is_leader", "wololo_master_failover_seconds", "wololo_master_supervised_processes"} {
				if m[f] == nil {
					t.Errorf("%s: no %s", inst, f)
				}
			}
			if v := sum(m, "wololo_master_term", nil); v < 1 {
				t.Errorf("%s: term %v", inst, v)
			}
		}
	})

	t.Run("top --json", func(t *testing.T) {
		out, err := exec.CommandContext(ctx, bin, "top", "--server", c.GatewayAddr(), "--tls-dir", c.TLSDir(), "--json").Output()
		if err != nil {
			t.Fatalf("wololo top --json: %v", err)
		}
		var snap wololov1.ClusterGetResponse
		if err := protojson.Unmarshal(out, &snap); err != nil {
			t.Fatalf("top --json printed no snapshot: %v\n%s", err, out)
		}
		serving := map[string]bool{}
		for _, p := range snap.GetProcesses() {
			serving[p.GetInstance()] = p.GetState() == "serving"
		}
		for _, inst := range c.Instances() {
			if !serving[inst] {
				t.Errorf("top: %s is not there serving (%v)", inst, serving)
			}
		}
		leaders := map[int32]bool{}
		nLeaders := 0
		for _, m := range snap.GetMasters() {
			if m.GetElectionRole() == "leader" {
				nLeaders++
			}
			leaders[m.GetLeader()] = true
		}
		if nLeaders != 1 || len(leaders) != 1 || leaders[0] {
			t.Errorf("top: want one leader every master follows, got %d leading, followed %v", nLeaders, leaders)
		}
		jobs := map[string]*wololov1.ClusterJob{}
		for _, j := range snap.GetJobs() {
			jobs[j.GetName()] = j
		}
		if snap.GetIntervalSeconds() <= 0 || len(snap.GetStages()) != 2 || len(jobs) != 2 || jobs["observed"] == nil || jobs["standing"].GetEpochsPublished() != 1 || len(jobs["standing"].GetLatest()) != 4 {
			t.Errorf("top: interval %v, %d stages, jobs %v: want observed, and standing with its version 1", snap.GetIntervalSeconds(), len(snap.GetStages()), snap.GetJobs())
		}
	})

	release()
	select {
	case err := <-submitted:
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the job did not finish")
	}
	t.Logf("job done in %s", time.Since(started).Round(time.Millisecond))

	t.Run("rows sent equal rows received", func(t *testing.T) {
		sent, received := map[string]float64{}, map[string]float64{}
		for _, inst := range []string{"gateway-0", "shard-0", "shard-1"} {
			m := scrape(t, c, inst)
			for _, s := range m["wololo_channel_sent_rows_total"].GetMetric() {
				sent[label(s, "job")+"/"+label(s, "stream")] += s.GetCounter().GetValue()
			}
			for _, s := range m["wololo_channel_received_rows_total"].GetMetric() {
				received[label(s, "job")+"/"+label(s, "stream")] += s.GetCounter().GetValue()
			}
		}
		if len(sent) != 6 {
			t.Errorf("sent rows on %d streams, want the 6 between tasks: %v", len(sent), sent)
		}
		for k, v := range sent {
			if received[k] != v {
				t.Errorf("%s: %v rows sent, %v received", k, v, received[k])
			}
			if v <= 0 && !strings.HasSuffix(k, "partials") {
				t.Errorf("%s: no rows sent", k)
			}
		}
	})

	t.Run("restart counted", func(t *testing.T) {
		before := scrape(t, c, "shard-1")
		if err := c.Kill("shard-1", syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "a master to count the restart of shard-1 in wololo_master_restarts_total", 30*time.Second, func() bool {
			restarts := 0.0
			for _, inst := range []string{"master-1", "master-2", "master-3"} {
				if m := tryScrape(c, inst); m != nil {
					restarts += sum(m, "wololo_master_restarts_total", map[string]string{"restarted": "shard-1", "reason": "exited"})
				}
			}
			return restarts >= 1
		})
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
		defer wcancel()
		if err := c.WaitInstance(wctx, "shard-1"); err != nil {
			t.Fatal(err)
		}
		after := scrape(t, c, "shard-1")
		if a, b := sum(after, "wololo_process_incarnation", nil), sum(before, "wololo_process_incarnation", nil); a <= b {
			t.Errorf("shard-1's incarnation %v after the restart, %v before", a, b)
		}
		if load := sum(after, "wololo_recovery_seconds", map[string]string{"phase": "load"}); load <= 0 {
			t.Errorf("shard-1's recovery load time after the restart: %v", load)
		}
		// The kept job is back, with its channels' counters from zero.
		if sum(after, "wololo_job_finished", nil) != 1 {
			t.Errorf("shard-1 does not hold the finished job after its restart")
		}
	})

	t.Run("dashboard and alerts read exported metrics", func(t *testing.T) {
		// A refused call and a refused connection, so that the refusal
		// counters have series: an anonymous JobService call, and bytes
		// that are no TLS handshake.
		anon, err := rpc.NewClient(c.GatewayAddr(), &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer anon.Close()
		if _, err := wololov1.NewJobServiceClient(anon).GetJob(ctx, &wololov1.GetJobRequest{JobId: "observed"}); err == nil {
			t.Fatal("an anonymous GetJob was answered")
		}
		if raw, err := net.Dial("tcp", c.GatewayAddr()); err == nil {
			raw.Write([]byte("no handshake\r\n\r\n"))
			io.Copy(io.Discard, raw) // until the server closes it
			raw.Close()
		}
		// The server may count the refused connection after it has closed
		// it: wait for the count rather than race it.
		testkit.WaitFor(t, "the gateway to count the connection that was no TLS handshake", 10*time.Second, func() bool {
			_, ok := scrape(t, c, "gateway-0")["wololo_rpc_refused_connections_total"]
			return ok
		})
		exported := map[string]bool{}
		for _, inst := range []string{"gateway-0", "shard-0", "shard-1", "master-1", "master-2", "master-3"} {
			for name, f := range scrape(t, c, inst) {
				exported[name] = true
				if f.GetType() == dto.MetricType_HISTOGRAM {
					for _, suffix := range []string{"_bucket", "_count", "_sum"} {
						exported[name+suffix] = true
					}
				}
			}
		}
		queries, err := observability.DashboardQueries()
		if err != nil {
			t.Fatal(err)
		}
		for name, expr := range observability.AlertQueries() {
			queries["alert "+name] = append(queries["alert "+name], expr)
		}
		for where, exprs := range queries {
			for _, e := range exprs {
				for _, n := range observability.MetricNames(e) {
					if !exported[n] {
						t.Errorf("%s reads %s, which no process exports", where, n)
					}
				}
			}
		}
	})

	t.Run("failover timed", func(t *testing.T) {
		old := ""
		for _, inst := range []string{"master-1", "master-2", "master-3"} {
			if m := scrape(t, c, inst); sum(m, "wololo_master_acting", nil) == 1 {
				if s := m["wololo_master_leader_info"].GetMetric(); len(s) == 1 {
					old = label(s[0], "leader")
				}
			}
		}
		if old == "" {
			t.Fatal("no master says it acts and names itself in wololo_master_leader_info")
		}
		if err := c.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "a new acting leader to observe one failover in wololo_master_failover_seconds, "+old+" killed", 30*time.Second, func() bool {
			failovers := uint64(0)
			for _, inst := range []string{"master-1", "master-2", "master-3"} {
				if m := tryScrape(c, inst); inst != old && m != nil && sum(m, "wololo_master_acting", nil) == 1 {
					failovers += count(m, "wololo_master_failover_seconds")
				}
			}
			return failovers >= 1
		})
	})
}

type families map[string]*dto.MetricFamily

// streamRate is what the page reads of a stream in /api/cluster.
type streamRate struct {
	RowsPerSecond float64 `json:"rows_per_second"`
}

// get GETs url with the operator's token (none if "").
func get(t *testing.T, url, token string) []byte {
	t.Helper()
	b, err := httpGet(url, token)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func httpGet(url, token string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return b, err
}

// tryScrape parses an instance's /metrics, as the operator; nil if it
// does not answer.
func tryScrape(c *local.Cluster, inst string) families {
	b, err := httpGet("http://"+c.AdminAddr(inst)+"/metrics", c.OperatorToken())
	if err != nil {
		return nil
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	m, err := parser.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		return nil
	}
	return m
}

// scrape parses an instance's /metrics, as the operator.
func scrape(t *testing.T, c *local.Cluster, inst string) families {
	t.Helper()
	addr := c.AdminAddr(inst)
	b := get(t, "http://"+addr+"/metrics", c.OperatorToken())
	parser := expfmt.NewTextParser(model.LegacyValidation)
	m, err := parser.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("%s/metrics is not the Prometheus text format: %v", addr, err)
	}
	return m
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sum adds the counter and gauge values of a family's series that carry
// every label of match.
func sum(m families, family string, match map[string]string) float64 {
	total := 0.0
next:
	for _, s := range m[family].GetMetric() {
		for k, v := range match {
			if label(s, k) != v {
				continue next
			}
		}
		total += s.GetCounter().GetValue() + s.GetGauge().GetValue()
	}
	return total
}

// count is a histogram family's observations.
func count(m families, family string) uint64 {
	var n uint64
	for _, s := range m[family].GetMetric() {
		n += s.GetHistogram().GetSampleCount()
	}
	return n
}

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// chromium runs headless Chromium on args and returns what it printed.
func chromium(t *testing.T, ctx context.Context, browser string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, browser, append(base, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, stderr.String())
	}
	return string(out)
}

// pacedJob creates job o (its two files, no queries of its own) and
// uploads its matches whole, then its players a small piece every 20 ms
// until release is called, then the rest at once; done gives the
// upload's error, or the job's once it is done (nil).
func pacedJob(ctx context.Context, t *testing.T, o client.SubmitOptions) (release func(), done <-chan error) {
	t.Helper()
	req, err := client.Request(o)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := client.Open(o.Server, o.TLS, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	if _, err := gw.Jobs.CreateJob(ctx, req); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var once sync.Once
	out := make(chan error, 1)
	go func() {
		err := pacedUpload(ctx, gw, o.JobID, wololov1.InputFile_INPUT_FILE_MATCHES, o.Matches, nil)
		if err == nil {
			err = pacedUpload(ctx, gw, o.JobID, wololov1.InputFile_INPUT_FILE_PLAYERS, o.Players, stop)
		}
		if err == nil {
			var job *wololov1.Job
			if job, err = gw.Watch(ctx, o.JobID, nil); err == nil && job.GetState() != wololov1.JobState_JOB_STATE_DONE {
				err = fmt.Errorf("job %s: %s: %s", o.JobID, job.GetState(), job.GetMessage())
			}
		}
		out <- err
	}()
	return func() { once.Do(func() { close(stop) }) }, out
}

// pacedUpload uploads file path of job id: whole when stop is nil, else
// a piece of 16 KiB every 20 ms until stop is closed, then the rest.
func pacedUpload(ctx context.Context, gw *client.Session, id string, file wololov1.InputFile, path string, stop <-chan struct{}) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	stream, err := gw.Jobs.Upload(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Start{Start: &wololov1.UploadStart{JobId: id, File: file}}}); err != nil {
		return err
	}
	ack, err := stream.Recv()
	if err != nil {
		return err
	}
	body := data[ack.Offset:]
	send := func(piece []byte) error {
		if err := stream.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Data{Data: piece}}); err != nil {
			return err
		}
		_, err := stream.Recv()
		return err
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for paced := stop != nil; paced && len(body) > 16<<10; {
		select {
		case <-stop:
			paced = false
			continue
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if err := send(body[:16<<10]); err != nil {
			return err
		}
		body = body[16<<10:]
	}
	for len(body) > 0 {
		n := min(len(body), client.ChunkSize)
		if err := send(body[:n]); err != nil {
			return err
		}
		body = body[n:]
	}
	if err := stream.Send(&wololov1.UploadRequest{Frame: &wololov1.UploadRequest_Finish{Finish: &wololov1.UploadFinish{Size: int64(len(data))}}}); err != nil {
		return err
	}
	for !ack.Done {
		if ack, err = stream.Recv(); err != nil {
			return err
		}
	}
	return stream.CloseSend()
}
