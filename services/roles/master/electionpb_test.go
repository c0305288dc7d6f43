package master

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/election"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/wire/rpc"
)

// TestElectionKindsMapBothWays: every kind of the election round-trips
// through the proto under the same name, every named proto kind
// round-trips through the election, and the unspecified kind, an unknown
// proto number and an unknown election kind are refused with
// InvalidArgument. A kind added to either enum without a case here fails.
func TestElectionKindsMapBothWays(t *testing.T) {
	cases := []struct {
		kind  election.Kind
		proto wololov1.ElectionKind
	}{
		{election.KindElection, wololov1.ElectionKind_ELECTION_KIND_ELECTION},
		{election.KindAlive, wololov1.ElectionKind_ELECTION_KIND_ALIVE},
		{election.KindCoordinator, wololov1.ElectionKind_ELECTION_KIND_COORDINATOR},
		{election.KindCoordinatorAck, wololov1.ElectionKind_ELECTION_KIND_COORDINATOR_ACK},
		{election.KindHeartbeat, wololov1.ElectionKind_ELECTION_KIND_HEARTBEAT},
		{election.KindHeartbeatAck, wololov1.ElectionKind_ELECTION_KIND_HEARTBEAT_ACK},
	}
	for _, c := range cases {
		t.Run(c.kind.String(), func(t *testing.T) {
			p, err := kindToProto(c.kind)
			if err != nil || p != c.proto {
				t.Fatalf("to proto: %s, %v; want %s", p, err, c.proto)
			}
			back, err := kindFromProto(p)
			if err != nil || back != c.kind {
				t.Fatalf("back from proto: %s, %v; want %s", back, err, c.kind)
			}
			if want := "ELECTION_KIND_" + strings.ToUpper(strings.ReplaceAll(c.kind.String(), "-", "_")); p.String() != want {
				t.Fatalf("%s maps to %s, want %s", c.kind, p, want)
			}
		})
	}
	refused := func(t *testing.T, what string, err error) {
		t.Helper()
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", what, err)
		}
	}
	t.Run("every election kind is mapped or refused", func(t *testing.T) {
		mapped := map[election.Kind]bool{}
		for _, c := range cases {
			mapped[c.kind] = true
		}
		for k := range election.Kind(255) {
			_, err := kindToProto(k)
			named := !strings.HasPrefix(k.String(), "kind(")
			switch {
			case mapped[k]:
			case k == election.KindUnspecified || !named:
				refused(t, k.String(), err)
			default:
				t.Errorf("election kind %s has no case in this table", k)
			}
		}
	})
	t.Run("every proto kind is mapped or refused", func(t *testing.T) {
		mapped := map[wololov1.ElectionKind]bool{}
		for _, c := range cases {
			mapped[c.proto] = true
		}
		for n := range wololov1.ElectionKind_name {
			if k := wololov1.ElectionKind(n); !mapped[k] && k != wololov1.ElectionKind_ELECTION_KIND_UNSPECIFIED {
				t.Errorf("proto kind %s has no case in this table", k)
			}
		}
		for _, k := range []wololov1.ElectionKind{wololov1.ElectionKind_ELECTION_KIND_UNSPECIFIED, 7, 99, -1} {
			_, err := kindFromProto(k)
			refused(t, k.String(), err)
		}
	})
}

// TestDeliverRequestCarriesTheMessage: what a master sends is what the
// addressee's fromProto reads back, field by field.
func TestDeliverRequestCarriesTheMessage(t *testing.T) {
	m := newTestMaster(t, 2, &fakeRuntime{})
	want := election.Message{Kind: election.KindCoordinatorAck, From: 3, To: 2, Term: MaxTermStep, Seq: 42} // the highest term a fresh master takes
	req, err := deliverRequest(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.fromProto(req)
	if err != nil || got != want {
		t.Fatalf("round trip: %v, %v; want %v", got, err, want)
	}
	if _, err := deliverRequest(election.Message{Kind: 200, From: 3, To: 2}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("an unknown kind was sent: %v", err)
	}
}

// recordingElection is an ElectionService that keeps what it is sent.
type recordingElection struct {
	wololov1.UnimplementedElectionServiceServer
	got chan *wololov1.DeliverRequest
}

func (r *recordingElection) Deliver(_ context.Context, req *wololov1.DeliverRequest) (*wololov1.DeliverResponse, error) {
	r.got <- req
	return &wololov1.DeliverResponse{}, nil
}

// TestSendDeliversToTheResolvedMaster: send resolves master-N by name and
// delivers the message there; an unresolvable master is an error.
func TestSendDeliversToTheResolvedMaster(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	rec := &recordingElection{got: make(chan *wololov1.DeliverRequest, 1)}
	wololov1.RegisterElectionServiceServer(srv, rec)
	go srv.Serve(l)
	defer srv.Stop()

	m := newTestMaster(t, 2, &fakeRuntime{})
	m.peers = rpc.NewPool(rpc.StaticResolver(map[string]string{"master-3": l.Addr().String()}), nil)
	defer m.peers.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msg := election.Message{Kind: election.KindHeartbeat, From: 2, To: 3, Term: 5, Seq: 9}
	if err := m.send(ctx, msg); err != nil {
		t.Fatal(err)
	}
	got := <-rec.got
	if got.GetKind() != wololov1.ElectionKind_ELECTION_KIND_HEARTBEAT || got.GetFrom() != 2 || got.GetTo() != 3 || got.GetTerm() != 5 || got.GetSeq() != 9 {
		t.Fatalf("delivered %v, sent %v", got, msg)
	}
	msg.To = 1
	if err := m.send(ctx, msg); err == nil {
		t.Fatal("a message to an unresolvable master was sent")
	}
}
