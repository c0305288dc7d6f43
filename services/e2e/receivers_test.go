package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/internal/testkit"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/services/roles/node"
	"github.com/wololo/wololo/services/wire/pki"
	"github.com/wololo/wololo/services/wire/rpc"
	"github.com/wololo/wololo/transport"
)

// stageAsInstance is a StageService client of an instance's internal port
// presenting the certificate of instance name (the attacker holds its key).
func stageAsInstance(t *testing.T, c *node.Cluster, instance, name string) wololov1.StageServiceClient {
	t.Helper()
	creds, err := c.CA.Credentials(pki.Identity{Kind: pki.Instance, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rpc.NewClient(c.Addrs[instance], creds.ClientTLS(instance))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return wololov1.NewStageServiceClient(conn)
}

// statusOf reads an instance's Status as the operator.
func statusOf(t *testing.T, c *node.Cluster, instance string) *wololov1.GetResponse {
	t.Helper()
	conn, err := rpc.NewClient(c.Addrs[instance], operatorTLS(t, c, instance))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := wololov1.NewStatusClient(conn).Get(ctx, &wololov1.GetRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// exchange opens a channel with o, sends batches, and returns the frames
// the receiver answered and how the stream ended: nil once it answered
// Hello and acknowledged every batch (the sender's side is closed only
// then, since a receiver ends a stream whose sender has closed).
func exchange(ctx context.Context, st wololov1.StageServiceClient, o *wololov1.Open, batches ...*wololov1.Batch) ([]*wololov1.ExchangeResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := st.Exchange(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Send(&wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Open{Open: o}}); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	for _, b := range batches {
		if err := s.Send(&wololov1.ExchangeRequest{Frame: &wololov1.ExchangeRequest_Batch{Batch: b}}); err != nil && !errors.Is(err, io.EOF) {
			break // the refusal comes from Recv
		}
	}
	var got []*wololov1.ExchangeResponse
	for len(got) < 1+len(batches) {
		r, err := s.Recv()
		if err != nil {
			return got, err
		}
		got = append(got, r)
	}
	_ = s.CloseSend()
	return got, nil
}

// TestPhantomJobsAreRefused makes issue 22's third attack: with shard-0's
// key, open results streams to the gateway for more made-up job ids than
// it may hold jobs, each with an EOF, and introduce a job at shard-1. Each
// stream is refused NOT_FOUND before any state exists (before this change
// each made a job, persisted with its EOF and never reaped, until every
// real job stalled); the introduction is PERMISSION_DENIED. Nothing of the
// phantoms is in any store or Status; what phantoms left in a store before
// this change is reaped when its process restarts; and a real job beside
// them gives answers byte-equal to the reference.
func TestPhantomJobsAreRefused(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	asShard0 := stageAsInstance(t, c, "gateway-0", "shard-0")
	inc := statusOf(t, c, "shard-0").Incarnation
	n := stage.DefaultMaxJobs + 100
	for i := 0; i < n; i++ {
		o := &wololov1.Open{JobId: fmt.Sprintf("phantom-%d", i), Stream: "q3-partials", Sender: "shard-0", Receiver: "gateway-0", Incarnation: inc}
		got, err := exchange(ctx, asShard0, o, &wololov1.Batch{Seq: 1, Eof: true})
		if status.Code(err) != codes.NotFound || !transport.IsUnknownJob(err) || len(got) != 0 {
			t.Fatalf("phantom stream %d: answered %v, ended with %v; want NOT_FOUND (job not introduced) before any Hello", i, got, err)
		}
	}
	if _, err := stageAsInstance(t, c, "shard-1", "shard-0").IntroduceJob(ctx, &wololov1.IntroduceJobRequest{JobId: "phantom-0"}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("shard-0 introducing a job at shard-1: %v, want PERMISSION_DENIED", err)
	}
	for _, in := range []string{"gateway-0", "shard-0", "shard-1"} {
		img, err := c.Store(in).Load()
		if err != nil {
			t.Fatal(err)
		}
		if len(img.Jobs) != 0 || len(img.Dropped) != 0 {
			t.Fatalf("%s's store holds %d jobs and %d tombstones after the phantoms", in, len(img.Jobs), len(img.Dropped))
		}
		if jobs := statusOf(t, c, in).Jobs; len(jobs) != 0 {
			t.Fatalf("%s holds %d jobs after the phantoms, the first %s", in, len(jobs), jobs[0].JobId)
		}
	}

	// What such streams left in a store before this change (a watermark
	// and an applied EOF of a job never introduced) is reaped when the
	// process restarts on it.
	for _, ch := range []transport.ChannelID{
		{Job: "phantom-old", Stream: "matches", Sender: "gateway-0", Receiver: "shard-1"},
		{Job: "phantom-old", Stream: "q3-partials", Sender: "shard-0", Receiver: "gateway-0"},
	} {
		store := c.Store(ch.Receiver)
		if err := store.Commit(&transport.Commit{Job: ch.Job, Inputs: map[transport.ChannelID]uint64{ch: 1}, Records: map[string][]byte{transport.EndedRecord(ch): {1}}}); err != nil {
			t.Fatal(err)
		}
		if err := c.Restart(ch.Receiver); err != nil {
			t.Fatal(err)
		}
		waitStores(t, c, ch.Receiver+" to reap the left-over job "+ch.Job, 30*time.Second, []string{ch.Receiver}, func(img *transport.Image) bool {
			return img.Jobs[ch.Job] == nil && slices.Contains(img.Dropped, ch.Job)
		})
	}
	submit(t, c, testDatasets(t)[0])
}

// TestJobRefusedForALimitFails: shard-1 may hold one job. A second job
// while the first is kept is refused there when the gateway introduces it,
// and fails with that reason, which its client sees, instead of waiting
// forever; once the first job is deleted a third runs, byte-equal.
func TestJobRefusedForALimitFails(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{MaxJobs: map[string]int{"shard-1": 1}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sets := testDatasets(t)
	out := t.TempDir()
	if _, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: sets[0].matches, Players: sets[0].players, Out: out, JobID: "first", Keep: true}); err != nil {
		t.Fatal(err)
	}
	compareOutputs(t, sets[0], out)

	start := time.Now()
	_, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: sets[1].matches, Players: sets[1].players, Out: t.TempDir(), JobID: "second", Keep: true})
	if err == nil || !strings.Contains(err.Error(), "failed") || !strings.Contains(err.Error(), "shard-1 holds 1 jobs already") || !strings.Contains(err.Error(), "--max-jobs") {
		t.Fatalf("a job beyond shard-1's limit: %v; want it failed with the limit and its flag", err)
	}
	t.Logf("refused after %s: %v", time.Since(start).Round(time.Millisecond), err)
	s, err := client.Open(c.GatewayAddr(), clientTLS(t, c), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if job, err := s.Get(ctx, "second"); err != nil || job.State != wololov1.JobState_JOB_STATE_FAILED || !strings.Contains(job.Message, "--max-jobs") {
		t.Fatalf("the refused job: %v, %v; want FAILED with the reason", job, err)
	}

	for _, name := range []string{"first", "second"} {
		if err := s.Delete(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, "shard-1 to drop the deleted jobs", 30*time.Second, func() bool { return len(statusOf(t, c, "shard-1").Jobs) == 0 })
	submit(t, c, sets[2])
}

// TestBatchesAfterEOFAreRefused makes issue 22's sixth attack: a job runs
// to the end and is kept; then, with shard-0's key and its current
// incarnation, a results channel of that job whose EOF the gateway has
// applied (one of its plan's channels from shard-0) gets a resend of its EOF (acknowledged and dropped, as before),
// a row batch numbered past it and a second EOF (each refused
// FAILED_PRECONDITION). The channel's watermark and the job's store entry
// are as they were, the kept job's answers are unchanged, and a real job
// beside it gives answers byte-equal to the reference.
func TestBatchesAfterEOFAreRefused(t *testing.T) {
	c := startCluster(t, deploy.Default(), node.ClusterOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sets := testDatasets(t)
	out := t.TempDir()
	if _, err := client.Submit(ctx, client.SubmitOptions{Server: c.GatewayAddr(), TLS: clientTLS(t, c), Matches: sets[0].matches, Players: sets[0].players, Out: out, JobID: "kept", Keep: true}); err != nil {
		t.Fatal(err)
	}
	compareOutputs(t, sets[0], out)

	gw := statusOf(t, c, "gateway-0")
	if len(gw.Jobs) != 1 {
		t.Fatalf("the gateway holds %d jobs, want the kept one", len(gw.Jobs))
	}
	job := gw.Jobs[0].JobId
	var wm uint64
	var stream string
	for _, in := range gw.Jobs[0].Inputs {
		if in.Sender == "shard-0" && in.Watermark > wm {
			if !in.Eof {
				t.Fatalf("the channel's EOF is not applied: %v", in)
			}
			wm, stream = in.Watermark, in.Stream
		}
	}
	if wm == 0 {
		t.Fatalf("no channel from shard-0 in %v", gw.Jobs[0].Inputs)
	}
	before, err := c.Store("gateway-0").Load()
	if err != nil {
		t.Fatal(err)
	}

	asShard0 := stageAsInstance(t, c, "gateway-0", "shard-0")
	o := &wololov1.Open{JobId: job, Stream: stream, Sender: "shard-0", Receiver: "gateway-0", Incarnation: statusOf(t, c, "shard-0").Incarnation}
	cases := []struct {
		name  string
		batch *wololov1.Batch
		want  codes.Code // OK: acknowledged
	}{
		{"a resend of the EOF", &wololov1.Batch{Seq: wm, Eof: true}, codes.OK},
		{"a row batch after the EOF", &wololov1.Batch{Seq: wm + 1, Rows: []byte{0x22, 0x00}}, codes.FailedPrecondition},
		{"a second EOF", &wololov1.Batch{Seq: wm + 1, Eof: true}, codes.FailedPrecondition},
		{"a batch far past the EOF", &wololov1.Batch{Seq: wm + 1000}, codes.FailedPrecondition},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < 3; i++ {
				got, err := exchange(ctx, asShard0, o, tc.batch)
				if len(got) == 0 || got[0].GetHello().GetWatermark() != wm {
					t.Fatalf("attempt %d: answered %v (%v), want Hello at %d first", i+1, got, err, wm)
				}
				acked := len(got) == 2 && got[1].GetAck().GetSeq() == tc.batch.Seq
				if status.Code(err) != tc.want || acked != (tc.want == codes.OK) {
					t.Fatalf("attempt %d: answered %v, ended with %v; want %s", i+1, got, err, tc.want)
				}
			}
		})
	}
	after, err := c.Store("gateway-0").Load()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after.Jobs[job]) != fmt.Sprint(before.Jobs[job]) {
		t.Fatalf("the kept job's store entry changed:\nbefore %v\nafter  %v", before.Jobs[job], after.Jobs[job])
	}
	for _, in := range statusOf(t, c, "gateway-0").Jobs[0].Inputs {
		if in.Stream == stream && in.Sender == "shard-0" && in.Watermark != wm {
			t.Fatalf("the channel's watermark moved from %d to %d", wm, in.Watermark)
		}
	}
	s, err := client.Open(c.GatewayAddr(), clientTLS(t, c), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	again := t.TempDir()
	if _, err := s.Fetch(ctx, "kept", again); err != nil {
		t.Fatal(err)
	}
	compareOutputs(t, sets[0], again)
	submit(t, c, sets[1])
}
