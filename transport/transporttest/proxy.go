// Package transporttest holds test helpers for the channel protocol: a TCP
// proxy whose connections a test can cut at will, to break gRPC streams
// mid-job the way a failing network does, or slow to a pace, the way a
// thin link does.
package transporttest

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards TCP connections from its own loopback address to a target.
type Proxy struct {
	l      net.Listener
	target string

	mu     sync.Mutex
	conns  map[net.Conn]bool
	cuts   int
	refuse bool

	pace atomic.Int64 // bytes per second towards the target; 0 for no limit
}

// NewProxy listens on a free loopback port and forwards to target.
func NewProxy(target string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{l: l, target: target, conns: map[net.Conn]bool{}}
	go p.accept()
	return p, nil
}

// Addr is the proxy's address.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

func (p *Proxy) accept() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

func (p *Proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
}

func (p *Proxy) serve(in net.Conn) {
	// The refusal is read and in tracked under one lock: a Refuse(true)
	// that comes while the target is dialled cuts in, and the pipe ends.
	p.mu.Lock()
	refuse := p.refuse
	if !refuse {
		p.conns[in] = true
	}
	p.mu.Unlock()
	if refuse {
		in.Close()
		return
	}
	out, err := net.Dial("tcp", p.target)
	if err != nil {
		in.Close()
		p.track(in, false)
		return
	}
	p.track(out, true)
	done := make(chan struct{}, 2)
	pipe := func(dst io.Writer, src io.Reader) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(out, paced{in, &p.pace})
	go pipe(in, out)
	<-done
	in.Close()
	out.Close()
	p.track(in, false)
	p.track(out, false)
}

// Pace slows what the proxy forwards towards its target to about
// bytesPerSecond (0: no limit), from the next read on, on every
// connection: a test that must catch an upload in the middle makes the
// middle long.
func (p *Proxy) Pace(bytesPerSecond int64) { p.pace.Store(bytesPerSecond) }

// paced reads from a connection in pieces of at most 16 KiB, sleeping
// after each as long as its bytes take at the pace.
type paced struct {
	r    io.Reader
	pace *atomic.Int64
}

func (p paced) Read(b []byte) (int, error) {
	rate := p.pace.Load()
	if rate > 0 && len(b) > 16<<10 {
		b = b[:16<<10]
	}
	n, err := p.r.Read(b)
	if rate > 0 && n > 0 {
		time.Sleep(time.Duration(int64(n) * int64(time.Second) / rate))
	}
	return n, err
}

// Cut closes every open connection; new ones are still accepted.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for c := range p.conns {
		c.Close()
		n++
	}
	if n > 0 {
		p.cuts++
	}
	return n
}

// Refuse, while on, closes every connection at once (the open ones when
// it is turned on): the target is unreachable through the proxy, as
// behind a partition, until it is turned off.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	p.refuse = on
	p.mu.Unlock()
	if on {
		p.Cut()
	}
}

// Cuts is how many times Cut closed at least one connection.
func (p *Proxy) Cuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

// Close stops the proxy.
func (p *Proxy) Close() {
	p.l.Close()
	p.Cut()
}
