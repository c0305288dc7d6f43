package local

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

// Features are the optional flags a wololo binary's gateway and worker
// accept. The runner passes --data and --peers only when both roles accept
// them, so it drives older binaries too (in memory, on the topology's
// ports).
type Features struct {
	Data  bool // --data DIR: a durable data directory
	Peers bool // --peers FILE: peers resolved through the peers file
	// Flags are the flag names both roles accept.
	Flags map[string]bool
}

// Has says whether both roles accept --name.
func (f Features) Has(name string) bool { return f.Flags[name] }

// DetectFeatures asks the binary for its gateway and worker flags.
func DetectFeatures(ctx context.Context, binary string) (Features, error) {
	var f Features
	for i, role := range []string{"gateway", "worker"} {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, binary, role, "-h")
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		if !bytes.Contains(out.Bytes(), []byte("-instance")) {
			return Features{}, fmt.Errorf("%s %s -h: %v; it does not look like a wololo binary:\n%s", binary, role, err, tail(out.Bytes(), 10))
		}
		flags := flagNames(out.Bytes())
		if i == 0 {
			f.Flags = flags
			continue
		}
		for name := range f.Flags {
			if !flags[name] {
				delete(f.Flags, name)
			}
		}
	}
	f.Data, f.Peers = f.Has("data"), f.Has("peers")
	return f, nil
}

var flagLine = regexp.MustCompile(`(?m)^\s+--?([A-Za-z0-9][A-Za-z0-9_.-]*)(?:\s|=|$)`)

// flagNames lists the flags in flag.PrintDefaults output.
func flagNames(usage []byte) map[string]bool {
	m := map[string]bool{}
	for _, sub := range flagLine.FindAllSubmatch(usage, -1) {
		m[string(sub[1])] = true
	}
	return m
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

// FreePort returns a loopback port that was free a moment ago (listen on
// port 0, note it, close).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

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

// FreePortRange returns the first of n consecutive free loopback ports,
// starting the search at a port the kernel picked so that parallel callers
// rarely collide.
func FreePortRange(n int) (int, error) {
	for attempt := 0; attempt < 50; attempt++ {
		base, err := FreePort()
		if err != nil {
			return 0, err
		}
		if base+n > 65535 {
			continue
		}
		ok := true
		var held []net.Listener
		for p := base; p < base+n; p++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				ok = false
				break
			}
			held = append(held, l)
		}
		for _, l := range held {
			l.Close()
		}
		if ok {
			return base, nil
		}
	}
	return 0, fmt.Errorf("no run of %d free loopback ports found", n)
}
