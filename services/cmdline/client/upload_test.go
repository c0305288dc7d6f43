package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/inputfile"
)

// scriptedUploads is a gateway whose uploads follow a script, one step
// per Upload call (the last step repeats).
type scriptedUploads struct {
	wololov1.UnimplementedJobServiceServer
	size  int64
	steps []string // "break": fail at once; "progress": commit some bytes, then fail; "done": the file is in

	mu    sync.Mutex
	calls int
}

func (s *scriptedUploads) Upload(stream wololov1.JobService_UploadServer) error {
	s.mu.Lock()
	step := s.steps[min(s.calls, len(s.steps)-1)]
	s.calls++
	s.mu.Unlock()
	if _, err := stream.Recv(); err != nil { // the start frame
		return err
	}
	switch step {
	case "progress":
		if err := stream.Send(&wololov1.UploadResponse{}); err != nil {
			return err
		}
		if _, err := stream.Recv(); err != nil { // some data
			return err
		}
		if err := stream.Send(&wololov1.UploadResponse{Offset: 4}); err != nil {
			return err
		}
		return status.Error(codes.Unavailable, "connection reset")
	case "done":
		return stream.Send(&wololov1.UploadResponse{Offset: s.size, Done: true})
	}
	return status.Error(codes.Unavailable, "gateway restarting")
}

// serveUploads serves gw on a loopback port for the test and returns a
// session to it.
func serveUploads(t *testing.T, gw wololov1.JobServiceServer) *Session {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	wololov1.RegisterJobServiceServer(srv, gw)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	s, err := Open(l.Addr().String(), nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestUploadRetries: an upload broken off is resumed after the policy's
// waits, with a line on stderr for each break; a break after progress
// counts the attempts from the start again; attempts breaks in a row
// without progress end it with the last error.
func TestUploadRetries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "matches.csv")
	if err := os.WriteFile(path, []byte("token\nabc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		steps []string
		fails bool
		lines []string
	}{
		{name: "resumes", steps: []string{"break", "progress", "break", "done"}, lines: []string{
			"upload of matches.csv interrupted (gateway restarting); resuming in 200ms (attempt 2 of 3)",
			"upload of matches.csv interrupted (connection reset); resuming in 200ms (attempt 2 of 3)",
			"upload of matches.csv interrupted (gateway restarting); resuming in 400ms (attempt 3 of 3)",
		}},
		{name: "gives up", steps: []string{"break"}, fails: true, lines: []string{
			"upload of matches.csv interrupted (gateway restarting); resuming in 200ms (attempt 2 of 3)",
			"upload of matches.csv interrupted (gateway restarting); resuming in 400ms (attempt 3 of 3)",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gw := &scriptedUploads{size: 10, steps: c.steps}
			s := serveUploads(t, gw)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var stderr bytes.Buffer
			src, err := inputfile.Open(path, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			err = uploadWithRetry(ctx, s, "job", input{path: path, src: src, file: wololov1.InputFile_INPUT_FILE_MATCHES}, 3, newProgress(&stderr, false))
			if (err != nil) != c.fails || (c.fails && status.Code(err) != codes.Unavailable) {
				t.Errorf("uploadWithRetry = %v; want failure %v", err, c.fails)
			}
			var got []string
			for _, line := range strings.Split(stderr.String(), "\n") {
				if strings.HasPrefix(line, "upload of ") {
					got = append(got, line)
				}
			}
			if strings.Join(got, "\n") != strings.Join(c.lines, "\n") {
				t.Errorf("stderr said\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.lines, "\n"))
			}
		})
	}
}

// resumingGateway takes an upload in two calls: the first acknowledges
// the content up to cut and breaks, the second says cut is committed and
// takes the rest, keeping what it received and the size the finish says.
type resumingGateway struct {
	wololov1.UnimplementedJobServiceServer
	cut int64

	mu       sync.Mutex
	calls    int
	rest     []byte
	finished int64
}

func (g *resumingGateway) Upload(stream wololov1.JobService_UploadServer) error {
	g.mu.Lock()
	g.calls++
	first := g.calls == 1
	g.mu.Unlock()
	if _, err := stream.Recv(); err != nil { // the start frame
		return err
	}
	if first {
		if err := stream.Send(&wololov1.UploadResponse{}); err != nil {
			return err
		}
		if _, err := stream.Recv(); err != nil {
			return err
		}
		if err := stream.Send(&wololov1.UploadResponse{Offset: g.cut}); err != nil {
			return err
		}
		return status.Error(codes.Unavailable, "connection reset")
	}
	if err := stream.Send(&wololov1.UploadResponse{Offset: g.cut}); err != nil {
		return err
	}
	for {
		req, err := stream.Recv()
		if err != nil {
			return err
		}
		if f := req.GetFinish(); f != nil {
			g.mu.Lock()
			g.finished = f.Size
			g.mu.Unlock()
			return stream.Send(&wololov1.UploadResponse{Offset: f.Size, Done: true})
		}
		g.mu.Lock()
		g.rest = append(g.rest, req.GetData()...)
		g.mu.Unlock()
	}
}

// TestUploadResumesCompressed: an upload of a gzip-compressed file, on
// disk or on standard input, broken after the gateway committed part of
// it, resumes at that offset of the decompressed CSV: the gateway gets
// the CSV's bytes from there, and the CSV's size at the finish.
func TestUploadResumesCompressed(t *testing.T) {
	var csv bytes.Buffer
	csv.WriteString("token,map\n")
	for i := range 500 {
		csv.WriteString("tok" + strings.Repeat("x", i%17) + ",arabia\n")
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(csv.Bytes())
	w.Close()
	path := filepath.Join(t.TempDir(), "matches.bin")
	if err := os.WriteFile(path, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
	}{{"a gzip file", path}, {"gzip on stdin", inputfile.Stdin}} {
		t.Run(c.name, func(t *testing.T) {
			gw := &resumingGateway{cut: 1234}
			s := serveUploads(t, gw)
			src, err := inputfile.Open(c.path, bytes.NewReader(z.Bytes()), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			in := input{path: c.path, src: src, file: wololov1.InputFile_INPUT_FILE_MATCHES, size: src.Size()}
			if err := uploadWithRetry(ctx, s, "job", in, 3, newProgress(nil, false)); err != nil {
				t.Fatal(err)
			}
			gw.mu.Lock()
			defer gw.mu.Unlock()
			if gw.calls != 2 || !bytes.Equal(gw.rest, csv.Bytes()[gw.cut:]) || gw.finished != int64(csv.Len()) {
				t.Fatalf("%d calls; resumed with %d bytes (want the CSV's %d from %d), finish at %d (want %d)", gw.calls, len(gw.rest), csv.Len()-int(gw.cut), gw.cut, gw.finished, csv.Len())
			}
		})
	}
}
