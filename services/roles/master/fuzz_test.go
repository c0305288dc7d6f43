package master

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/election"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// FuzzReadTerm: no term file makes ReadTerm panic, and a term it accepts
// is the one the Elector would have written for it.
func FuzzReadTerm(f *testing.F) {
	for _, s := range []string{"7\n", "0", "", " 12 ", "18446744073709551615\n", "18446744073709551616", "-1", "seven", "1e3", "0x10", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		path := filepath.Join(t.TempDir(), "term")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadTerm(path)
		if err != nil {
			return
		}
		if err := os.WriteFile(path, []byte(strconv.FormatUint(uint64(got), 10)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if again, err := ReadTerm(path); err != nil || again != got {
			t.Fatalf("%q read as term %d, which reads back as %d, %v", content, got, again, err)
		}
	})
}

// FuzzDeliver: any election message a peer (or anyone) sends gets OK or
// InvalidArgument, never a panic, and the master's term never goes down.
func FuzzDeliver(f *testing.F) {
	f.Add(int32(wololov1.ElectionKind_ELECTION_KIND_HEARTBEAT), int32(3), int32(2), uint64(1), uint64(4))
	f.Add(int32(wololov1.ElectionKind_ELECTION_KIND_COORDINATOR), int32(3), int32(2), uint64(1<<63), uint64(1<<63))
	f.Add(int32(wololov1.ElectionKind_ELECTION_KIND_ELECTION), int32(1), int32(2), ^uint64(0), ^uint64(0))
	f.Add(int32(0), int32(0), int32(0), uint64(0), uint64(0))
	f.Add(int32(-5), int32(-1), int32(-2), uint64(7), uint64(0))
	srv := &electionServer{m: newTestMaster(f, 2, &fakeRuntime{})}
	var term election.Term
	f.Fuzz(func(t *testing.T, kind, from, to int32, msgTerm, seq uint64) {
		_, err := srv.Deliver(context.Background(), &wololov1.DeliverRequest{
			Kind: wololov1.ElectionKind(kind), From: from, To: to, Term: msgTerm, Seq: seq,
		})
		if c := status.Code(err); c != codes.OK && c != codes.InvalidArgument {
			t.Fatalf("code %s: %v", c, err)
		}
		now := srv.m.elector.State().Term
		if now < term {
			t.Fatalf("term went down from %d to %d", term, now)
		}
		term = now
	})
}
