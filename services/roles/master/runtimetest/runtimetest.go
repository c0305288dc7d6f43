// Package runtimetest is a conformance suite for the masters' process
// runtimes (master.Runtime: the local runner's ProcessService, Docker
// containers through the Engine API, Docker Swarm services): Run drives a
// runtime over a running deployment of real processes and checks the
// contract the supervision loop relies on (master.Loop): every instance
// listed once, with what names its process and where it serves; Start of
// a running instance starts nothing and of a stopped one starts one
// process, however often it is asked; Kill ends the process at once,
// paused or not, and of a stopped instance does nothing; a process that
// dies of itself is seen exited; unknown instances are errors; a second
// runtime on the same deployment (a newly elected master's) sees and
// drives the same processes; concurrent calls are safe, and a cancelled
// context fails a call rather than acting.
//
// It decides nothing and knows no runtime: the caller's Deployment brings
// the runtime, the processes behind it and what it promises beyond the
// common contract (a new Ref for every process, restart counts). It may
// import the master package and the standard library; the test helpers of
// internal/testkit are for tests only, so its waits are its own: polls of
// the runtime's own List.
package runtimetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wololo/wololo/services/roles/master"
)

// Deployment is a runtime under test and the processes behind it. Every
// instance runs when Run is called, and Run leaves every one running
// again after each of its checks.
type Deployment struct {
	// Runtime is the runtime under test.
	Runtime master.Runtime
	// Instances are names the runtime knows (at least two): the suite
	// kills, pauses and starts them. The runtime may know others; it
	// touches only these.
	Instances []string
	// Reopen returns another Runtime on the same deployment, as a master
	// elected after the first makes (the caller closes it when the test
	// ends).
	Reopen func(t *testing.T) master.Runtime
	// Crash ends p's process from outside the runtime (a SIGKILL that no
	// Kill sent, as when a process dies of itself).
	Crash func(t *testing.T, p master.Process)
	// Pause, if set, stops p's process without ending it (SIGSTOP, docker
	// pause): a wedged process, which Kill must still end.
	Pause func(t *testing.T, p master.Process)
	// Serves, if set, reports whether p's process answers (a gRPC health
	// check of it, within ctx): the suite checks the processes themselves,
	// not only what the runtime says of them.
	Serves func(ctx context.Context, p master.Process) bool
	// Settle bounds how long a change takes to show (a kill in List, a
	// started process serving); 30 s if zero.
	Settle time.Duration
	// RefPerProcess: every process gets a Ref of its own (a pid, a swarm
	// task), so a restart changes it. Without it Ref names something
	// restarted in place (a container), and only has to stay the same.
	RefPerProcess bool
	// CountsRestarts: Process.Restarts counts the processes Start started.
	CountsRestarts bool
}

// Unknown is an instance name no deployment has.
const Unknown = "runtimetest-unknown-0"

// Run checks the runtime of d; see the package doc.
func Run(t *testing.T, d Deployment) {
	if len(d.Instances) < 2 {
		t.Fatalf("runtimetest: %d instances, want at least two", len(d.Instances))
	}
	if d.Settle <= 0 {
		d.Settle = 30 * time.Second
	}
	s := &suite{Deployment: d}
	checks := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"lists every instance running", s.listsEveryInstance},
		{"start of a running instance starts nothing", s.startRunning},
		{"kill ends only its instance's process", s.killEndsOnlyIt},
		{"kill of a stopped instance does nothing", s.killStopped},
		{"start brings a stopped instance back", s.startStopped},
		{"start asked twice starts one process", s.startTwice},
		{"a process that died of itself is listed exited and restarted", s.crashed},
		{"a paused process is listed running and kill ends it", s.paused},
		{"unknown instances are errors", s.unknown},
		{"a second runtime sees and drives the same processes", s.reopened},
		{"concurrent calls", s.concurrent},
		{"a cancelled context fails the calls and changes nothing", s.cancelled},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			s.allRunning(t, s.Runtime)
			c.run(t)
			s.allRunning(t, s.Runtime)
		})
	}
}

type suite struct{ Deployment }

// listing is a List by instance.
type listing map[string]master.Process

func (l listing) String() string {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "\n\t%+v", l[n])
	}
	return b.String()
}

func (s *suite) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), s.Settle)
	t.Cleanup(cancel)
	return ctx
}

// list lists, failing t on an error or an instance listed twice.
func (s *suite) list(t *testing.T, rt master.Runtime) listing {
	t.Helper()
	ps, err := rt.List(s.ctx(t))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	l := listing{}
	for _, p := range ps {
		if _, twice := l[p.Instance]; twice {
			t.Fatalf("List names %s twice: %+v", p.Instance, ps)
		}
		l[p.Instance] = p
	}
	return l
}

// await lists until cond holds and returns that listing; it fails t with
// the last listing after Settle.
func (s *suite) await(t *testing.T, rt master.Runtime, what string, cond func(listing) bool) listing {
	t.Helper()
	deadline := time.Now().Add(s.Settle)
	for {
		l := s.list(t, rt)
		if cond(l) {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, still not %s; the runtime lists:%s", s.Settle, what, l)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// running is whether instance is listed running.
func running(l listing, instance string) bool { return l[instance].Running }

// down is whether the process p was is gone: instance not listed (a swarm
// task on its way), listed not running, or listed with another process.
func (s *suite) down(l listing, p master.Process) bool {
	now, ok := l[p.Instance]
	return !ok || !now.Running || s.RefPerProcess && now.Ref != p.Ref
}

// serves waits until p's process answers, when the deployment can tell.
func (s *suite) serves(t *testing.T, p master.Process) {
	t.Helper()
	if s.Serves == nil {
		return
	}
	deadline := time.Now().Add(s.Settle)
	for !s.answers(p, time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (%s) listed running but does not answer after %s", p.Instance, p.Ref, s.Settle)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *suite) answers(p master.Process, within time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return s.Serves(ctx, p)
}

// silent fails t if p's process answers.
func (s *suite) silent(t *testing.T, p master.Process, why string) {
	t.Helper()
	if s.Serves != nil && s.answers(p, 500*time.Millisecond) {
		t.Fatalf("%s (%s) answers, but %s", p.Instance, p.Ref, why)
	}
}

// allRunning starts every instance that is not running and waits until
// each is listed running and answers.
func (s *suite) allRunning(t *testing.T, rt master.Runtime) listing {
	t.Helper()
	for in, p := range s.list(t, rt) {
		if slices.Contains(s.Instances, in) && !p.Running {
			if _, err := rt.Start(s.ctx(t), in); err != nil {
				t.Fatalf("Start %s: %v", in, err)
			}
		}
	}
	l := s.await(t, rt, "every instance running", func(l listing) bool {
		return !slices.ContainsFunc(s.Instances, func(in string) bool { return !running(l, in) })
	})
	for _, in := range s.Instances {
		s.serves(t, l[in])
	}
	return l
}

// kill kills instance through rt and waits until its process is down.
func (s *suite) kill(t *testing.T, rt master.Runtime, before master.Process) listing {
	t.Helper()
	if err := rt.Kill(s.ctx(t), before.Instance); err != nil {
		t.Fatalf("Kill %s: %v", before.Instance, err)
	}
	return s.await(t, rt, before.Instance+"'s process killed", func(l listing) bool { return s.down(l, before) })
}

// exited waits until rt lists instance, not running.
func (s *suite) exited(t *testing.T, rt master.Runtime, instance string) listing {
	t.Helper()
	return s.await(t, rt, instance+" listed not running", func(l listing) bool {
		p, ok := l[instance]
		return ok && !p.Running
	})
}

// runningAgain waits until rt lists instance running.
func (s *suite) runningAgain(t *testing.T, rt master.Runtime, instance string) listing {
	t.Helper()
	return s.await(t, rt, instance+" running again", func(l listing) bool { return running(l, instance) })
}

// stopped kills instance and waits until it is listed not running.
func (s *suite) stopped(t *testing.T, before master.Process) master.Process {
	t.Helper()
	s.kill(t, s.Runtime, before)
	return s.exited(t, s.Runtime, before.Instance)[before.Instance]
}

// restarted checks that after, listed running, is a new process of
// before's instance as the deployment promises, and that it answers.
func (s *suite) restarted(t *testing.T, before, after master.Process, starts int) {
	t.Helper()
	if !after.Running || after.Ref == "" || after.Exit != "" {
		t.Fatalf("after Start: %+v", after)
	}
	if after.Address != before.Address {
		t.Errorf("%s serves at %q after a restart, %q before", before.Instance, after.Address, before.Address)
	}
	if s.RefPerProcess && after.Ref == before.Ref {
		t.Errorf("the new process of %s has the old one's Ref %q", before.Instance, before.Ref)
	}
	if !s.RefPerProcess && after.Ref != before.Ref {
		t.Errorf("%s is restarted in place, but its Ref went from %q to %q", before.Instance, before.Ref, after.Ref)
	}
	if s.CountsRestarts && after.Restarts != before.Restarts+starts {
		t.Errorf("%s: %d restarts after %d starts, %d before", before.Instance, after.Restarts, starts, before.Restarts)
	}
	s.serves(t, after)
}

func (s *suite) listsEveryInstance(t *testing.T) {
	l := s.list(t, s.Runtime)
	for _, in := range s.Instances {
		p, ok := l[in]
		switch {
		case !ok:
			t.Errorf("%s is not listed:%s", in, l)
		case !p.Running || p.Exit != "" || p.Ref == "" || p.Address == "":
			t.Errorf("%s is listed %+v; want running, with a Ref and an Address and no Exit", in, p)
		}
	}
	if _, ok := l[Unknown]; ok {
		t.Errorf("%s is listed", Unknown)
	}
}

func (s *suite) startRunning(t *testing.T) {
	before := s.list(t, s.Runtime)
	for _, in := range s.Instances {
		if started, err := s.Runtime.Start(s.ctx(t), in); err != nil || started {
			t.Errorf("Start of running %s = %v, %v; want false, nil", in, started, err)
		}
	}
	after := s.list(t, s.Runtime)
	for _, in := range s.Instances {
		if b, a := before[in], after[in]; !a.Running || a.Ref != b.Ref || a.Restarts != b.Restarts {
			t.Errorf("Start of running %s changed it: %+v, was %+v", in, a, b)
		}
	}
}

func (s *suite) killEndsOnlyIt(t *testing.T) {
	before := s.list(t, s.Runtime)
	victim := before[s.Instances[0]]
	s.kill(t, s.Runtime, victim)
	l := s.exited(t, s.Runtime, victim.Instance)
	if p := l[victim.Instance]; p.Exit == "" || p.Address != victim.Address {
		t.Errorf("killed %s is listed %+v: want how it ended (Exit) and its Address", victim.Instance, p)
	}
	s.silent(t, victim, "it was killed")
	for _, in := range s.Instances[1:] {
		if b, a := before[in], l[in]; !a.Running || a.Ref != b.Ref {
			t.Errorf("killing %s touched %s: %+v, was %+v", victim.Instance, in, a, b)
		}
	}
}

func (s *suite) killStopped(t *testing.T) {
	victim := s.list(t, s.Runtime)[s.Instances[0]]
	dead := s.stopped(t, victim)
	if err := s.Runtime.Kill(s.ctx(t), victim.Instance); err != nil {
		t.Fatalf("Kill of stopped %s: %v; want nil, as for a process that ended on its own", victim.Instance, err)
	}
	time.Sleep(300 * time.Millisecond) // room for a start Kill must not make
	if p := s.list(t, s.Runtime)[victim.Instance]; p.Running || p.Ref != dead.Ref || p.Restarts != dead.Restarts {
		t.Fatalf("Kill of stopped %s changed it: %+v, was %+v", victim.Instance, p, dead)
	}
}

func (s *suite) startStopped(t *testing.T) {
	victim := s.list(t, s.Runtime)[s.Instances[1]]
	s.stopped(t, victim)
	// At once: the runtime that lists it stopped must start it.
	if started, err := s.Runtime.Start(s.ctx(t), victim.Instance); err != nil || !started {
		t.Fatalf("Start of stopped %s = %v, %v; want true, nil", victim.Instance, started, err)
	}
	l := s.runningAgain(t, s.Runtime, victim.Instance)
	s.restarted(t, victim, l[victim.Instance], 1)
	if started, err := s.Runtime.Start(s.ctx(t), victim.Instance); err != nil || started {
		t.Fatalf("Start of %s once it runs again = %v, %v; want false, nil", victim.Instance, started, err)
	}
}

func (s *suite) startTwice(t *testing.T) {
	victim := s.list(t, s.Runtime)[s.Instances[0]]
	s.stopped(t, victim)
	first, err := s.Runtime.Start(s.ctx(t), victim.Instance)
	if err != nil || !first {
		t.Fatalf("first Start of stopped %s = %v, %v; want true, nil", victim.Instance, first, err)
	}
	if _, err := s.Runtime.Start(s.ctx(t), victim.Instance); err != nil {
		t.Fatalf("second Start of %s: %v", victim.Instance, err)
	}
	l := s.runningAgain(t, s.Runtime, victim.Instance)
	now := l[victim.Instance]
	// A second process would replace the first, or show in the count.
	time.Sleep(time.Second)
	later := s.list(t, s.Runtime)[victim.Instance]
	if !later.Running || later.Ref != now.Ref || later.Restarts != now.Restarts {
		t.Fatalf("two Starts of %s: running %+v, then %+v", victim.Instance, now, later)
	}
	s.restarted(t, victim, later, 1)
}

func (s *suite) crashed(t *testing.T) {
	victim := s.list(t, s.Runtime)[s.Instances[1]]
	s.Crash(t, victim)
	l := s.exited(t, s.Runtime, victim.Instance)
	if p := l[victim.Instance]; p.Exit == "" {
		t.Errorf("%s died, listed without how: %+v", victim.Instance, p)
	}
	if started, err := s.Runtime.Start(s.ctx(t), victim.Instance); err != nil || !started {
		t.Fatalf("Start of crashed %s = %v, %v; want true, nil", victim.Instance, started, err)
	}
	l = s.runningAgain(t, s.Runtime, victim.Instance)
	s.restarted(t, victim, l[victim.Instance], 1)
}

func (s *suite) paused(t *testing.T) {
	if s.Pause == nil {
		t.Skip("the deployment cannot pause a process")
	}
	victim := s.list(t, s.Runtime)[s.Instances[0]]
	s.Pause(t, victim)
	// Listed running: it is the probes that find it silent.
	time.Sleep(300 * time.Millisecond)
	if p := s.list(t, s.Runtime)[victim.Instance]; !p.Running || p.Ref != victim.Ref {
		t.Fatalf("paused %s is listed %+v, was %+v; want running, the same process", victim.Instance, p, victim)
	}
	s.silent(t, victim, "it is paused")
	s.kill(t, s.Runtime, victim)
	if started, err := s.Runtime.Start(s.ctx(t), victim.Instance); err != nil || !started {
		t.Fatalf("Start of %s killed while paused = %v, %v; want true, nil", victim.Instance, started, err)
	}
	l := s.runningAgain(t, s.Runtime, victim.Instance)
	s.restarted(t, victim, l[victim.Instance], 1)
}

func (s *suite) unknown(t *testing.T) {
	if started, err := s.Runtime.Start(s.ctx(t), Unknown); err == nil {
		t.Errorf("Start of an unknown instance = %v, nil; want an error", started)
	}
	if err := s.Runtime.Kill(s.ctx(t), Unknown); err == nil {
		t.Error("Kill of an unknown instance: nil; want an error")
	}
	if _, ok := s.list(t, s.Runtime)[Unknown]; ok {
		t.Errorf("%s is listed after a Start and a Kill", Unknown)
	}
}

// same reports how two listings of the given instances differ in what
// names the processes, "" if they do not.
func same(a, b listing, instances []string) string {
	for _, in := range instances {
		pa, pb := a[in], b[in]
		if pa.Running != pb.Running || pa.Ref != pb.Ref || pa.Address != pb.Address || pa.PID != pb.PID {
			return fmt.Sprintf("%+v against %+v", pa, pb)
		}
	}
	return ""
}

func (s *suite) reopened(t *testing.T) {
	second := s.Reopen(t)
	a, b := s.list(t, s.Runtime), s.list(t, second)
	if d := same(a, b, s.Instances); d != "" {
		t.Fatalf("two runtimes list the deployment differently: %s", d)
	}
	if started, err := second.Start(s.ctx(t), s.Instances[0]); err != nil || started {
		t.Fatalf("the second runtime's Start of running %s = %v, %v", s.Instances[0], started, err)
	}
	// What one does, the other sees.
	victim := a[s.Instances[0]]
	s.kill(t, second, victim)
	s.await(t, s.Runtime, "the kill seen by the first runtime", func(l listing) bool { return s.down(l, victim) })
	s.exited(t, s.Runtime, victim.Instance)
	if started, err := second.Start(s.ctx(t), victim.Instance); err != nil || !started {
		t.Fatalf("the second runtime's Start of stopped %s = %v, %v", victim.Instance, started, err)
	}
	l := s.runningAgain(t, s.Runtime, victim.Instance) // the start seen by the first runtime
	if started, err := s.Runtime.Start(s.ctx(t), victim.Instance); err != nil || started {
		t.Fatalf("the first runtime's Start of %s, restarted by the second = %v, %v", victim.Instance, started, err)
	}
	s.restarted(t, victim, l[victim.Instance], 1)
	if d := same(l, s.list(t, second), s.Instances); d != "" {
		t.Fatalf("after a restart two runtimes list the deployment differently: %s", d)
	}
}

func (s *suite) concurrent(t *testing.T) {
	before := s.list(t, s.Runtime)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 4 {
				in := s.Instances[(g+i)%len(s.Instances)]
				if _, err := s.Runtime.List(s.ctx(t)); err != nil {
					errs <- fmt.Errorf("list: %w", err)
				}
				if started, err := s.Runtime.Start(s.ctx(t), in); err != nil || started {
					errs <- fmt.Errorf("start of running %s = %v, %v", in, started, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if d := same(before, s.list(t, s.Runtime), s.Instances); d != "" {
		t.Fatalf("concurrent Lists and Starts of running instances changed them: %s", d)
	}
}

func (s *suite) cancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := s.list(t, s.Runtime)
	if _, err := s.Runtime.List(ctx); err == nil {
		t.Error("List with a cancelled context: nil error")
	}
	running := before[s.Instances[0]]
	if err := s.Runtime.Kill(ctx, running.Instance); err == nil {
		t.Errorf("Kill of %s with a cancelled context: nil error", running.Instance)
	}
	victim := before[s.Instances[1]]
	dead := s.stopped(t, victim)
	if _, err := s.Runtime.Start(ctx, victim.Instance); err == nil || !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "cancel") {
		t.Errorf("Start of %s with a cancelled context: %v; want the cancellation", victim.Instance, err)
	}
	time.Sleep(300 * time.Millisecond) // room for a start that must not happen
	l := s.list(t, s.Runtime)
	if p := l[running.Instance]; !p.Running || p.Ref != running.Ref {
		t.Errorf("Kill with a cancelled context ended %s: %+v, was %+v", running.Instance, p, running)
	}
	if p := l[victim.Instance]; p.Running || p.Ref != dead.Ref {
		t.Errorf("Start with a cancelled context started %s: %+v, was %+v", victim.Instance, p, dead)
	}
}
