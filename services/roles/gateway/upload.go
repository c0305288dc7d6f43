package gateway

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/base/inputlog"
	"github.com/wololo/wololo/services/dataflow/ingest"
	"github.com/wololo/wololo/services/dataflow/schema"
	"github.com/wololo/wololo/services/dataflow/stage"
	"github.com/wololo/wololo/transport"
)

// uploadStream is the part of an Upload call the upload path uses: frames
// in, acknowledged offsets out.
type uploadStream interface {
	Context() context.Context
	Recv() (*wololov1.UploadRequest, error)
	Send(*wololov1.UploadResponse) error
}

// inputOf is the index in its epoch's files (j.files for a batch job) of
// the input an upload names: one of the two files, or one of the job's
// tables by name (file unspecified).
func (j *job) inputOf(start *wololov1.UploadStart, epoch int64) (int, error) {
	if start.Table != "" {
		if start.File != wololov1.InputFile_INPUT_FILE_UNSPECIFIED {
			return 0, errorf(ErrInvalid, "an upload of %v and of table %q: name one", start.File, start.Table)
		}
		j.mu.Lock() // an append may add an epoch meanwhile
		files := j.epochFiles(epoch)
		j.mu.Unlock()
		for i, fs := range files {
			if fs.isTable && fs.table == start.Table {
				return i, nil
			}
		}
		return 0, errorf(ErrInvalid, "job %q has no table %q", j.name, start.Table)
	}
	var f schema.File
	switch start.File {
	case wololov1.InputFile_INPUT_FILE_MATCHES:
		f = schema.Matches
	case wololov1.InputFile_INPUT_FILE_PLAYERS:
		f = schema.Players
	default:
		return 0, errorf(ErrInvalid, "unknown input file %v", start.File)
	}
	if j.files[f].absent {
		return 0, errorf(ErrInvalid, "job %q has no %s (a job of tables only): upload its tables", j.name, f)
	}
	return int(f), nil
}

// upload takes one file of a job from a stream: it parses every chunk
// (Ingest), commits the rows with the upload's new offset and report
// through the Committer, and acknowledges the offset. A client whose
// stream breaks resumes from the last acknowledged offset.
func (g *Gateway) upload(stream uploadStream) (err error) {
	// A first frame that does not come within --first-frame-timeout ends
	// the stream with DeadlineExceeded (services/wire/rpc); no upload
	// slot is taken before it.
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil {
		return errorf(ErrInvalid, "first upload frame must be start")
	}
	owner, err := g.identify(stream.Context())
	if err != nil {
		return err
	}
	j, err := g.jobs.lookup(owner, start.JobId)
	if err != nil {
		return err
	}
	// A rebuilt run takes the client's bytes once its replay of the
	// retained ones is over (rebuild.go).
	_, replay := stream.(*replayStream)
	if !replay {
		select {
		case <-j.replayed:
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
	}
	// A run replaced while this upload fed it (rebuild.go): the client
	// resumes into the new run.
	defer func() {
		if err != nil && j.follow() != j {
			err = errorf(ErrRebuilt, "job %q lost a process's state and runs again from the input the gateway kept; resume the upload", j.name)
		}
	}()
	if len(j.plan) == 0 {
		// A job of the hand-written graph an older version ran, which
		// this one does not run: nothing of it is introduced or sent.
		// It takes the lost-state path (the processes that hold it
		// report it unrestorable: stage.ErrNoPlan), run again from its
		// retained input or submitted again by its client.
		return errorf(ErrJobFailed, "job %q ran on the hand-written graph of an older version, which this one does not run: it runs again from the input the gateway kept, or its client submits it again", j.name)
	}
	// Every process knows the job before the first batch of it is sent.
	if err := g.introduce(stream.Context(), j); err != nil {
		return err
	}
	epoch, err := j.uploadEpoch(start)
	if err != nil {
		return err
	}
	file := 0
	if rs, ok := stream.(*replayStream); ok {
		file = rs.file // the gateway's own, by index (rebuild.go)
	} else if file, err = j.inputOf(start, epoch); err != nil {
		return err
	}
	u, done, err := j.beginUpload(epoch, file)
	if err != nil {
		return err
	}
	if done {
		return stream.Send(&wololov1.UploadResponse{Offset: u.offset, Rows: u.report.Rows, Done: true})
	}
	defer u.end()
	keep, err := g.retainer(u, replay)
	if err != nil {
		return err
	}
	defer keep.Close()
	paused := false
	defer func() { g.cfg.Counters.Upload(u.in.counter, uploadOutcome(err, paused)) }()

	log := j.log.With("file", u.in.name)
	in, err := ingest.New(u.offset, u.report)
	if err == nil {
		in.MaxRecord = g.cfg.MaxRecordBytes
		in.OnOversized = func(at int64) {
			log.Warn("record over the size limit skipped, counted as malformed", "offset", at, "limit", in.RecordLimit(), "flag", "--max-record-bytes")
		}
	}
	if err != nil {
		return kindError{ErrInvalid, err}
	}
	plan, err := g.newPlanUpload(j, u.fs, u.epoch, in) // its plan routes the rows
	if err != nil {
		return err
	}
	var cutter Cutter // a standing job's, with --epoch-every (cuts.go)
	if u.epoch > 0 {
		cutter = j.cutterFor(u.epoch, g.cfg.EpochCutter)
	}
	out := plan.out
	if err := stream.Send(&wololov1.UploadResponse{Offset: u.offset, Rows: u.report.Rows}); err != nil {
		return err
	}
	log.Info("upload started", "offset", u.offset)
	// The upload ends when its job fails: the failed channel's outbox is
	// never acknowledged again, and WaitRoom would wait for it forever.
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	go func() {
		select {
		case <-j.failed:
			cancel()
		case <-j.gone:
			cancel()
		case <-ctx.Done():
		}
	}()
	received := u.offset
	frames := g.receive(stream)
	defer close(frames.done)
	pipe := g.commitInBackground(u, stream, keep)
	defer pipe.stop()
	for {
		req, err := frames.next(stream.Context(), g.cfg.UploadIdle)
		if err == nil {
			err = pipe.failed()
		}
		if err == io.EOF {
			log.Info("upload paused by client", "offset", in.Offset())
			paused = true
			return pipe.stop()
		}
		if err != nil {
			log.Warn("upload broken", "offset", in.Offset(), "error", err)
			return err
		}
		switch f := req.Frame.(type) {
		case *wololov1.UploadRequest_Data:
			if err := g.cfg.Committer.Outbox().WaitRoom(ctx, out.Channels(), g.cfg.OutboxLimit); err != nil {
				if ferr := j.failure(); ferr != nil {
					return ferr
				}
				return err
			}
			// What the client has already sent, up to commitBytes, goes
			// into the same commit (one sync for several chunks), as long
			// as the receivers keep up: the batches of this step and those
			// not yet acknowledged stay within the outbox limit.
			for data, taken := f.Data, 0; ; {
				var ok bool
				if received, ok = sumSizes(received, int64(len(data))); !ok || received > u.fs.size {
					return errorf(ErrFull, "%s: more bytes than the %d its header declared; nothing past byte %d is taken", u.in, u.fs.size, in.Offset())
				}
				if err := keep.WriteAt(data, received-int64(len(data))); err != nil {
					return errorf(ErrStore, "%s: %v", u.in, err)
				}
				in.Feed(data, false)
				taken += len(data)
				releaseData(data) // the ingest keeps a copy of what it still needs
				if taken >= commitBytes || out.Built() >= g.cfg.OutboxLimit || !g.cfg.Committer.Outbox().HasRoom(out.Channels(), g.cfg.OutboxLimit) {
					break
				}
				if data = frames.moreData(); data == nil {
					break
				}
			}
			if plan != nil {
				if err := plan.flush(in); err != nil {
					return err
				}
			}
			if err := g.maybeCut(u, cutter, plan, in, pipe); err != nil {
				return err
			}
			if err := pipe.commit(ctx, in, out, false); err != nil {
				return err
			}
		case *wololov1.UploadRequest_Finish:
			if f.Finish.Size != received {
				return errorf(ErrDataLoss, "%s: client says the file has %d bytes, gateway received up to offset %d", u.in, f.Finish.Size, received)
			}
			in.Feed(nil, true)
			if u.epoch > 0 {
				// A standing job's table stays open for the epochs to
				// come: its Source is not ended, and the epoch ends
				// with the commit of its last file (endEpoch), one
				// step at a time.
				unlock, err := g.endOfStandingFile(u, plan, in, pipe)
				if err != nil {
					return err
				}
				defer unlock()
			} else if u.fs.more {
				// A one-off query's table goes on in a later
				// epoch's file (oneoff.go): flushed, not ended.
				if err := plan.flush(in); err != nil {
					return err
				}
				pipe.open = true
			} else if err := plan.end(in); err != nil {
				return err
			}
			// The share of malformed records is known now: past the job's
			// limit the job fails, in the same commit as the file's end.
			tooBad := u.in.checkMalformed(j.maxMalformed, in.Report)
			if tooBad != nil {
				pipe.failWith(tooBad.Error())
			}
			// The copy a rebuild would replay is whole on disk before
			// the file is recorded complete (inputlog).
			if err := keep.Sync(); err != nil {
				return errorf(ErrStore, "%s: %v", u.in, err)
			}
			if err := pipe.commit(ctx, in, out, true); err != nil {
				return err
			}
			if err := pipe.stop(); err != nil {
				return err
			}
			if tooBad != nil {
				log.Error("job failed", "reason", tooBad, "flag", "--max-malformed")
				return j.failure()
			}
			log.Info("upload complete", "rows", in.Report.Rows, "malformed", in.Report.Malformed)
			return nil
		default:
			return errorf(ErrInvalid, "expected data or finish")
		}
	}
}

// uploadOutcome is how an upload call that took its file's slot ended:
// paused when the client closed its stream (and nothing failed after),
// complete when it returned nil otherwise, broken on an error.
func uploadOutcome(err error, paused bool) string {
	switch {
	case err != nil:
		return UploadBroken
	case paused:
		return UploadPaused
	}
	return UploadComplete
}

// commitBytes is about how many uploaded bytes one commit takes at most
// when the client has sent them already: fewer, larger commits, each
// synced once.
const commitBytes = 4 << 20

// readAhead is how many frames the reader may receive before the upload
// path takes them.
const readAhead = 4

// frameReader receives an upload's frames in the background, so that the
// upload path can give up on a client that sends nothing for a while (an
// idle upload would hold its file's upload slot), and can take what has
// already arrived into one commit.
type frameReader struct {
	frames chan frame
	done   chan struct{} // closed when the upload path returns
	back   *frame        // a frame looked at by moreData and not taken
}

type frame struct {
	req *wololov1.UploadRequest
	err error
}

func (g *Gateway) receive(stream uploadStream) *frameReader {
	r := &frameReader{frames: make(chan frame, readAhead), done: make(chan struct{})}
	go func() {
		for {
			req, err := stream.Recv()
			select {
			case r.frames <- frame{req, err}:
			case <-r.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

// moreData takes the next frame if it has arrived and carries data; nil
// otherwise (a frame of another kind, or an error, waits for next).
func (r *frameReader) moreData() []byte {
	if r.back != nil {
		return nil
	}
	select {
	case f := <-r.frames:
		if d := f.req.GetData(); f.err == nil && d != nil {
			return d
		}
		r.back = &f
	default:
	}
	return nil
}

// next is the next frame, or an error after idle without one, or once ctx
// (the call's) ends: the client went, or the server ended the call (its
// certificate was revoked: services/wire/rpc), while the reader may still
// wait for a frame.
func (r *frameReader) next(ctx context.Context, idle time.Duration) (*wololov1.UploadRequest, error) {
	if f := r.back; f != nil {
		r.back = nil
		return f.req, f.err
	}
	t := time.NewTimer(idle)
	defer t.Stop()
	select {
	case f := <-r.frames:
		return f.req, f.err
	case <-t.C:
		return nil, kindError{context.DeadlineExceeded, fmt.Errorf("no upload frame for %s (--upload-idle): the upload is ended and its file free to resume", idle)}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// commitPipe commits an upload's steps in order, in the background, so
// that the next chunk is parsed while the last one's commit is written and
// synced; each step is acknowledged to the client once it is durable. A
// step waits while the one before it is queued, so at most two are ahead
// of the store. After a failed commit nothing more is committed or
// acknowledged, and no sequence number was used up: the client resumes
// from the last acknowledged offset.
type commitPipe struct {
	g      *Gateway
	u      *upload
	stream uploadStream
	// keep is the upload's copy for a rebuild: a step is committed only
	// once the copy holds its bytes (inputlog.Writer.Written).
	keep   *inputlog.Writer
	steps  chan pendingStep
	done   chan struct{} // closed when the committing goroutine ends
	err    error         // its first error; read after done, or by failed
	mu     sync.Mutex
	closed bool
	// listed is how many of the file's malformed records the steps queued
	// so far list (each step records only its own: rejectsKey).
	listed int
	// failure, when set, fails the job in the next step: its commit
	// records why, emits nothing, and nothing follows it.
	failure string
	// open keeps the outputs open at the file's end (a standing job's:
	// its tables take the next epochs' rows); extra are batches of other
	// tables' Sources the next step sends too, ends the epoch that step
	// ends (with its record), endsAppend the append whose input it makes
	// whole (standing.go, cuts.go), and after is called once the step is
	// committed or given up (it releases j.epochMu after a cut).
	open       bool
	extra      []stage.Emitted
	ends       *epochEnd
	endsAppend int64
	after      func()
}

// pendingStep is a step of the upload and where it leaves the file.
type pendingStep struct {
	step *transport.Step
	// emit is what the step sends on, encoded into step.Emit on the
	// committing goroutine, so that the next chunk's parse overlaps it as
	// it overlaps the commit.
	emit    []stage.Emitted
	offset  int64
	report  schema.FileReport
	done    bool
	failure string    // the job fails with this reason once committed
	at      time.Time // when, as the store records it
	// ends is the epoch of a standing job this step ends (it carries the
	// epoch's markers and record), nil if none; endsAppend the append
	// whose input it makes whole, 0 if none; after, if set, is called
	// once the step is committed or given up.
	ends       *epochEnd
	endsAppend int64
	after      func()
}

func (g *Gateway) commitInBackground(u *upload, stream uploadStream, keep *inputlog.Writer) *commitPipe {
	p := &commitPipe{g: g, u: u, stream: stream, keep: keep, steps: make(chan pendingStep, 1), done: make(chan struct{}), listed: len(u.report.Rejects)}
	go p.run()
	return p
}

func (p *commitPipe) run() {
	defer close(p.done)
	for s := range p.steps {
		if p.failed() != nil {
			s.release()
			continue // drain: nothing after a failure is committed
		}
		if err := p.commitOne(s); err != nil {
			p.mu.Lock()
			p.err = err
			p.mu.Unlock()
		}
		s.release()
	}
}

func (p *commitPipe) commitOne(s pendingStep) error {
	if err := p.keep.Written(s.offset); err != nil {
		return errorf(ErrStore, "%s: %v", p.u.in, err)
	}
	var err error
	if s.step.Emit, err = stage.Encode(s.emit); err == nil {
		_, err = p.g.cfg.Committer.Commit(s.step)
	}
	if err != nil {
		return errorf(ErrStore, "commit upload of %s: %v", p.u.in, err)
	}
	failed := s.failure != "" && p.u.j.fail(s.failure, s.at, false) // before the file is done: the job never runs
	if failed {
		p.g.cfg.Counters.JobEnded(OutcomeFailed)
	}
	if bytes, records, malformed := p.u.committed(s.offset, s.report, s.done); bytes != 0 || records != 0 || malformed != 0 {
		p.g.cfg.Counters.Committed(p.u.in.counter, bytes, records, malformed)
	}
	if s.ends != nil {
		p.u.j.epochEnded(s.ends)
	}
	if s.endsAppend > 0 {
		p.u.j.appendCommitted(s.endsAppend)
	}
	if s.failure != "" {
		return nil // the upload ends with the job's failure
	}
	return p.stream.Send(&wololov1.UploadResponse{Offset: s.offset, Rows: s.report.Rows, Done: s.done})
}

// failed is the first commit or acknowledgement error, if any.
func (p *commitPipe) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// commit queues what the ingest emitted, with the upload's new offset and
// report, as the next step.
func (p *commitPipe) commit(ctx context.Context, in *ingest.Ingest, out *stage.Outputs, done bool) error {
	s := pendingStep{offset: in.Offset(), report: cloneReport(in.Report), done: done, after: p.after}
	p.after = nil
	if err := p.u.j.failure(); err != nil {
		s.release()
		return err
	}
	rec, err := p.u.record(in.Offset(), in.Report, done)
	if err != nil {
		s.release()
		return err
	}
	records := map[string][]byte{uploadKey(p.u.in.key): rec}
	if n := len(in.Report.Rejects); n > p.listed {
		if records[rejectsKey(p.u.in.key, p.listed)], err = rejectsRecord(in.Report.Rejects[p.listed:]); err != nil {
			s.release()
			return err
		}
		p.listed = n
	}
	if p.failure == "" {
		s.emit, _ = out.Drain(done && !p.open)
		s.emit = append(s.emit, p.extra...)
		s.ends, s.endsAppend = p.ends, p.endsAppend
		p.extra, p.ends, p.endsAppend = nil, nil, 0
		if s.ends != nil {
			key, b, err := s.ends.record()
			if err != nil {
				s.release()
				return err
			}
			records[key] = b
		}
	} else {
		// A failed job's rows are not sent on: its answers would be
		// ignored. The failure is in the commit that ends the file, so a
		// gateway killed around it either parses the end again or knows
		// the job failed.
		s.failure, s.at = p.failure, time.UnixMilli(time.Now().UnixMilli())
		records[recordFailed], records[recordFailedAt] = []byte(s.failure), failedRecord(s.at)
	}
	s.step = &transport.Step{Commit: transport.Commit{Job: p.u.j.id, Records: records}}
	// The copy's writer starts on the step's bytes now; the committing
	// goroutine waits for them (commitOne).
	if err := p.keep.Push(); err != nil {
		s.release()
		return errorf(ErrStore, "%s: %v", p.u.in, err)
	}
	select {
	case p.steps <- s:
	case <-p.done:
		s.release()
	case <-ctx.Done():
		s.release()
		return ctx.Err()
	}
	return p.failed()
}

// release calls the step's after, if any, once: it is committed or given
// up.
func (s *pendingStep) release() {
	if s.after != nil {
		s.after()
		s.after = nil
	}
}

// failWith makes the next step fail the job with reason.
func (p *commitPipe) failWith(reason string) { p.failure = reason }

// stop waits until every queued step is committed and acknowledged, and
// returns the first error; it may be called more than once.
func (p *commitPipe) stop() error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.steps)
	}
	p.mu.Unlock()
	<-p.done
	return p.failed()
}
