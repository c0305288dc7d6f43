package local

import "testing"

// TestStartInstanceOfADeadProcessNotYetReaped: between a process's exit
// (Processes lists it exited) and the moment its supervise goroutine
// clears it, StartInstance must still take the request, as the masters'
// runtime contract wants (services/roles/master/runtimetest caught it
// answering "not down" there, which left the instance down).
func TestStartInstanceOfADeadProcessNotYetReaped(t *testing.T) {
	dead := &proc{done: make(chan struct{})}
	close(dead.done)
	alive := &proc{done: make(chan struct{})}
	c := &Cluster{insts: map[string]*instance{
		"dead-0":  {name: "dead-0", cur: dead, startReq: make(chan struct{}, 1)},
		"alive-0": {name: "alive-0", cur: alive, startReq: make(chan struct{}, 1)},
	}}
	if started, err := c.StartInstance("dead-0"); err != nil || !started || len(c.insts["dead-0"].startReq) != 1 {
		t.Fatalf("StartInstance of an exited process not yet cleared = %v, %v, %d requests; want true, nil, 1", started, err, len(c.insts["dead-0"].startReq))
	}
	if started, err := c.StartInstance("alive-0"); err != nil || started || len(c.insts["alive-0"].startReq) != 0 {
		t.Fatalf("StartInstance of a running process = %v, %v, %d requests; want false, nil, 0", started, err, len(c.insts["alive-0"].startReq))
	}
}
