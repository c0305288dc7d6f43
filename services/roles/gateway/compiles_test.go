package gateway

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wololo/wololo/transport"
)

// TestCompileSlotsPerClient: a client holding its bound of compile slots
// is refused the next at once, ResourceExhausted naming
// --client-max-compiles, while another client is admitted; a slot given
// back admits the first client again.
func TestCompileSlotsPerClient(t *testing.T) {
	s := newCompileSlots(2, 8)
	var held []func()
	for range 2 {
		release, err := s.acquire(context.Background(), "a")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, release)
	}
	_, err := s.acquire(context.Background(), "a")
	if code := status.Code(toStatus(err)); code != codes.ResourceExhausted || !strings.Contains(err.Error(), "--client-max-compiles") {
		t.Fatalf("client a's third compile: %v (%v); want ResourceExhausted naming --client-max-compiles", err, code)
	}
	release, err := s.acquire(context.Background(), "b")
	if err != nil {
		t.Fatalf("client b's compile while a holds its two: %v", err)
	}
	release()
	held[0]()
	if release, err = s.acquire(context.Background(), "a"); err != nil {
		t.Fatalf("client a's compile once one of its two is over: %v", err)
	}
	release()
	held[1]()
}

// TestCompileSlotsInTotal: a call within its client's bound, when every
// slot of the gateway is held, waits for one as long as its context
// allows, then is refused naming --max-compiles, and gives its client's
// slot back; a slot given back admits the next call.
func TestCompileSlotsInTotal(t *testing.T) {
	s := newCompileSlots(2, 1)
	release, err := s.acquire(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the caller gave up while waiting
	for range 3 {
		_, err := s.acquire(ctx, "b")
		if code := status.Code(toStatus(err)); code != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-compiles") {
			t.Fatalf("client b's compile with every slot held: %v (%v); want ResourceExhausted naming --max-compiles", err, code)
		}
	}
	got := make(chan error, 1)
	go func() {
		r, err := s.acquire(context.Background(), "b") // b gave its slots back: within its bound
		if err == nil {
			r()
		}
		got <- err
	}()
	release()
	if err := <-got; err != nil {
		t.Fatalf("client b's compile once the slot is free: %v", err)
	}
}

// TestCreateJobWithinTheCompileSlots: through the JobService, a client
// whose compiles hold its --client-max-compiles is refused another
// CreateJob of queries at once, with nothing created, while another
// client's CreateJob is answered; a CreateJob of the built-in graph
// compiles nothing and takes no slot.
func TestCreateJobWithinTheCompileSlots(t *testing.T) {
	store := transport.NewMemStore()
	svc := testGatewayWith(t, store, Config{ClientMaxCompiles: 2, MaxCompiles: 4}, make(chan string, 1))
	g := svc.(jobService).g
	for range 2 { // two compiles of client a's that never end
		release, err := g.compiles.acquire(context.Background(), "a")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(release)
	}
	_, err := svc.CreateJob(as("a"), queryRequest("flood", civsQuery))
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--client-max-compiles") {
		t.Fatalf("client a's third CreateJob of queries: %v; want ResourceExhausted naming --client-max-compiles", err)
	}
	if jobs := storedJobs(t, store); len(jobs) != 0 {
		t.Fatalf("the refused CreateJob left jobs %v in the store", jobs)
	}
	if _, err := svc.CreateJob(as("b"), queryRequest("other", civsQuery)); err != nil {
		t.Fatalf("client b's CreateJob while a's compiles hold their slots: %v", err)
	}
}
