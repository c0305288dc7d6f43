package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

func TestLimit(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name                   string
		setting, ceiling, live int64
		headroom               float64
		want                   int64
	}{
		{"live well under the setting", 384 * mib, 0, 100 * mib, 0.25, 384 * mib},
		{"live plus headroom just under", 400 * mib, 0, 320 * mib, 0.25, 400 * mib},
		{"live above the setting", 384 * mib, 0, 600 * mib, 0.25, 750 * mib},
		{"live plus headroom above", 384 * mib, 0, 320 * mib, 0.5, 480 * mib},
		{"no headroom", 384 * mib, 0, 500 * mib, 0, 500 * mib},
		{"no overflow", 1, 0, math.MaxInt64, 1, math.MaxInt64},
		{"under the ceiling", 384 * mib, 480 * mib, 300 * mib, 0.5, 450 * mib},
		{"stopped at the ceiling", 384 * mib, 480 * mib, 380 * mib, 0.5, 480 * mib},
		{"the ceiling too close: the least headroom", 384 * mib, 480 * mib, 440 * mib, 0.5, 495 * mib},
		{"the least headroom is no more than the headroom", 384 * mib, 480 * mib, 500 * mib, 0.05, 525 * mib},
		{"live under the setting, the ceiling no matter", 384 * mib, 400 * mib, 100 * mib, 0.5, 384 * mib},
		{"no overflow under a ceiling", 1, 1 << 40, math.MaxInt64, 1, math.MaxInt64},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Limit(c.setting, c.ceiling, c.live, c.headroom); got != c.want {
				t.Fatalf("Limit(%d, %d, %d, %v) = %d, want %d", c.setting, c.ceiling, c.live, c.headroom, got, c.want)
			}
		})
	}
}

// TestStartRaisesOverLiveHeap holds a live heap larger than the setting
// and waits until a collection has raised the limit over it; once the
// heap is freed, a collection puts the setting back.
func TestStartRaisesOverLiveHeap(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	const setting = 8 << 20
	stop := Start(setting, 0, DefaultHeadroom, hclog.NewNullLogger())
	defer stop()

	live := make([]byte, 64<<20)
	for i := range live {
		live[i] = byte(i)
	}
	waitLimit(t, func(l int64) bool { return l >= int64(len(live)) })
	runtime.KeepAlive(live)
	live = nil
	waitLimit(t, func(l int64) bool { return l == setting })
}

// waitLimit collects until the soft limit satisfies ok (the governor
// sets it from a finalizer, after the collection).
func waitLimit(t *testing.T, ok func(int64) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(debug.SetMemoryLimit(-1)) {
		if time.Now().After(deadline) {
			t.Fatalf("soft limit %d: not the one expected after collections", debug.SetMemoryLimit(-1))
		}
		runtime.GC()
		runtime.Gosched()
	}
}
