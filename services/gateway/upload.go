package gateway

import (
	"context"
	"fmt"
	"io"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/operators"
	"github.com/wololo/wololo/services/schema"
	"github.com/wololo/wololo/services/stage"
	"github.com/wololo/wololo/transport"
)

// fileStreams maps each input file to the stream its rows enter the graph on.
var fileStreams = map[schema.File]string{schema.Matches: operators.Matches, schema.Players: operators.Players}

// uploadStream is the part of an Upload call the upload path uses: frames
// in, acknowledged offsets out.
type uploadStream interface {
	Context() context.Context
	Recv() (*wololov1.UploadRequest, error)
	Send(*wololov1.UploadResponse) error
}

func fileOf(f wololov1.InputFile) (schema.File, error) {
	switch f {
	case wololov1.InputFile_INPUT_FILE_MATCHES:
		return schema.Matches, nil
	case wololov1.InputFile_INPUT_FILE_PLAYERS:
		return schema.Players, nil
	}
	return 0, errorf(ErrInvalid, "unknown input file %v", f)
}

// upload takes one file of a job from a stream: it parses every chunk
// (Ingest), commits the rows with the upload's new offset and report
// through the Committer, and acknowledges the offset. A client whose
// stream breaks resumes from the last acknowledged offset.
func (g *Gateway) upload(stream uploadStream) error {
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
	file, err := fileOf(start.File)
	if err != nil {
		return err
	}
	u, done, err := j.beginUpload(file)
	if err != nil {
		return err
	}
	if done {
		return stream.Send(&wololov1.UploadResponse{Offset: u.offset, Rows: u.report.Rows, Done: true})
	}
	defer u.end()

	log := j.log.With("file", file.String())
	in, err := NewIngest(file, j.files[file].columns, fileStreams[file], u.offset, u.report)
	if err == nil {
		in.MaxRecord = g.cfg.MaxRecordBytes
		in.OnOversized = func(at int64) {
			log.Warn("record over the size limit skipped, counted as malformed", "offset", at, "limit", in.maxRecord(), "flag", "--max-record-bytes")
		}
	}
	if err != nil {
		return kindError{ErrInvalid, err}
	}
	out, err := stage.NewOutputs(g.cfg.Topology, g.self, j.id, []string{fileStreams[file]}, g.cfg.BatchRows)
	if err != nil {
		return err
	}
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
		case <-ctx.Done():
		}
	}()
	received := u.offset
	frames := g.receive(stream)
	defer close(frames.done)
	for {
		req, err := frames.next(g.cfg.UploadIdle)
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
			if err := g.cfg.Committer.Outbox().WaitRoom(ctx, out.Channels(), g.cfg.OutboxLimit); err != nil {
				if ferr := j.failure(); ferr != nil {
					return ferr
				}
				return err
			}
			// What the client has already sent, up to commitBytes, goes
			// into the same commit: one sync for several chunks.
			for data, taken := f.Data, 0; ; {
				received += int64(len(data))
				if declared := j.files[file].size; received > declared {
					return errorf(ErrFull, "%s: more bytes than the %d its header declared; nothing past byte %d is taken", file, declared, in.Offset())
				}
				in.Feed(data, false, out)
				if taken += len(data); taken >= commitBytes {
					break
				}
				if data = frames.moreData(); data == nil {
					break
				}
			}
			if err := g.commitUpload(u, in, out, false); err != nil {
				return err
			}
			if err := stream.Send(&wololov1.UploadResponse{Offset: in.Offset(), Rows: in.Report.Rows}); err != nil {
				return err
			}
		case *wololov1.UploadRequest_Finish:
			if f.Finish.Size != received {
				return errorf(ErrDataLoss, "%s: client says the file has %d bytes, gateway received up to offset %d", file, f.Finish.Size, received)
			}
			in.Feed(nil, true, out)
			if err := g.commitUpload(u, in, out, true); err != nil {
				return err
			}
			log.Info("upload complete", "rows", in.Report.Rows, "malformed", in.Report.Malformed)
			return stream.Send(&wololov1.UploadResponse{Offset: in.Offset(), Rows: in.Report.Rows, Done: true})
		default:
			return errorf(ErrInvalid, "expected data or finish")
		}
	}
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

// next is the next frame, or an error after idle without one.
func (r *frameReader) next(idle time.Duration) (*wololov1.UploadRequest, error) {
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
	}
}

// commitUpload hands what the ingest emitted, with the upload's new offset
// and report, to the Committer. On a failed commit nothing is acknowledged
// and no sequence number is used up: the client resumes from the last
// acknowledged offset.
func (g *Gateway) commitUpload(u *upload, in *Ingest, out *stage.Outputs, done bool) error {
	if err := u.j.failure(); err != nil {
		return err
	}
	emit, _ := out.Drain(done)
	rec, err := u.record(in.Offset(), in.Report, done)
	if err != nil {
		return err
	}
	step := &transport.Step{Commit: transport.Commit{Job: u.j.id, Records: map[string][]byte{uploadKey(u.file): rec}}, Emit: emit}
	if _, err := g.cfg.Committer.Commit(step); err != nil {
		return errorf(ErrStore, "commit upload of %s: %v", u.file, err)
	}
	u.committed(in.Offset(), in.Report, done)
	return nil
}
