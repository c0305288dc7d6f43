package gateway

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/wololo/wololo/transport"
)

// TestVersionsHoldNoAnswers: a standing job's versions are an index of
// the store's records, not copies of them: after 50 epochs of answers
// of 4 KiB per query, what the gateway's versions of the job reach
// (every byte slice and string, heldBytes) is a small fraction of the
// answers published, and grows with the epochs by a few bytes each, not
// by the answers' size. Every version is still read back whole, from
// the store, by results --epoch.
func TestVersionsHoldNoAnswers(t *testing.T) {
	store := transport.NewMemStore()
	g := newTestGateway(t, store, Config{Retention: time.Hour, Epochs: (&fakeEpochs{}).runtime()}, make(chan string, 8))
	svc := g.Service()
	if _, err := svc.CreateJob(context.Background(), standingRequest("s")); err != nil {
		t.Fatal(err)
	}
	answer := func(k int64, name string) []byte {
		return fmt.Appendf(nil, "n\n%s\n", bytes.Repeat(fmt.Appendf(nil, "%s@%d,", name, k), 4096/12))
	}
	var published int64
	held := map[int64]int64{}
	for k := int64(1); k <= 50; k++ {
		records := map[string][]byte{}
		for _, name := range q1to4 {
			records[fmt.Sprintf("version/%d/%s", k, name)] = answer(k, name)
			records[fmt.Sprintf("change/%d/%s", k, name)] = answer(k, name)
			published += 2 * int64(len(answer(k, name)))
		}
		publish(t, g, store, "s", records)
		j, _ := g.jobs.lookup("", "s")
		j.mu.Lock()
		held[k] = heldBytes(reflect.ValueOf(j.standing.versions), map[uintptr]bool{})
		j.mu.Unlock()
	}
	if held[50] > published/20 || held[50]-held[10] > 40*4*200 {
		t.Errorf("after 50 epochs (%d bytes of answers) the versions hold %d bytes (after 10: %d); want them to hold no answer", published, held[50], held[10])
	}
	for _, k := range []int64{1, 7, 50} {
		got, epoch, err := results(svc, "s", k)
		if err != nil || epoch != k || got["q3.csv"] != string(answer(k, "q3.csv")) {
			t.Fatalf("results --epoch %d: epoch %d, %v, q3 %.40q", k, epoch, err, got["q3.csv"])
		}
	}
}

// heldBytes is the length of every byte slice and string v reaches
// through pointers, maps, slices and structs (an interface, a store the
// value points at, is not followed), each pointer once.
func heldBytes(v reflect.Value, seen map[uintptr]bool) int64 {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return 0
		}
		seen[v.Pointer()] = true
		return heldBytes(v.Elem(), seen)
	case reflect.String:
		return int64(v.Len())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return int64(v.Len())
		}
		fallthrough
	case reflect.Array:
		var n int64
		for i := range v.Len() {
			n += heldBytes(v.Index(i), seen)
		}
		return n
	case reflect.Map:
		var n int64
		for it := v.MapRange(); it.Next(); {
			n += heldBytes(it.Key(), seen) + heldBytes(it.Value(), seen)
		}
		return n
	case reflect.Struct:
		var n int64
		for i := range v.NumField() {
			n += heldBytes(v.Field(i), seen)
		}
		return n
	}
	return 0
}
