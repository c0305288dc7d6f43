package segstore

import (
	"testing"
	"time"

	"github.com/wololo/wololo/transport"
	"github.com/wololo/wololo/transport/storetest"
)

// BenchmarkStore runs the stores' shared benchmarks (storetest.Benchmarks;
// the Pebble store in transport/durable runs the same):
//
//	go test -run='^$' -bench=Store/Commit -benchtime=2s ./transport/segstore/
//	WOLOLO_BENCH_JOB_MIB=290 go test -run='^$' -bench=Store/Job -benchtime=1x ./transport/segstore/
func BenchmarkStore(b *testing.B) {
	storetest.Benchmarks(b, func(dir string, noSync bool) (transport.Store, error) {
		return Open(dir, Options{NoSync: noSync})
	}, DefaultIdleAfter+time.Second)
}
