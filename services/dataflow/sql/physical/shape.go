package physical

import (
	"errors"
	"fmt"

	"github.com/wololo/wololo/deploy"
)

// Shape is what the planner needs of the cluster: the gateway task, where
// the files are parsed and the results gathered, and the shard task, where
// the keyed operators run, one instance per key's hash.
type Shape struct {
	Gateway Task
	Shard   Task
}

// ShapeOf reads the shape of a topology (planned into tasks if it is not
// yet): the gateway's task, and as the shard task the task the gateway's
// first stream to another task feeds (the task its uploads go to today),
// else the first other task, else the gateway's own (one task for all).
func ShapeOf(t deploy.Topology) (Shape, error) {
	pt, err := deploy.Plan(t)
	if err != nil {
		return Shape{}, fmt.Errorf("physical: the topology: %w", err)
	}
	gw := pt.Gateway()
	if gw.Name == "" {
		return Shape{}, errors.New("physical: the topology has no gateway")
	}
	s := Shape{Gateway: Task{Name: gw.Name, Replicas: gw.Replicas}}
	s.Shard = s.Gateway
	for _, st := range pt.Outputs(gw.Name) {
		if st.To != gw.Name {
			s.Shard = Task{Name: st.To, Replicas: pt.Replicas(st.To)}
			return s, nil
		}
	}
	for _, st := range pt.Stages {
		if st.Name != gw.Name {
			s.Shard = Task{Name: st.Name, Replicas: st.Replicas}
			return s, nil
		}
	}
	return s, nil
}
