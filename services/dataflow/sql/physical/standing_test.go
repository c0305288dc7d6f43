package physical_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wololo/wololo/services/dataflow/sql/physical"
)

// TestStandingTravels: a standing plan's flag is encoded with it and read
// back, and its String says so; a batch plan's encoding has no such
// field, as before there was one.
func TestStandingTravels(t *testing.T) {
	p := &physical.Plan{Gateway: physical.Task{Name: "gateway", Replicas: 1}, Shard: physical.Task{Name: "shard", Replicas: 2}}
	batch, err := physical.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(batch, []byte("standing")) || strings.Contains(p.String(), "standing") {
		t.Errorf("a batch plan says standing: %s\n%s", batch, p)
	}
	p.Standing = true
	b, err := physical.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := physical.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Standing || !strings.Contains(back.String(), "standing:") {
		t.Errorf("decoded, the standing plan is not: %s\n%s", b, back)
	}
}
