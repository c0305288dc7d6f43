package client

import (
	"os"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/wire/rpc"
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
	return ShellCommand(append(words, in.Gateway...)...)
}

// ShellCommand is words as a command a POSIX shell runs as they are:
// each quoted where it needs it (a hint's command, to paste).
func ShellCommand(words ...string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shellQuote(w)
	}
	return strings.Join(quoted, " ")
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

// again is how a hint runs the client again against the gateway of g.
func (g *gatewayFlags) again() Invocation {
	return Invocation{Program: os.Args[0], Gateway: gatewayArgs(g.server, g.creds.Dir, g.creds.Name, g.creds.Insecure)}
}

// rerunCommand runs lost job id again: a command that only names a job
// does not know its files, so they are placeholders.
func (in Invocation) rerunCommand(id string) string {
	return in.command("submit", "--job", id, "--matches", "MATCHES.csv", "--players", "PLAYERS.csv", "--out", "DIR")
}

// withLostHint adds to err, the error of a command that follows job id
// (explained: explain's of the gateway's status raw), how to run the job
// again when it was lost: failed because a process lost its state
// (job.state_lost), or unknown to the gateway (NOT_FOUND: deleted,
// dropped after its retention, or lost with the gateway's store).
func withLostHint(err, raw error, in Invocation, id string, job *wololov1.Job) error {
	switch {
	case rpc.IsJobDeleted(raw):
		return err // deleted on purpose: the gateway's message says by whom
	case job != nil && job.State == wololov1.JobState_JOB_STATE_FAILED && job.StateLost:
		return cli.WithHint(err, "the job was lost; nothing is wrong with the job or its files: run it again from them with `"+in.rerunCommand(id)+"`")
	case status.Code(raw) == codes.NotFound:
		return cli.WithHint(err, "the gateway has no such job: it was deleted, dropped after its retention, or lost with the gateway's store; a job that was lost runs again with `"+in.rerunCommand(id)+"`")
	}
	return err
}
