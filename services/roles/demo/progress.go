package demo

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/wololo/wololo/services/dataflow/schema"
)

// progress prints how far the in-memory run has parsed each file: on a
// terminal one line redrawn at most every 200 ms, elsewhere a line per
// quarter of each file.
type progress struct {
	w        io.Writer
	terminal bool
	mu       sync.Mutex
	last     time.Time
	quarter  [2]int64
	drawn    bool
}

func newProgress(w io.Writer, terminal bool) *progress { return &progress{w: w, terminal: terminal} }

// report is inmem.Options.Progress.
func (p *progress) report(file schema.File, parsed, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pct := int64(100)
	if total > 0 {
		pct = parsed * 100 / total
	}
	if !p.terminal {
		if q := pct / 25; q > p.quarter[file] {
			p.quarter[file] = q
			fmt.Fprintf(p.w, "parsed %d%% of %s (%d MB)\n", pct, file, parsed/1e6)
		}
		return
	}
	if time.Since(p.last) < 200*time.Millisecond && parsed < total {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "\rparsing %s: %3d%% (%d of %d MB)  ", file, pct, parsed/1e6, total/1e6)
	p.drawn = true
}

// done ends the terminal's progress line.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}
