package client

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress shows the upload: a redrawn bar on a terminal, a plain line
// every few seconds otherwise.
type progress struct {
	w        io.Writer
	terminal bool
	total    int64 // bytes of every file and table

	mu       sync.Mutex
	start    time.Time
	name     string
	base     map[string]int64 // offset where this session started, per file
	baseRows map[string]int64 // rows the gateway had before this session, per file
	offset   map[string]int64
	rows     map[string]int64
	lastDraw time.Time
	drawn    bool
	moved    func() // told of every offset acknowledged; nil for none
}

func newProgress(w io.Writer, terminal bool) *progress {
	return &progress{w: w, terminal: terminal, start: time.Now(),
		base: map[string]int64{}, baseRows: map[string]int64{}, offset: map[string]int64{}, rows: map[string]int64{}}
}

// restart starts the count again for a job uploaded again from the
// start (a lost job submitted again).
func (p *progress) restart() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.start = time.Now()
	p.base, p.baseRows, p.offset, p.rows = map[string]int64{}, map[string]int64{}, map[string]int64{}, map[string]int64{}
}

func (p *progress) printf(format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\n")
		p.drawn = false
	}
	fmt.Fprintf(p.w, format, args...)
}

func (p *progress) setFile(name string, f string, offset, rows int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name = name
	if _, ok := p.base[f]; !ok {
		p.base[f], p.baseRows[f] = offset, rows
	}
	p.offset[f], p.rows[f] = offset, rows
}

func (p *progress) ack(f string, offset, rows int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.offset[f], p.rows[f] = offset, rows
	if p.moved != nil {
		p.moved()
	}
	now := time.Now()
	every := 2 * time.Second
	if p.terminal {
		every = 100 * time.Millisecond
	}
	if p.w == nil || now.Sub(p.lastDraw) < every {
		return
	}
	p.lastDraw = now
	p.drawLocked(now)
}

func (p *progress) drawLocked(now time.Time) {
	var done, rows, sent int64 // rows and sent: this session's only
	for f, off := range p.offset {
		done += off
		rows += p.rows[f] - p.baseRows[f]
		sent += off - p.base[f]
	}
	pct := 0.0
	if p.total > 0 {
		pct = 100 * float64(done) / float64(p.total)
	}
	secs := now.Sub(p.start).Seconds()
	if secs <= 0 {
		secs = 1e-9
	}
	rate := fmt.Sprintf("%6.1f MB/s %8.0f rows/s", float64(sent)/1e6/secs, float64(rows)/secs)
	if p.terminal {
		const width = 30
		fill := int(pct / 100 * width)
		fill = max(0, min(width, fill))
		fmt.Fprintf(p.w, "\r[%s%s] %5.1f%% %s  %-22s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), pct, rate, p.name)
		p.drawn = true
		return
	}
	fmt.Fprintf(p.w, "upload %5.1f%% (%d of %d bytes) %s  %s\n", pct, done, p.total, rate, p.name)
}

// finishBar draws the final state and ends the bar's line.
func (p *progress) finishBar() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drawLocked(time.Now())
	if p.drawn {
		fmt.Fprint(p.w, "\n")
		p.drawn = false
	}
}
