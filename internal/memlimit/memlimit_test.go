package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name        string
		base        int
		limit, live int64
		want        int
	}{
		{"well under the limit: GOGC's pace", 100, 384 * mib, 100 * mib, 100},
		{"a goal Margin under the limit", 100, 480 * mib, 300 * mib, 40},
		{"never past the least headroom", 100, 480 * mib, 420 * mib, 13},
		{"the live heap over the limit", 100, 384 * mib, 500 * mib, 13},
		{"GOGC's own pace is lower", 20, 480 * mib, 100 * mib, 20},
		{"a GOGC under the least headroom is kept", 5, 480 * mib, 420 * mib, 5},
		{"GOGC=off is kept", -1, 480 * mib, 420 * mib, -1},
		{"no live heap yet", 100, 480 * mib, 0, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Percent(c.base, c.limit, c.live); got != c.want {
				t.Fatalf("Percent(%d, %d, %d) = %d, want %d", c.base, c.limit, c.live, got, c.want)
			}
		})
	}
}

// TestStartPacesUnderTheSoftLimit holds a live heap whose GOGC goal
// passes the soft limit: after a collection the pace is Percent's of
// GOGC's, the limit Limit gives and the live heap the collection left
// (under 100: the goal Margin under the soft limit), the runtime's limit
// is at the ceiling, and stop puts GOGC's pace back.
func TestStartPacesUnderTheSoftLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	const setting, ceiling = 96 << 20, 512 << 20
	stop := Start(setting, ceiling, DefaultHeadroom, hclog.NewNullLogger())
	live := make([]byte, 64<<20)
	for i := range live {
		live[i] = byte(i)
	}
	waitLimit(t, func(l int64) bool { return l == ceiling })
	sample := []metrics.Sample{{Name: liveMetric}}
	want := func() int {
		heap, ok := liveHeap(sample)
		if !ok {
			t.Skip("this runtime does not measure the live heap")
		}
		return Percent(100, Limit(setting, ceiling, heap, DefaultHeadroom), heap)
	}
	deadline := time.Now().Add(10 * time.Second)
	for pace, w := gcPercent(), want(); pace != w || w >= 100; pace, w = gcPercent(), want() {
		if time.Now().After(deadline) {
			t.Fatalf("pace %d after collections with a 64 MiB live heap under a 96 MiB soft limit, want %d (under 100)", pace, w)
		}
		runtime.GC()
		runtime.Gosched()
	}
	runtime.KeepAlive(live)
	stop()
	if pace := gcPercent(); pace != 100 {
		t.Fatalf("pace %d after stop, want GOGC's 100", pace)
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

// TestGCPercentReadsThePace: gcPercent gives the pace last set, GOGC=off
// (-1) included, and reading it leaves it as it was.
func TestGCPercentReadsThePace(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	for _, pace := range []int{100, 37, 13, -1} {
		debug.SetGCPercent(pace)
		if got := gcPercent(); got != pace {
			t.Fatalf("gcPercent() = %d after SetGCPercent(%d)", got, pace)
		}
		if got := debug.SetGCPercent(pace); got != pace {
			t.Fatalf("the pace %d after gcPercent read it, want %d", got, pace)
		}
	}
}
