package rpc

import (
	"context"
	"net"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/credentials"
)

// writeBufferSize is gRPC's write buffer on every Wololo connection, and so
// the most one socket write carries: gRPC's 32 KiB default made a 1 GB
// upload some 30,000 writes, twice as many once TLS cut each into records.
const writeBufferSize = 256 << 10

// coalescedTLS wraps TLS transport credentials so that the records one
// Write is cut into go to the socket together. crypto/tls writes every
// record (at most 16 KiB) with a write of its own; a gRPC flush of
// writeBufferSize is 16 records, and each write a system call and a pass
// through the TCP stack. Here the connection's writes during one TLS Write
// are held and sent as one at its end, so that a flush is one system call.
// Bytes, order and security are TLS's own: only the socket calls change.
type coalescedTLS struct {
	credentials.TransportCredentials
}

func (c coalescedTLS) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	hold := &holdingConn{Conn: raw}
	conn, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, hold)
	if err != nil {
		return nil, nil, err
	}
	return &coalescingConn{Conn: conn, hold: hold}, info, nil
}

func (c coalescedTLS) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	hold := &holdingConn{Conn: raw}
	conn, info, err := c.TransportCredentials.ServerHandshake(hold)
	if err != nil {
		return nil, nil, err
	}
	return &coalescingConn{Conn: conn, hold: hold}, info, nil
}

func (c coalescedTLS) Clone() credentials.TransportCredentials {
	return coalescedTLS{c.TransportCredentials.Clone()}
}

// coalescingConn is the TLS connection: each Write's records are held by
// the holdingConn beneath it and written out in one go when it returns.
type coalescingConn struct {
	net.Conn
	hold *holdingConn
}

// Close closes the TLS connection. If a write of held records is blocked
// on the socket (a peer that stopped reading), it closes the socket first,
// which ends that write: TLS would do the same for a write of its own in
// flight, but the held records are written after TLS's Write returned, and
// its Close would otherwise wait on them for its close_notify alert.
func (c *coalescingConn) Close() error {
	if c.hold.flushing.Load() {
		_ = c.hold.Conn.Close()
	}
	return c.Conn.Close()
}

func (c *coalescingConn) Write(p []byte) (int, error) {
	c.hold.begin()
	n, err := c.Conn.Write(p)
	if ferr := c.hold.end(); err == nil && ferr != nil {
		return n, ferr
	}
	return n, err
}

// holdingConn is the raw connection under TLS: while a Write of the TLS
// connection above runs (holders > 0) it keeps what TLS writes, in order,
// and end writes it; otherwise (the handshake, an alert on close) it
// writes straight through.
type holdingConn struct {
	net.Conn
	mu      sync.Mutex
	holders int
	held    []byte
	err     error // the first failed write: TLS has seen success, so later writes fail
	// flushing is set while end writes the held records to the socket.
	flushing atomic.Bool
}

func (h *holdingConn) begin() {
	h.mu.Lock()
	h.holders++
	h.mu.Unlock()
}

func (h *holdingConn) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return 0, h.err
	}
	if h.holders > 0 {
		h.held = append(h.held, p...)
		return len(p), nil
	}
	return h.Conn.Write(p)
}

// end writes what is held, also what a concurrent Write added (it is
// later on the wire, so order holds), and stops holding for this writer.
func (h *holdingConn) end() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holders--
	if len(h.held) > 0 && h.err == nil {
		h.flushing.Store(true)
		if _, err := h.Conn.Write(h.held); err != nil {
			h.err = err
		}
		h.flushing.Store(false)
	}
	h.held = h.held[:0]
	if cap(h.held) > 4*writeBufferSize {
		h.held = nil // a rare large write does not keep its buffer
	}
	return h.err
}
