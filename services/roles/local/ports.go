package local

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"regexp"
	"syscall"
)

// portUse is an address the cluster listens on, and whose it is.
type portUse struct {
	addr string // 127.0.0.1:PORT
	what string // "the gateway's public port", "shard-0's gRPC port", ...
}

// PortInUseError is the refusal to start on a port another process holds.
type PortInUseError struct {
	Addr string // the address
	What string // whose port it was to be
	// Ours is whether the address is one the cluster chose for an
	// instance (not one a child's extra flag named): with FreePorts, a
	// start finding it taken is made again on other ports (Start).
	Ours bool
}

func (e *PortInUseError) Error() string {
	_, port, _ := net.SplitHostPort(e.Addr)
	return fmt.Sprintf("port %s (%s, %s) is in use by another process (another wololo local?): stop it, or choose other ports with --base-port or --free-ports", port, e.Addr, e.What)
}

// checkPorts listens on each address and closes it at once: the first one
// in use is a *PortInUseError. Before any child starts, so that a port
// taken fails the start with its name instead of a child's log line.
func checkPorts(uses []portUse) error {
	for _, u := range uses {
		l, err := net.Listen("tcp", u.addr)
		switch {
		case err == nil:
			l.Close()
		case errors.Is(err, syscall.EADDRINUSE):
			return &PortInUseError{Addr: u.addr, What: u.what, Ours: true}
		default:
			return fmt.Errorf("cannot listen on %s (%s): %w", u.addr, u.what, err)
		}
	}
	return nil
}

// bindInUse is how a wololo process reports a listener it could not open
// (net.Listen's error, which its main prints).
var bindInUse = regexp.MustCompile(`listen tcp (\S+): bind: address already in use`)

// portTakenIn is the address a child's log says it could not listen on
// because another process held it (the last such line), "" if none: a port
// taken between checkPorts and the child's start.
func portTakenIn(log string) string {
	m := bindInUse.FindAllStringSubmatch(log, -1)
	if m == nil {
		return ""
	}
	return m[len(m)-1][1]
}

// portInUse is the *PortInUseError of addr, one of uses.
func portInUse(uses []portUse, addr string) *PortInUseError {
	for _, u := range uses {
		if u.addr == addr {
			return &PortInUseError{Addr: addr, What: u.what, Ours: true}
		}
	}
	return &PortInUseError{Addr: addr, What: "a port of the cluster"}
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	b = bytes.TrimRight(b, "\n")
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// pickFreePorts is FreePorts, as a start picks its ports (a test's to
// replace).
var pickFreePorts = FreePorts

// FreePorts returns n distinct loopback ports that were free a moment ago
// (all n listeners are held open together, so no port repeats).
func FreePorts(n int) ([]int, error) {
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
