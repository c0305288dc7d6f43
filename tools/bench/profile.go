package bench

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// WhereTimeGoes is a sentence part naming the largest groups of a profile.
func WhereTimeGoes(groups []Share) string {
	var parts []string
	rest := 0.0
	for i, g := range groups {
		if i >= 7 || g.Percent < 3 {
			rest += g.Percent
			continue
		}
		part := fmt.Sprintf("%s %.0f%%", g.Group, g.Percent)
		var subs []string
		for j, sub := range g.Parts {
			if j < 4 && sub.Percent >= 1 {
				subs = append(subs, fmt.Sprintf("%s %.0f%%", sub.Group, sub.Percent))
			}
		}
		if len(subs) > 0 {
			part += " (" + strings.Join(subs, ", ") + ")"
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "spread thin, no group of functions has 3% of the samples"
	}
	s := strings.Join(parts, ", ")
	if rest >= 0.5 {
		s += fmt.Sprintf(", everything else %.0f%%", rest)
	}
	return s
}

// groups map function-name prefixes to groups, first match wins; runtime
// functions not listed are "other Go runtime", wololo's are named by
// package, anything else by its module.
var groups = []struct {
	name     string
	prefixes []string
}{
	{"garbage collection and allocation", []string{
		"runtime.mallocgc", "runtime.gc", "runtime.scan", "runtime.greyobject", "runtime.findObject", "runtime.markBits",
		"runtime.markroot", "runtime.(*mspan)", "runtime.(*mheap)", "runtime.(*mcache)", "runtime.(*mcentral)",
		"runtime.(*gcWork)", "runtime.(*gcBits)", "runtime.(*gcControllerState)", "runtime.sweepone", "runtime.bgsweep",
		"runtime.bgscavenge", "runtime.(*sweepLocked)", "runtime.(*sweepLocker)", "runtime.heapSetType", "runtime.wbBuf",
		"runtime.bulkBarrier", "runtime.memclrNoHeapPointers", "runtime.newobject", "runtime.makeslice",
		"runtime.growslice", "runtime.nextFreeFast", "runtime.(*spanSet)", "runtime.typePointers", "runtime.(*typePointers)",
		"runtime.spanOf", "runtime.pageIndexOf", "runtime.(*pageAlloc)", "runtime.(*scavenger", "runtime.tryDeferToSpanScan",
		"runtime.(*spanInlineMarkBits)", "runtime.(*gcDrain", "runtime.wbBufFlush", "runtime.rawbyteslice", "runtime.rawstring",
		"runtime.slicebytetostring", "runtime.concatstring", "runtime.(*mSpanStateBox)", "runtime.deductAssistCredit",
		"runtime.(*limiterEvent)", "runtime.(*gcCPULimiterState)", "runtime.madvise", "runtime.sysUnused", "runtime.sysUsed",
		"runtime.(*fixalloc)", "runtime.(*stackScanState)", "runtime.makemap", "runtime.mProf_Malloc", "runtime.profilealloc",
	}},
	{"system calls (network, disk, fsync)", []string{
		"syscall.", "internal/runtime/syscall", "runtime/internal/syscall", "internal/poll.", "os.(*File).", "runtime.write", "runtime.read",
	}},
	{"scheduling, channels and locks", []string{
		"runtime.futex", "runtime.schedule", "runtime.findRunnable", "runtime.netpoll", "runtime.usleep", "runtime.nanotime",
		"runtime.lock", "runtime.unlock", "runtime.mcall", "runtime.park_m", "runtime.stealWork", "runtime.runq",
		"runtime.casgstatus", "runtime.procyield", "runtime.osyield", "runtime.notesleep", "runtime.notewakeup",
		"runtime.goready", "runtime.ready", "runtime.wakep", "runtime.selectgo", "runtime.chansend", "runtime.chanrecv",
		"runtime.gopark", "runtime.goschedImpl", "runtime.checkTimers", "runtime.(*timer", "runtime.resetspinning",
		"runtime.execute", "runtime.gogo", "runtime.epollwait", "runtime.mPark", "runtime.stopm", "runtime.startm",
		"runtime.semacquire", "runtime.semrelease", "runtime.send", "runtime.recv", "runtime.newproc", "runtime.goexit",
		"runtime.(*waitq)", "runtime.acquirep", "runtime.releasep", "runtime.handoffp", "runtime.exitsyscall",
		"runtime.entersyscall", "runtime.reentersyscall", "runtime.pidle", "runtime.(*randomEnum)", "runtime.(*gQueue)",
		"runtime.sellock", "runtime.selunlock", "runtime.cputicks", "runtime.nanotime1", "runtime.walltime",
		"sync.", "internal/sync.", "runtime.(*lfstack)", "runtime.sysmon", "runtime.retake", "runtime.findrunnable",
	}},
	{"memory copies", []string{"runtime.memmove"}},
	{"maps and hashing", []string{"runtime.map", "internal/runtime/maps.", "runtime.memhash", "runtime.aeshash", "aeshashbody", "runtime.strhash", "hash/maphash.", "runtime.efaceeq"}},
	{"byte search and compare", []string{"internal/bytealg.", "runtime.memequal", "memeqbody", "indexbytebody", "cmpbody", "countbody", "runtime.cmpstring"}},
	{"Pebble (durable store)", []string{"github.com/cockroachdb/"}},
	{"gRPC and HTTP/2", []string{"google.golang.org/grpc", "golang.org/x/net/"}},
	{"protobuf", []string{"google.golang.org/protobuf/"}},
	{"compression and checksums", []string{"github.com/golang/snappy", "github.com/klauspost/", "hash/crc32", "github.com/DataDog/zstd"}},
	{"other Go runtime", []string{"runtime.", "internal/runtime/", "runtime/", "gcWriteBarrier", "callRet", "gogo", "morestack"}},
}

const wololoModule = "github.com/wololo/wololo/"

// Classify names the group of a function as pprof prints it, and its part
// within the group: wololo's own code and the standard library are one
// group each, split by package; other modules are a group each.
func Classify(fn string) (group, part string) {
	for _, g := range groups {
		for _, pre := range g.prefixes {
			if strings.HasPrefix(fn, pre) {
				return g.name, ""
			}
		}
	}
	pkg := packageOf(fn)
	if rest, ok := strings.CutPrefix(pkg, wololoModule); ok {
		return "wololo's own code", ownPart(rest)
	}
	if first, _, _ := strings.Cut(pkg, "/"); strings.Contains(first, ".") {
		parts := strings.SplitN(pkg, "/", 4)
		return strings.Join(parts[:min(3, len(parts))], "/"), ""
	}
	return "Go standard library", pkg
}

// packageOf is the import path of a pprof function name: everything
// before the first dot after the last slash, ignoring what follows the
// first "(" or "[" (receivers and type arguments, which hold paths too).
func packageOf(fn string) string {
	head := fn
	if i := strings.IndexAny(head, "(["); i >= 0 {
		head = head[:i]
	}
	slash := strings.LastIndex(head, "/")
	dot := strings.Index(head[slash+1:], ".")
	if dot < 0 {
		return head
	}
	return head[:slash+1+dot]
}

// isStd says whether fn belongs to the Go runtime or standard library
// (its import path's first element has no dot; assembly symbols such as
// "aeshashbody" have no path at all), or to golang.org/x/sys, a thin layer
// over system calls whose time belongs to its caller.
func isStd(fn string) bool {
	pkg := packageOf(fn)
	first, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(first, ".") || strings.HasPrefix(pkg, "golang.org/x/sys/")
}

// Trace is one stack of a CPU profile, leaf first, and its samples.
type Trace struct {
	Value time.Duration
	Stack []string
}

// ParseTraces reads `go tool pprof -traces` output.
func ParseTraces(out string) []Trace {
	var traces []Trace
	var cur *Trace
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "-----------+") {
			cur = nil
			continue
		}
		if strings.TrimSpace(line) == "" || (cur == nil && !strings.HasPrefix(line, " ")) {
			continue // the header
		}
		if cur == nil {
			fields := strings.Fields(line)
			if len(fields) < 2 {
				continue
			}
			v, err := time.ParseDuration(fields[0])
			if err != nil {
				continue
			}
			traces = append(traces, Trace{Value: v})
			cur = &traces[len(traces)-1]
			cur.Stack = append(cur.Stack, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), fields[0])))
			continue
		}
		cur.Stack = append(cur.Stack, strings.TrimSpace(line))
	}
	return traces
}

// Component is what a stack's time is charged to, and the part within it:
// the innermost function on it (from the leaf) that is neither the Go
// runtime nor the standard library, so that a copy, an allocation or a
// system call counts for the code that asked for it. A stack of runtime
// functions only is the garbage collector's background work, the
// scheduler, or other runtime work.
func Component(stack []string) (group, part string) {
	for _, fn := range stack {
		if isStd(fn) {
			continue
		}
		pkg := packageOf(fn)
		if rest, ok := strings.CutPrefix(pkg, wololoModule); ok {
			return "wololo's own code", ownPart(rest)
		}
		for _, c := range components {
			if strings.HasPrefix(pkg, c.prefix) {
				return c.name, ""
			}
		}
		parts := strings.SplitN(pkg, "/", 4)
		return strings.Join(parts[:min(3, len(parts))], "/"), ""
	}
	for _, fn := range stack {
		switch {
		case strings.HasPrefix(fn, "runtime.gcBgMarkWorker"), strings.HasPrefix(fn, "runtime.bgsweep"), strings.HasPrefix(fn, "runtime.bgscavenge"):
			return "garbage collector (background)", ""
		case strings.HasPrefix(fn, "runtime.schedule"), strings.HasPrefix(fn, "runtime.mcall"), strings.HasPrefix(fn, "runtime.sysmon"):
			return "Go scheduler and network poller", ""
		}
	}
	for _, fn := range stack {
		pkg := packageOf(fn)
		if pkg != "runtime" && !strings.HasPrefix(pkg, "runtime/") && !strings.HasPrefix(pkg, "internal/") && strings.Contains(fn, ".") {
			return "Go standard library", ""
		}
	}
	return "other Go runtime", ""
}

var components = []struct{ prefix, name string }{
	{"github.com/cockroachdb/", "Pebble (durable store)"},
	{"google.golang.org/grpc", "gRPC and HTTP/2"},
	{"golang.org/x/net/", "gRPC and HTTP/2"},
	{"google.golang.org/protobuf/", "protobuf"},
	{"github.com/golang/snappy", "compression"},
	{"github.com/klauspost/", "compression"},
	{"github.com/hashicorp/go-hclog", "logging"},
}

// ComponentShares charges every trace to its Component and returns the
// percentages, largest first.
func ComponentShares(traces []Trace) []Share {
	var total time.Duration
	for _, t := range traces {
		total += t.Value
	}
	if total <= 0 {
		return nil
	}
	sums := map[string]float64{}
	parts := map[string]map[string]float64{}
	for _, t := range traces {
		g, part := Component(t.Stack)
		pct := 100 * float64(t.Value) / float64(total)
		sums[g] += pct
		if part != "" {
			if parts[g] == nil {
				parts[g] = map[string]float64{}
			}
			parts[g][part] += pct
		}
	}
	out := sortShares(sums)
	for i := range out {
		if p := parts[out[i].Group]; p != nil {
			out[i].Parts = sortShares(p)
		}
	}
	return out
}

// ParseTop reads `go tool pprof -top` output and returns each function's
// flat percentage.
func ParseTop(out string) map[string]float64 {
	m := map[string]float64{}
	inTable := false
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 5 && fields[0] == "flat" && fields[1] == "flat%" {
			inTable = true
			continue
		}
		if !inTable || len(fields) < 6 || !strings.HasSuffix(fields[1], "%") {
			continue
		}
		var pct float64
		if _, err := fmt.Sscanf(fields[1], "%g%%", &pct); err != nil {
			continue
		}
		// The function name may contain spaces (e.g. "func1 (inline)").
		m[strings.Join(fields[5:], " ")] += pct
	}
	return m
}

// GroupShares sums flat percentages by Classify's groups and parts,
// largest first.
func GroupShares(flat map[string]float64) []Share {
	sums := map[string]float64{}
	parts := map[string]map[string]float64{}
	for fn, pct := range flat {
		g, part := Classify(fn)
		sums[g] += pct
		if part != "" {
			if parts[g] == nil {
				parts[g] = map[string]float64{}
			}
			parts[g][part] += pct
		}
	}
	out := sortShares(sums)
	for i := range out {
		if p := parts[out[i].Group]; p != nil {
			out[i].Parts = sortShares(p)
		}
	}
	return out
}

func sortShares(m map[string]float64) []Share {
	var out []Share
	for g, pct := range m {
		out = append(out, Share{Group: g, Percent: pct})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Percent != out[j].Percent {
			return out[i].Percent > out[j].Percent
		}
		return out[i].Group < out[j].Group
	})
	return out
}

// ownPart names a package of this module (relative to it) in a report: a
// package of services/ by its own name, without services/ and its floor
// (stage, not services/dataflow/stage); any other by its path.
func ownPart(rel string) string {
	rest, ok := strings.CutPrefix(rel, "services/")
	if !ok {
		return rel
	}
	if _, pkg, ok := strings.Cut(rest, "/"); ok {
		return pkg
	}
	return rest
}
