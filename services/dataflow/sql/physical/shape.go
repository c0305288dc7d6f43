package physical

import (
	"errors"
	"fmt"

	"github.com/wololo/wololo/deploy"
)

// Shape is what the planner needs of the cluster: the gateway task, where
// the files are parsed and the results gathered, and the shard task, where
// the keyed operators run, one instance per key's hash; and the job's
// tables in the order their uploads end (Arrival), which decides the side
// of a join that it holds (rewrite.OptimizeFor).
type Shape struct {
	Gateway Task
	Shard   Task
	// Arrival is the job's tables in the order their inputs are uploaded
	// (sqljob.Check: matches, match_players, then each --table); nil:
	// every join as its query writes it.
	Arrival []string
}

// ShapeOf reads the shape of a topology: its gateway task, and its shard
// task, or the gateway's own when it has none (one task for all).
func ShapeOf(t deploy.Topology) (Shape, error) {
	if err := t.Validate(); err != nil {
		return Shape{}, fmt.Errorf("physical: the topology: %w", err)
	}
	gw := t.Gateway()
	if gw.Name == "" {
		return Shape{}, errors.New("physical: the topology has no gateway")
	}
	s := Shape{Gateway: Task{Name: gw.Name, Replicas: gw.Replicas}}
	s.Shard = s.Gateway
	if sh, ok := t.Shard(); ok {
		s.Shard = Task{Name: sh.Name, Replicas: sh.Replicas}
	}
	return s, nil
}
