package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/operators"
	"github.com/wololo/wololo/services/schema"
	"github.com/wololo/wololo/services/stage"
	"github.com/wololo/wololo/transport"
)

// Config is what a Gateway needs.
type Config struct {
	Topology    deploy.Topology
	Store       transport.Store
	Outbox      *transport.Outbox
	Sender      *transport.Sender
	Log         hclog.Logger
	BatchRows   int
	OutboxLimit int
	// Retention is how long a job may go without any client activity
	// before it is dropped everywhere; DefaultRetention if 0.
	Retention time.Duration
}

// DefaultRetention is how long an abandoned job is kept.
const DefaultRetention = 24 * time.Hour

// Dropper deletes a job's state at every process of the graph; it retries
// until each has done so or ctx ends.
type Dropper func(ctx context.Context, job string) error

// Gateway implements JobService.
type Gateway struct {
	wololov1.UnimplementedJobServiceServer
	cfg  Config
	self deploy.Instance
	drop Dropper
	ctx  context.Context

	mu   sync.Mutex
	jobs map[string]*job
}

// fileStreams maps each input file to the stream its rows enter the graph on.
var fileStreams = map[schema.File]string{schema.Matches: operators.Matches, schema.Players: operators.Players}

// New returns a Gateway.
func New(cfg Config) (*Gateway, error) {
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
	if cfg.OutboxLimit == 0 {
		cfg.OutboxLimit = stage.DefaultOutboxLimit
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	gw := cfg.Topology.Gateway()
	for _, stream := range fileStreams {
		if st, ok := cfg.Topology.Stream(stream); !ok || st.From != gw.Name {
			return nil, fmt.Errorf("gateway: topology has no stream %q from %s", stream, gw.Name)
		}
	}
	return &Gateway{
		cfg: cfg, self: deploy.Instance{Stage: gw.Name}, jobs: map[string]*job{},
		drop: func(context.Context, string) error { return nil }, ctx: context.Background(),
	}, nil
}

// SetDropper sets how a deleted job is dropped at the other processes.
func (g *Gateway) SetDropper(d Dropper) { g.drop = d }

// fileState is one input file of a job.
type fileState struct {
	columns   []string
	size      int64
	offset    int64 // committed: every record before it is in the outbox
	report    schema.FileReport
	done      bool
	uploading bool
}

type job struct {
	id      string
	created time.Time
	log     hclog.Logger

	mu       sync.Mutex
	activity time.Time // last client call or progress, for retention
	state    wololov1.JobState
	message  string
	files    [2]*fileState
	results  map[string][]byte
	changed  chan struct{}
}

func (j *job) notifyLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

var jobIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func newJobID() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func headerFields(h *wololov1.FileHeader) [][]byte {
	out := make([][]byte, len(h.GetColumns()))
	for i, c := range h.GetColumns() {
		out[i] = []byte(c)
	}
	return out
}

// CreateJob checks both headers and creates the job.
func (g *Gateway) CreateJob(ctx context.Context, req *wololov1.CreateJobRequest) (*wololov1.CreateJobResponse, error) {
	if req.GetMatches() == nil || req.GetPlayers() == nil {
		return nil, status.Error(codes.InvalidArgument, "both file headers are required")
	}
	if _, err := schema.ParseMatchHeader(headerFields(req.Matches)); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if _, err := schema.ParsePlayerHeader(headerFields(req.Players)); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	id := req.GetJobId()
	if id == "" {
		id = newJobID()
	} else if !jobIDPattern.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "job id %q: use 1-64 letters, digits, '-' or '_'", id)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if j, ok := g.jobs[id]; ok {
		j.touch()
		return &wololov1.CreateJobResponse{JobId: id}, nil
	}
	meta := jobMeta{Created: time.Now().UnixMilli()}
	for _, h := range []*wololov1.FileHeader{req.Matches, req.Players} {
		meta.Files = append(meta.Files, fileMeta{Columns: h.Columns, Size: h.Size, DataOffset: h.DataOffset})
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	// The job exists once its description is durable: a gateway restarted
	// from now on knows it, and the client can resume its upload.
	if err := g.cfg.Store.Commit(&transport.Commit{Job: id, Records: map[string][]byte{recordMeta: b}}); err != nil {
		return nil, status.Errorf(codes.Unavailable, "store job %s: %v", id, err)
	}
	j := g.newJob(id, meta)
	g.jobs[id] = j
	j.log.Info("job created", "matches-bytes", req.Matches.Size, "players-bytes", req.Players.Size)
	return &wololov1.CreateJobResponse{JobId: id}, nil
}

// recordMeta is the record holding a job's description (jobMeta).
const recordMeta = "job/meta"

// jobMeta is what CreateJob persists of a job.
type jobMeta struct {
	Created int64      `json:"created_unix_ms"`
	Files   []fileMeta `json:"files"`
}

type fileMeta struct {
	Columns    []string `json:"columns"`
	Size       int64    `json:"size"`
	DataOffset int64    `json:"data_offset"`
}

func (g *Gateway) newJob(id string, meta jobMeta) *job {
	j := &job{
		id: id, created: time.UnixMilli(meta.Created), activity: time.Now(), log: g.cfg.Log.With("job", id),
		state: wololov1.JobState_JOB_STATE_UPLOADING, changed: make(chan struct{}),
	}
	for i, f := range meta.Files {
		j.files[i] = &fileState{columns: f.Columns, size: f.Size, offset: f.DataOffset, report: schema.FileReport{Missing: map[string]int64{}}}
	}
	return j
}

func (j *job) touch() {
	j.mu.Lock()
	j.activity = time.Now()
	j.mu.Unlock()
}

// Recover rebuilds the jobs the store holds (descriptions, upload offsets
// and reports, results), resumes dropping the jobs that were deleted, and
// starts the retention sweeper. It runs once, before serving.
func (g *Gateway) Recover(ctx context.Context, img *transport.Image) error {
	g.ctx = ctx
	g.mu.Lock()
	for id, ji := range img.Jobs {
		raw := ji.Records[recordMeta]
		if raw == nil {
			continue
		}
		var meta jobMeta
		if err := json.Unmarshal(raw, &meta); err != nil || len(meta.Files) != 2 {
			g.cfg.Log.Error("unreadable job description; dropping the job", "job", id, "error", err)
			go g.dropJob(id)
			continue
		}
		j := g.newJob(id, meta)
		for i, fs := range j.files {
			if raw := ji.Records[uploadKey(schema.File(i))]; raw != nil {
				var rec uploadRecord
				if err := json.Unmarshal(raw, &rec); err != nil {
					return fmt.Errorf("job %s: upload record of %s: %w", id, schema.File(i), err)
				}
				fs.offset, fs.done, fs.report = rec.Offset, rec.Done, cloneReport(rec.Report)
			}
		}
		if j.files[0].done && j.files[1].done {
			j.state = wololov1.JobState_JOB_STATE_RUNNING
		}
		if ji.Records[schema.ResultRecord(schema.ResultFiles[0])] != nil {
			j.setResultsLocked(ji.Records)
		}
		g.jobs[id] = j
		j.log.Info("job recovered", "state", j.state, "matches-offset", j.files[0].offset, "players-offset", j.files[1].offset)
	}
	g.mu.Unlock()
	for _, id := range img.Dropped {
		go g.dropJob(id)
	}
	go g.sweep(ctx)
	return nil
}

// sweep drops jobs without client activity for longer than the retention.
func (g *Gateway) sweep(ctx context.Context) {
	every := min(g.cfg.Retention/10, time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var idle []string
		g.mu.Lock()
		for id, j := range g.jobs {
			j.mu.Lock()
			if time.Since(j.activity) > g.cfg.Retention {
				idle = append(idle, id)
			}
			j.mu.Unlock()
		}
		g.mu.Unlock()
		for _, id := range idle {
			g.cfg.Log.Info("dropping abandoned job", "job", id, "retention", g.cfg.Retention)
			if err := g.deleteJob(id); err != nil {
				g.cfg.Log.Error("drop abandoned job", "job", id, "error", err)
			}
		}
	}
}

func (g *Gateway) lookup(id string) (*job, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	j, ok := g.jobs[id]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no job %q", id)
	}
	return j, nil
}

func fileOf(f wololov1.InputFile) (schema.File, error) {
	switch f {
	case wololov1.InputFile_INPUT_FILE_MATCHES:
		return schema.Matches, nil
	case wololov1.InputFile_INPUT_FILE_PLAYERS:
		return schema.Players, nil
	}
	return 0, status.Errorf(codes.InvalidArgument, "unknown input file %v", f)
}

// MaxRecordBytes bounds one CSV record, so that an unclosed quote cannot make
// the gateway buffer a whole file.
const MaxRecordBytes = 8 << 20

// uploadRecord is what a commit records about an upload.
type uploadRecord struct {
	Offset int64             `json:"offset"`
	Done   bool              `json:"done"`
	Report schema.FileReport `json:"report"`
}

// Upload takes one file of a job; see JobService.
func (g *Gateway) Upload(stream wololov1.JobService_UploadServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil {
		return status.Error(codes.InvalidArgument, "first upload frame must be start")
	}
	j, err := g.lookup(start.JobId)
	if err != nil {
		return err
	}
	j.touch()
	file, err := fileOf(start.File)
	if err != nil {
		return err
	}
	j.mu.Lock()
	fs := j.files[file]
	if fs.uploading {
		j.mu.Unlock()
		return status.Errorf(codes.FailedPrecondition, "job %s: %s is already being uploaded", j.id, file)
	}
	if fs.done {
		j.mu.Unlock()
		return stream.Send(&wololov1.UploadResponse{Offset: fs.offset, Rows: fs.report.Rows, Done: true})
	}
	fs.uploading = true
	offset, report := fs.offset, fs.report
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		fs.uploading = false
		j.mu.Unlock()
	}()

	log := j.log.With("file", file.String())
	in, err := NewIngest(file, fs.columns, fileStreams[file], offset, cloneReport(report))
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	out, err := stage.NewOutputs(g.cfg.Topology, g.self, j.id, []string{fileStreams[file]}, g.cfg.Outbox, g.cfg.BatchRows)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if err := stream.Send(&wololov1.UploadResponse{Offset: offset, Rows: report.Rows}); err != nil {
		return err
	}
	log.Info("upload started", "offset", offset)
	ctx := stream.Context()
	received := offset
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			log.Info("upload paused by client", "offset", in.Offset())
			return nil
		}
		if err != nil {
			log.Warn("upload broken", "offset", in.Offset(), "error", err)
			return err
		}
		switch f := req.Frame.(type) {
		case *wololov1.UploadRequest_Data:
			if err := g.cfg.Outbox.WaitRoom(ctx, out.Channels(), g.cfg.OutboxLimit); err != nil {
				return err
			}
			received += int64(len(f.Data))
			in.Feed(f.Data, false, out)
			if in.Pending() > MaxRecordBytes {
				return status.Errorf(codes.InvalidArgument, "%s: the record at byte %d is longer than %d bytes; is a quote left open?", file, in.Offset(), MaxRecordBytes)
			}
			if err := g.commit(j, file, in, out, false); err != nil {
				return err
			}
			if err := stream.Send(&wololov1.UploadResponse{Offset: in.Offset(), Rows: in.Report.Rows}); err != nil {
				return err
			}
		case *wololov1.UploadRequest_Finish:
			if f.Finish.Size != received {
				return status.Errorf(codes.DataLoss, "%s: client says the file has %d bytes, gateway received up to offset %d", file, f.Finish.Size, received)
			}
			in.Feed(nil, true, out)
			if err := g.commit(j, file, in, out, true); err != nil {
				return err
			}
			log.Info("upload complete", "rows", in.Report.Rows, "malformed", in.Report.Malformed)
			return stream.Send(&wololov1.UploadResponse{Offset: in.Offset(), Rows: in.Report.Rows, Done: true})
		default:
			return status.Error(codes.InvalidArgument, "expected data or finish")
		}
	}
}

func cloneReport(r schema.FileReport) schema.FileReport {
	c := r
	c.Missing = map[string]int64{}
	for k, v := range r.Missing {
		c.Missing[k] = v
	}
	return c
}

// commit writes what the ingest emitted, with the upload's new offset and
// report, and publishes it.
func (g *Gateway) commit(j *job, file schema.File, in *Ingest, out *stage.Outputs, done bool) error {
	entries, _ := out.Drain(done)
	rec := uploadRecord{Offset: in.Offset(), Done: done, Report: in.Report}
	b, err := json.Marshal(rec)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	c := &transport.Commit{Job: j.id, Outputs: entries, Records: map[string][]byte{uploadKey(file): b}}
	if err := g.cfg.Store.Commit(c); err != nil {
		return status.Errorf(codes.Unavailable, "commit upload of %s: %v", file, err)
	}
	g.cfg.Sender.Publish(entries)
	j.mu.Lock()
	defer j.mu.Unlock()
	fs := j.files[file]
	fs.offset, fs.report, fs.done = rec.Offset, cloneReport(in.Report), done
	j.activity = time.Now()
	if j.files[0].done && j.files[1].done && j.state == wololov1.JobState_JOB_STATE_UPLOADING {
		j.state = wololov1.JobState_JOB_STATE_RUNNING
		j.log.Info("both files uploaded; job running")
	}
	j.notifyLocked()
	return nil
}

// Finished is the sink runtime's OnFinish: the job's results are in.
func (g *Gateway) Finished(id string, records map[string][]byte) {
	j, err := g.lookup(id)
	if err != nil {
		g.cfg.Log.Warn("results for an unknown job", "job", id)
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.setResultsLocked(records)
	j.log.Info("job done", "elapsed", time.Since(j.created).Round(time.Millisecond))
}

func (j *job) setResultsLocked(records map[string][]byte) {
	j.results = map[string][]byte{}
	for _, name := range schema.ResultFiles {
		j.results[name] = records[schema.ResultRecord(name)]
	}
	j.state = wololov1.JobState_JOB_STATE_DONE
	j.activity = time.Now()
	j.notifyLocked()
}

func uploadKey(f schema.File) string { return "upload/" + f.String() }

func (j *job) snapshotLocked() *wololov1.Job {
	out := &wololov1.Job{JobId: j.id, State: j.state, Message: j.message, ElapsedSeconds: time.Since(j.created).Seconds()}
	for i, fs := range j.files {
		r := &wololov1.FileReport{
			File: schema.File(i).String(), Rows: fs.report.Rows, Malformed: fs.report.Malformed,
			Missing: map[string]int64{}, Offset: fs.offset, Size: fs.size, Done: fs.done,
		}
		for k, v := range fs.report.Missing {
			r.Missing[k] = v
		}
		if i == 0 {
			out.Matches = r
		} else {
			out.Players = r
		}
	}
	if j.results != nil {
		out.ResultRows = map[string]int64{}
		for name, data := range j.results {
			out.ResultRows[name] = int64(countLines(data) - 1)
		}
	}
	return out
}

func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}

// GetJob returns a job's state.
func (g *Gateway) GetJob(ctx context.Context, req *wololov1.GetJobRequest) (*wololov1.GetJobResponse, error) {
	j, err := g.lookup(req.GetJobId())
	if err != nil {
		return nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.activity = time.Now()
	return &wololov1.GetJobResponse{Job: j.snapshotLocked()}, nil
}

// WatchJob streams a job's state on every change (at most every 200 ms,
// at least every 2 s) until it is done or failed.
func (g *Gateway) WatchJob(req *wololov1.WatchJobRequest, stream wololov1.JobService_WatchJobServer) error {
	j, err := g.lookup(req.GetJobId())
	if err != nil {
		return err
	}
	for {
		j.mu.Lock()
		snap, changed := j.snapshotLocked(), j.changed
		j.mu.Unlock()
		if err := stream.Send(&wololov1.WatchJobResponse{Job: snap}); err != nil {
			return err
		}
		if snap.State == wololov1.JobState_JOB_STATE_DONE || snap.State == wololov1.JobState_JOB_STATE_FAILED {
			return nil
		}
		select {
		case <-stream.Context().Done():
			return stream.Context().Err()
		case <-changed:
			time.Sleep(200 * time.Millisecond)
		case <-time.After(2 * time.Second):
		}
	}
}

// resultChunk is the largest piece of a result file sent in one message.
const resultChunk = 1 << 20

// GetResults streams the four files of a finished job.
func (g *Gateway) GetResults(req *wololov1.GetResultsRequest, stream wololov1.JobService_GetResultsServer) error {
	j, err := g.lookup(req.GetJobId())
	if err != nil {
		return err
	}
	j.mu.Lock()
	state, results := j.state, j.results
	j.mu.Unlock()
	if state != wololov1.JobState_JOB_STATE_DONE {
		return status.Errorf(codes.FailedPrecondition, "job %s is %s, not done", j.id, state)
	}
	for _, name := range schema.ResultFiles {
		data := results[name]
		for {
			n := min(len(data), resultChunk)
			if err := stream.Send(&wololov1.GetResultsResponse{Name: name, Data: data[:n]}); err != nil {
				return err
			}
			data = data[n:]
			if len(data) == 0 {
				break
			}
		}
	}
	return nil
}

// DeleteJob drops a job the client has the results of: here at once
// (durably), and at every other process in the background.
func (g *Gateway) DeleteJob(ctx context.Context, req *wololov1.DeleteJobRequest) (*wololov1.DeleteJobResponse, error) {
	if _, err := g.lookup(req.GetJobId()); err != nil {
		return nil, err
	}
	if err := g.deleteJob(req.JobId); err != nil {
		return nil, status.Errorf(codes.Internal, "drop job %s: %v", req.JobId, err)
	}
	return &wololov1.DeleteJobResponse{}, nil
}

func (g *Gateway) deleteJob(id string) error {
	g.mu.Lock()
	delete(g.jobs, id)
	g.mu.Unlock()
	// The tombstone is durable before the client hears back; the other
	// processes follow, and a restarted gateway resumes telling them.
	if err := g.cfg.Store.DropJob(id); err != nil {
		return err
	}
	g.cfg.Log.Info("job deleted", "job", id)
	go g.dropJob(id)
	return nil
}

// dropJob tells every process to drop the job, retrying until they have.
func (g *Gateway) dropJob(id string) {
	if err := g.drop(g.ctx, id); err != nil && g.ctx.Err() == nil {
		g.cfg.Log.Error("could not drop the job everywhere", "job", id, "error", err)
	}
}
