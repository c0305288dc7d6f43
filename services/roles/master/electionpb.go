package master

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/election"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
)

// The election's message kinds and the proto's are mapped one by one, both
// ways: the two enums are numbered alike today, but nothing but this
// switch keeps a kind added to one from being read as another. A kind
// either side does not know is refused with codes.InvalidArgument, the
// unspecified one included.

// kindToProto is the proto kind of an election message kind.
func kindToProto(k election.Kind) (wololov1.ElectionKind, error) {
	switch k {
	case election.KindElection:
		return wololov1.ElectionKind_ELECTION_KIND_ELECTION, nil
	case election.KindAlive:
		return wololov1.ElectionKind_ELECTION_KIND_ALIVE, nil
	case election.KindCoordinator:
		return wololov1.ElectionKind_ELECTION_KIND_COORDINATOR, nil
	case election.KindCoordinatorAck:
		return wololov1.ElectionKind_ELECTION_KIND_COORDINATOR_ACK, nil
	case election.KindHeartbeat:
		return wololov1.ElectionKind_ELECTION_KIND_HEARTBEAT, nil
	case election.KindHeartbeatAck:
		return wololov1.ElectionKind_ELECTION_KIND_HEARTBEAT_ACK, nil
	}
	return wololov1.ElectionKind_ELECTION_KIND_UNSPECIFIED, status.Errorf(codes.InvalidArgument, "election message kind %s has no proto kind", k)
}

// kindFromProto is the election message kind of a proto kind.
func kindFromProto(k wololov1.ElectionKind) (election.Kind, error) {
	switch k {
	case wololov1.ElectionKind_ELECTION_KIND_ELECTION:
		return election.KindElection, nil
	case wololov1.ElectionKind_ELECTION_KIND_ALIVE:
		return election.KindAlive, nil
	case wololov1.ElectionKind_ELECTION_KIND_COORDINATOR:
		return election.KindCoordinator, nil
	case wololov1.ElectionKind_ELECTION_KIND_COORDINATOR_ACK:
		return election.KindCoordinatorAck, nil
	case wololov1.ElectionKind_ELECTION_KIND_HEARTBEAT:
		return election.KindHeartbeat, nil
	case wololov1.ElectionKind_ELECTION_KIND_HEARTBEAT_ACK:
		return election.KindHeartbeatAck, nil
	}
	return election.KindUnspecified, status.Errorf(codes.InvalidArgument, "unknown election message kind %d", k)
}

// deliverRequest is the ElectionService/Deliver request carrying m.
func deliverRequest(m election.Message) (*wololov1.DeliverRequest, error) {
	k, err := kindToProto(m.Kind)
	if err != nil {
		return nil, err
	}
	return &wololov1.DeliverRequest{Kind: k, From: int32(m.From), To: int32(m.To), Term: uint64(m.Term), Seq: m.Seq}, nil
}

// send delivers one election message to another master (the driver's
// Send): one connection per master's address, shared through the pool,
// which resolves master-N again on every call, so a master that moved is
// found at its new address.
func (m *Master) send(ctx context.Context, msg election.Message) error {
	req, err := deliverRequest(msg)
	if err != nil {
		return err
	}
	conn, _, err := m.peers.Conn(deploy.Instance{Stage: deploy.MasterStage, Index: int(msg.To)}.Name())
	if err != nil {
		return err
	}
	_, err = wololov1.NewElectionServiceClient(conn).Deliver(ctx, req)
	return err
}
