package epochsplit

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Query is one query's version as a line shows it: its rows, and its
// change from the version before, rows in and rows out.
type Query struct {
	Name    string
	Rows    int64
	In, Out int64
}

// Header is the line before the versions of a job fed in n appends.
func Header(w io.Writer, n int) {
	if n == 1 {
		fmt.Fprintf(w, "standing job: 1 append, a version of each query after it\n")
		return
	}
	fmt.Fprintf(w, "standing job: %d appends, a version of each query after each\n", n)
}

// Line prints version k's line: "version 2: q1 12 rows (+3 -1), ...".
func Line(w io.Writer, k int64, qs []Query) {
	fmt.Fprintf(w, "%s\n", line(k, qs))
}

// CostLine prints version k's line and what its epoch cost the process:
// "version 2: q1 12 rows (+3 -1), ...; cpu 12.345ms, wall 10.2ms" (to
// the microsecond).
func CostLine(w io.Writer, k int64, qs []Query, cpu, wall time.Duration) {
	fmt.Fprintf(w, "%s; cpu %s, wall %s\n", line(k, qs), cpu.Round(time.Microsecond), wall.Round(time.Microsecond))
}

// LastCost is the cost of the last version line (CostLine's) in out:
// what its epoch took of CPU and wall time; ok false when out has none.
func LastCost(out []byte) (k int64, cpu, wall time.Duration, ok bool) {
	for l := range strings.Lines(string(out)) {
		head, cost, found := strings.Cut(strings.TrimSpace(l), "; cpu ")
		if !found || !strings.HasPrefix(head, "version ") {
			continue
		}
		var v int64
		if _, err := fmt.Sscanf(head, "version %d:", &v); err != nil {
			continue
		}
		c, w, found := strings.Cut(cost, ", wall ")
		if !found {
			continue
		}
		dc, errC := time.ParseDuration(c)
		dw, errW := time.ParseDuration(w)
		if errC != nil || errW != nil {
			continue
		}
		k, cpu, wall, ok = v, dc, dw, true
	}
	return k, cpu, wall, ok
}

// LineAt prints version k's line and when it came out: "version 2: q1
// 12 rows (+3 -1), ...; out at 1.52s".
func LineAt(w io.Writer, k int64, qs []Query, at time.Duration) {
	fmt.Fprintf(w, "%s; out at %s\n", line(k, qs), at.Round(time.Millisecond))
}

func line(k int64, qs []Query) string {
	parts := make([]string, len(qs))
	for i, q := range qs {
		parts[i] = fmt.Sprintf("%s %d rows (+%d -%d)", q.Name, q.Rows, q.In, q.Out)
	}
	return fmt.Sprintf("version %d: %s", k, strings.Join(parts, ", "))
}

// ChangeSize is the rows a change's CSV (its last field each row's
// weight, +n or -n) adds and takes away.
func ChangeSize(change []byte) (in, out int64) {
	_, body, _ := bytes.Cut(change, []byte("\n"))
	for l := range strings.Lines(string(body)) {
		w, err := strconv.ParseInt(strings.TrimSpace(l[strings.LastIndexByte(l, ',')+1:]), 10, 64)
		switch {
		case err != nil:
		case w > 0:
			in += w
		default:
			out -= w
		}
	}
	return in, out
}
