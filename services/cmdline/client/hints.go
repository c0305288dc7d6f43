package client

import (
	"strings"
)

// Hints are commands a user pastes: each must work as printed. So it is
// the binary as it was invoked (os.Args[0]: ./bin/wololo, not a "wololo"
// that may not be on PATH), with every flag that reaches the gateway
// when it is not the default (--server, --tls-dir, --name, --insecure),
// every word quoted for a POSIX shell where it needs it.

// Invocation is how a hint runs the client again: the program as invoked
// and the flags that reach the gateway.
type Invocation struct {
	Program string   // os.Args[0]; "wololo" if empty
	Gateway []string // flags that reach the gateway, where not the defaults
}

// command is the shell command `PROGRAM client SUB args... gateway-flags`.
func (in Invocation) command(sub string, args ...string) string {
	program := in.Program
	if program == "" {
		program = "wololo"
	}
	words := append([]string{program, "client", sub}, args...)
	words = append(words, in.Gateway...)
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// gatewayArgs are the flags of a client command that reach the gateway,
// for a hint: each one that differs from its built-in default.
func gatewayArgs(server, tlsDir, name string, insecure bool) []string {
	var args []string
	if server != DefaultServer {
		args = append(args, "--server", server)
	}
	if insecure {
		return append(args, "--insecure")
	}
	if tlsDir != DefaultTLSDir {
		args = append(args, "--tls-dir", tlsDir)
	}
	if name != "client" {
		args = append(args, "--name", name)
	}
	return args
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// characters every shell takes as they are.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
