package chaos

import (
	"context"
	"crypto/tls"
	"sort"
	"sync"
	"time"

	"github.com/wololo/wololo/deploy"
	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/wire/rpc"
)

// MasterView is one master's answer to Status/Get, or why there was none.
type MasterView struct {
	Instance string
	ID       int
	Err      error // no answer (dead, restarting, wedged)
	Role     string
	Term     uint64
	Leader   int
	Acting   bool
}

// deployment is where the masters are: a local cluster, or a compose
// project's published ports.
type deployment interface {
	Topology() deploy.Topology
	Addr(instance string) string
	// OperatorTLS is how to call an instance's Status (nil: plain TCP).
	OperatorTLS(instance string) (*tls.Config, error)
}

// masterViews asks every master of the deployment for its Status at once,
// each with the given timeout. The views come sorted by id.
func masterViews(ctx context.Context, cl deployment, timeout time.Duration) []MasterView {
	top := cl.Topology()
	views := make([]MasterView, top.Masters)
	var wg sync.WaitGroup
	for i, in := range top.MasterInstances() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			views[i] = askMaster(ctx, cl, in, timeout)
		}()
	}
	wg.Wait()
	sort.Slice(views, func(i, j int) bool { return views[i].ID < views[j].ID })
	return views
}

func askMaster(ctx context.Context, cl deployment, in deploy.Instance, timeout time.Duration) MasterView {
	v := MasterView{Instance: in.Name(), ID: in.Index}
	tlsConfig, err := cl.OperatorTLS(in.Name())
	if err != nil {
		v.Err = err
		return v
	}
	conn, err := rpc.NewClient(cl.Addr(in.Name()), tlsConfig)
	if err != nil {
		v.Err = err
		return v
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := wololov1.NewStatusClient(conn).Get(cctx, &wololov1.GetRequest{})
	if err != nil {
		v.Err = err
		return v
	}
	m := r.GetMaster()
	v.Role, v.Term, v.Leader, v.Acting = m.GetElectionRole(), m.GetTerm(), int(m.GetLeader()), m.GetActing()
	return v
}

// agreedLeader is the leader every answering master names, when they all
// name the same one, it answers too and says it is acting; 0 otherwise.
// Masters that do not answer are not counted (they are down).
func agreedLeader(views []MasterView) int {
	leader, answered := 0, 0
	for _, v := range views {
		if v.Err != nil {
			continue
		}
		answered++
		if v.Leader == 0 || (leader != 0 && v.Leader != leader) {
			return 0
		}
		leader = v.Leader
	}
	if answered == 0 {
		return 0
	}
	for _, v := range views {
		if v.ID == leader && v.Err == nil && v.Role == "leader" && v.Acting {
			return leader
		}
	}
	return 0
}
