package durable

import (
	"testing"
	"time"

	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// BenchmarkStore runs the stores' shared benchmarks (storetest.Benchmarks;
// the segment store in transport/segstore runs the same):
//
//	go test -run='^$' -bench=Store -benchtime=2s ./transport/durable/
func BenchmarkStore(b *testing.B) {
	storetest.Benchmarks(b, func(dir string, noSync bool) (transport.Store, error) {
		return Open(dir, Options{NoSync: noSync})
	}, 3*time.Second)
}
