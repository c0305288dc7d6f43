// Package memlimit keeps a process's soft memory limit
// (runtime/debug.SetMemoryLimit) from turning into a collection loop.
//
// A soft limit makes the garbage collector work harder as the heap nears
// it, which frees garbage early and keeps a process's peak down. But when
// the live heap itself is above the limit (a standing job's state, which
// keeps both sides of its joins, is larger than a batch job's), every
// collection ends above it, so the next one starts at once: the collector
// runs back to back, up to half the CPU (the runtime's cap), freeing
// nothing, and the process's work waits on it. Start prevents that:
// after each collection it sets the limit to the larger of the setting
// and the live heap plus a headroom, so that a heap near or above the
// setting is collected as often as that headroom says, and one well
// under it (its headroom under the setting too: a batch job's, mostly)
// keeps the setting unchanged.
//
// The raised limit stops at a ceiling (the process's memory budget less
// what the runtime holds beside the heap), as long as that leaves the
// live heap MinHeadroom: a live heap of 380 MiB, the four default
// queries' standing state at the full dataset in one process, raised to
// 570 MiB by the headroom alone, put the process 130 MiB over its 512
// MiB budget; collected at 480 MiB instead, the process stays within it
// for the same CPU (measured with GOMEMLIMIT: 1.23x the live heap cost
// nothing more, 1.19x 11% more CPU). A live heap so large that the
// ceiling would leave it less than MinHeadroom is over the budget
// whatever the collector does: the limit is then raised over it, by
// MinHeadroom, rather than collect back to back.
//
// Collecting before the limit. A heap the collector lets grow to the
// runtime's limit costs more than its collections: the runtime keeps the
// memory it holds (the heap, its free pages included) under that limit
// too, so at each collection near it, it returns free pages to the
// kernel (madvise) that the next allocations fault back in, zeroed. The
// 30 analyst queries as one demo job (a live heap of about 300 MiB, the
// limit raised to 450) collected 488 times and spent 17.6 of their 99
// CPU-s in the kernel; without a limit, 7.5 (but 787 MB resident). So
// the governor paces the collector itself (debug.SetGCPercent) after
// each collection: the heap may grow by GOGC's share of the live heap
// (100 by default), but no further than Margin under the soft limit
// (Percent), never less than MinHeadroom; and the runtime's own limit
// sits at the ceiling (the budget less what the runtime holds beside
// the heap), a backstop for a burst, not the pace of every collection.
// A live heap well under the soft limit keeps GOGC's pace. Measured on
// that job (one process, 2 CPUs, the full dataset, this noisy machine,
// interleaved): 52.7 and 56.7 s (10.1 and 10.6 system CPU-s) against
// 64.1 and 64.9 s (19.6 and 20.5) with the runtime's limit at the soft
// limit, 511 MB resident in both. A margin of a quarter collected too
// often (55.5 s), one of a sixteenth left the runtime returning pages
// again (56.9 s, 12.7 system CPU-s); keeping the runtime's limit at the
// soft limit under the same pace saved a third as much (59.0, 61.0 s).
//
// It is a generic leaf: it imports nothing of this module
// (imports_test.go), so that any package may use it.
package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// DefaultHeadroom is the share of the live heap that a heap above the
// setting may grow by before the next collection: a collection per half
// the live heap allocated, where GOGC's default is one per live heap
// allocated. Measured on a standing job of the full dataset cut every
// second (2 shards, 2 CPUs): a quarter still left a third of its time
// in collections, a half most of what no limit at all saves, at about
// 1.5x the live heap in memory instead of 2x.
const DefaultHeadroom = 0.5

// MinHeadroom is the least share of the live heap the limit leaves it to
// grow by when the ceiling would leave less.
const MinHeadroom = 0.125

// Limit is the soft limit after a collection that left live bytes in
// use: the setting, or the live heap and its headroom if that is more,
// but not past ceiling (0: none) unless the live heap and MinHeadroom
// are (then those).
func Limit(setting, ceiling, live int64, headroom float64) int64 {
	raised := float64(live) * (1 + headroom)
	if ceiling > 0 && raised > float64(ceiling) {
		raised = max(float64(ceiling), float64(live)*(1+min(headroom, MinHeadroom)))
	}
	if raised >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(setting, int64(raised))
}

// Margin is how far under the soft limit, as a share of it, the
// collector's pace puts the heap's next goal (Percent).
const Margin = 0.125

// Percent is the collector's pace (a GOGC percent) after a collection
// that left live bytes in use under a soft limit: base (GOGC's), or
// less, so that the heap's next goal, live * (1 + percent/100), stays
// Margin under the limit, but not less than MinHeadroom's share of the
// live heap (nor more than base). A negative base (GOGC=off) is kept.
func Percent(base int, limit, live int64) int {
	if base < 0 || live <= 0 {
		return base
	}
	goal := limit - int64(float64(limit)*Margin)
	room := (float64(goal) - float64(live)) * 100 / float64(live)
	if room >= float64(base) {
		return base
	}
	return min(base, max(int(room), int(math.Ceil(MinHeadroom*100))))
}

// gcPercent is the collector's pace now (GOGC's, or the last set; -1
// for off), read from the runtime's metric (gogcMetric) rather than by
// setting it, which would change the pace for a moment; GOGC's default,
// 100, where this runtime does not measure it.
func gcPercent() int {
	sample := []metrics.Sample{{Name: gogcMetric}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 100
	}
	return int(int64(sample[0].Value.Uint64())) // -1, off, is held as its two's complement
}

// gogcMetric is the runtime's collector pace, GOGC's percent.
const gogcMetric = "/gc/gogc:percent"

// liveHeap is the heap bytes the last collection marked live
// (liveMetric), and whether this runtime measures it.
func liveHeap(sample []metrics.Sample) (int64, bool) {
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0, false
	}
	return int64(min(sample[0].Value.Uint64(), math.MaxInt64)), true
}

// liveMetric is the runtime's count of the heap bytes the last
// collection marked live.
const liveMetric = "/gc/heap/live:bytes"

// Start sets the process's soft limit to setting (bytes, > 0) and keeps
// it at Limit(setting, ceiling, live heap, headroom) after every
// collection, the collector's pace at Percent of GOGC's, that limit and
// the live heap, and the runtime's memory limit at the larger of that
// limit and the ceiling, until the returned stop is called (which puts
// GOGC's pace back). It does its work in a finalizer run once per
// collection, so an idle process costs nothing. log says when the limit
// is first raised above the setting, and when it is back to it.
func Start(setting, ceiling int64, headroom float64, log hclog.Logger) (stop func()) {
	debug.SetMemoryLimit(max(setting, ceiling))
	base := gcPercent()
	g := &governor{setting: setting, ceiling: ceiling, headroom: headroom, base: base, log: log, sample: []metrics.Sample{{Name: liveMetric}}}
	g.arm()
	return func() {
		g.stopped.Store(true)
		debug.SetGCPercent(base)
	}
}

type governor struct {
	setting  int64
	ceiling  int64
	headroom float64
	base     int // GOGC's percent when Start was called
	log      hclog.Logger
	sample   []metrics.Sample
	stopped  atomic.Bool
	raised   bool
}

// sentinel is an object that only a finalizer refers to: it is freed,
// and its finalizer run, by the next collection.
type sentinel struct{ _ [16]byte }

func (g *governor) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) { g.afterGC() })
}

// afterGC runs on the runtime's finalizer goroutine, one call at a time.
func (g *governor) afterGC() {
	if g.stopped.Load() {
		return
	}
	defer g.arm()
	live, ok := liveHeap(g.sample)
	if !ok {
		return // not measured by this runtime: leave the setting
	}
	limit := Limit(g.setting, g.ceiling, live, g.headroom)
	debug.SetGCPercent(Percent(g.base, limit, live))
	debug.SetMemoryLimit(max(limit, g.ceiling))
	switch raised := limit > g.setting; {
	case raised && !g.raised:
		g.log.Info("live heap above the soft memory limit: limit raised over it, so that the collector does not run back to back", "setting-mib", g.setting>>20, "live-mib", live>>20, "limit-mib", limit>>20)
	case !raised && g.raised:
		g.log.Info("live heap under the soft memory limit again: limit back to its setting", "setting-mib", g.setting>>20)
	}
	g.raised = limit > g.setting
}
