package rpc

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wololo/wololo/services/wire/pki"
)

// countingConn counts the writes that reach the socket.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestCoalescedTLSWritesOncePerWrite: through coalescedTLS a Write of many
// TLS records reaches the socket as one write, the peer reads exactly the
// bytes written, in order, also while two goroutines write at once, and
// the handshake and the close go through as they do without it.
func TestCoalescedTLSWritesOncePerWrite(t *testing.T) {
	ca, err := pki.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Credentials(pki.Identity{Kind: pki.Instance, Name: "shard-0"})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Credentials(pki.Identity{Kind: pki.Instance, Name: "gateway-0"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan []byte, 1)
	go func() {
		raw, err := l.Accept()
		if err != nil {
			got <- nil
			return
		}
		conn, _, err := TLSCredentials(server.ServerTLS()).ServerHandshake(raw)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(conn)
		got <- b
	}()
	raw, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingConn{Conn: raw}
	conn, _, err := TLSCredentials(client.ClientTLS("shard-0")).ClientHandshake(context.Background(), "shard-0", counted)
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, writeBufferSize)
	for i := range payload {
		payload[i] = byte(rand.IntN(256))
	}
	before := counted.writes.Load()
	if n, err := conn.Write(payload); err != nil || n != len(payload) {
		t.Fatalf("write: %d, %v", n, err)
	}
	if w := counted.writes.Load() - before; w != 1 {
		t.Fatalf("a write of %d bytes (%d TLS records) took %d socket writes, want 1", len(payload), len(payload)/(16<<10), w)
	}
	// Two writers at once: every byte arrives, each write's bytes together.
	a, b := bytes.Repeat([]byte{'a'}, 100<<10), bytes.Repeat([]byte{'b'}, 100<<10)
	done := make(chan error, 2)
	for _, p := range [][]byte{a, b} {
		go func() { _, err := conn.Write(p); done <- err }()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	all := <-got
	if all == nil || !bytes.Equal(all[:len(payload)], payload) {
		t.Fatal("the peer did not read the payload as written")
	}
	rest := all[len(payload):]
	if !bytes.Equal(rest, append(append([]byte{}, a...), b...)) && !bytes.Equal(rest, append(append([]byte{}, b...), a...)) {
		t.Fatalf("the concurrent writes arrived as %d bytes, not one after the other", len(rest))
	}
}

// TestCoalescedTLSCloseEndsABlockedWrite: when the peer stops reading and
// a write of held records blocks on the socket, Close ends it at once, as
// TLS does for a write of its own, instead of waiting out the deadline
// TLS gives its close_notify alert (5 s).
func TestCoalescedTLSCloseEndsABlockedWrite(t *testing.T) {
	ca, err := pki.NewCA("test")
	if err != nil {
		t.Fatal(err)
	}
	server, _ := ca.Credentials(pki.Identity{Kind: pki.Instance, Name: "shard-0"})
	client, _ := ca.Credentials(pki.Identity{Kind: pki.Instance, Name: "gateway-0"})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		raw, err := l.Accept()
		if err != nil {
			return
		}
		defer raw.Close()
		if _, _, err := TLSCredentials(server.ServerTLS()).ServerHandshake(raw); err != nil {
			return
		}
		<-stop // and never read
	}()
	raw, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn, _, err := TLSCredentials(client.ClientTLS("shard-0")).ClientHandshake(context.Background(), "shard-0", raw)
	if err != nil {
		t.Fatal(err)
	}
	hold := conn.(*coalescingConn).hold
	wrote := make(chan error, 1)
	go func() {
		p := make([]byte, writeBufferSize)
		for {
			if _, err := conn.Write(p); err != nil {
				wrote <- err
				return
			}
		}
	}()
	for !hold.flushing.Load() { // the socket's buffers fill, and a flush blocks
		select {
		case err := <-wrote:
			t.Fatalf("a write failed before the socket filled: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	closed := make(chan struct{})
	go func() { conn.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(3 * time.Second):
		t.Fatal("Close waited on the blocked write")
	}
	if err := <-wrote; err == nil {
		t.Fatal("the blocked write did not fail")
	}
}
