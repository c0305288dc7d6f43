package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
)

var created = time.Date(2026, 11, 26, 1, 2, 3, 0, time.UTC)

func summaries() []*wololov1.JobSummary {
	return []*wololov1.JobSummary{
		{Name: "nightly", Id: "a1b2", State: wololov1.JobState_JOB_STATE_UPLOADING, BytesUploaded: 250, BytesTotal: 1000, Created: timestamppb.New(created), ElapsedSeconds: 12.34},
		{Name: "weekly", Id: "c3d4", State: wololov1.JobState_JOB_STATE_DONE, BytesUploaded: 900, BytesTotal: 1000, Created: timestamppb.New(created.Add(time.Minute)), ElapsedSeconds: 75.5},
		{Name: "bad", Id: "e5f6", State: wololov1.JobState_JOB_STATE_FAILED, Message: "a shard's state\nwas lost", BytesTotal: 0, Created: timestamppb.New(created.Add(2 * time.Minute)), ElapsedSeconds: 1},
	}
}

// TestNewJobListing: progress is the share of both files committed, 1 once
// done (whatever the bytes say), 0 for files of no size.
func TestNewJobListing(t *testing.T) {
	want := []JobListing{
		{JobID: "nightly", ID: "a1b2", State: "uploading", Progress: 0.25, UploadedBytes: 250, SizeBytes: 1000, Created: created, ElapsedSeconds: 12.34},
		{JobID: "weekly", ID: "c3d4", State: "done", Progress: 1, UploadedBytes: 900, SizeBytes: 1000, Created: created.Add(time.Minute), ElapsedSeconds: 75.5},
		{JobID: "bad", ID: "e5f6", State: "failed", Message: "a shard's state\nwas lost", Created: created.Add(2 * time.Minute), ElapsedSeconds: 1},
	}
	for i, s := range summaries() {
		if got := NewJobListing(s); got != want[i] {
			t.Errorf("%s: %+v, want %+v", s.Name, got, want[i])
		}
	}
}

// TestPrintJobs: the table a person reads, one row per job on one line.
func TestPrintJobs(t *testing.T) {
	var jobs []JobListing
	for _, s := range summaries() {
		jobs = append(jobs, NewJobListing(s))
	}
	var b strings.Builder
	PrintJobs(&b, jobs, time.UTC)
	want := `NAME     ID    STATE      PROGRESS  CREATED              ELAPSED  MESSAGE
nightly  a1b2  uploading   25.0%    2026-11-26 01:02:03  12.3s    
weekly   c3d4  done       100.0%    2026-11-26 01:03:03  1m15.5s  
bad      e5f6  failed       0.0%    2026-11-26 01:04:03  1s       a shard's state was lost
`
	if got := b.String(); got != want {
		t.Errorf("PrintJobs wrote\n%s\nwant\n%s", got, want)
	}
	b.Reset()
	PrintJobs(&b, nil, time.UTC)
	if b.String() != "no jobs\n" {
		t.Errorf("no jobs: %q", b.String())
	}
}

// TestJobListingJSON: `client list --json` writes each job as one object on
// one line, with the documented keys (message only when there is one).
func TestJobListingJSON(t *testing.T) {
	var b bytes.Buffer
	for _, s := range summaries() {
		if err := WriteJSON(&b, NewJobListing(s)); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), b.String())
	}
	keys := []string{"job_id", "id", "state", "progress", "uploaded_bytes", "size_bytes", "created", "elapsed_seconds"}
	for i, line := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("line %d is not JSON (%v): %s", i, err, line)
		}
		for _, k := range keys {
			if _, ok := obj[k]; !ok {
				t.Errorf("line %d lacks %q: %s", i, k, line)
			}
		}
		if _, ok := obj["message"]; ok != (i == 2) {
			t.Errorf("line %d: message present %v: %s", i, ok, line)
		}
	}
	var first map[string]any
	_ = json.Unmarshal([]byte(lines[0]), &first)
	if first["job_id"] != "nightly" || first["progress"] != 0.25 || first["created"] != "2026-11-26T01:02:03Z" {
		t.Errorf("first job: %v", first)
	}
}

// TestCancelNamesOneJob: `client cancel` takes the job as --job or as its
// first argument, not both differently, and not none; these are usage
// errors before any gateway is reached.
func TestCancelNamesOneJob(t *testing.T) {
	for _, args := range [][]string{{"cancel"}, {"cancel", "a", "--job", "b"}, {"cancel", "--job", "a", "b"}} {
		var stdout, stderr bytes.Buffer
		err := Run(context.Background(), append(args, "--insecure", "--server", "127.0.0.1:1"), &stdout, &stderr)
		if cli.ExitCode(err) != cli.ExitUsage || stdout.Len() != 0 {
			t.Errorf("%q: %v (exit %d), stdout %q; want a usage error", args, err, cli.ExitCode(err), stdout.String())
		}
	}
}

// TestNewCommandsHelp: list, cancel and watch say what they do and name
// the variables and exit statuses, as every client command does.
func TestNewCommandsHelp(t *testing.T) {
	for _, cmd := range []string{"list", "cancel", "watch"} {
		var stdout, stderr bytes.Buffer
		if err := Run(context.Background(), []string{cmd, "-h"}, &stdout, &stderr); cli.ExitCode(err) != 0 {
			t.Fatalf("%s -h: %v", cmd, err)
		}
		help := stderr.String()
		for _, s := range []string{"usage: wololo client " + cmd, "--json", EnvServer, cli.ExitCodes} {
			if !strings.Contains(help, s) {
				t.Errorf("%s -h lacks %q:\n%s", cmd, s, help)
			}
		}
	}
	var stdout bytes.Buffer
	_ = Run(context.Background(), []string{"help"}, &stdout, &stdout)
	for _, s := range []string{"\n  list ", "\n  cancel "} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("client help lacks %q:\n%s", s, stdout.String())
		}
	}
}

// TestListOnAnOlderGateway: a gateway without ListJobs is named as older
// than the client, not reported as an obscure gRPC error.
func TestListOnAnOlderGateway(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	wololov1.RegisterJobServiceServer(srv, wololov1.UnimplementedJobServiceServer{})
	go srv.Serve(l)
	defer srv.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err = Run(ctx, []string{"list", "--insecure", "--server", l.Addr().String()}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "older than this client") || stdout.Len() != 0 {
		t.Errorf("list on a gateway without ListJobs: %v, stdout %q", err, stdout.String())
	}
}
