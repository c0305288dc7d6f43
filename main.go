// Command wololo is every role of the Wololo stream-processing system in one
// binary: `wololo <role> [flags]`. Run `wololo help` for the list.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/wololo/wololo/services/cmdline/certs"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/client"
	"github.com/wololo/wololo/services/cmdline/explain"
	"github.com/wololo/wololo/services/cmdline/tlsflags"
	"github.com/wololo/wololo/services/cmdline/version"
	"github.com/wololo/wololo/services/dataflow/reference"
	"github.com/wololo/wololo/services/ops/healthcheck"
	"github.com/wololo/wololo/services/ops/top"
	"github.com/wololo/wololo/services/roles/demo"
	"github.com/wololo/wololo/services/roles/dockerproxy"
	"github.com/wololo/wololo/services/roles/local"
	"github.com/wololo/wololo/services/roles/master"
	"github.com/wololo/wololo/services/roles/worker"
	"github.com/wololo/wololo/tools/bench"
	"github.com/wololo/wololo/tools/chaos"
	"github.com/wololo/wololo/tools/compose"
	"github.com/wololo/wololo/tools/datagen"
)

type command struct {
	name, help string
	run        func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = []command{
	{"demo", "run a whole job (the four default queries, or --query ones) in this process on a generated or given dataset", demo.Run},
	{"client", "submit a job to a gateway, follow it, fetch its results; append to and close a standing one; list and cancel this client's jobs", client.Run},
	{"gateway", "run the gateway process of a deployment", worker.RunGateway},
	{"worker", "run one instance of a deployment's task (a shard, or the gateway): its part of every job's plan", worker.Run},
	{"master", "run one master: the Bully election and the supervision (restarts) of every process", master.Run},
	{"local", "run the whole topology as OS processes on this machine (`local run` runs one job)", local.Run},
	{"top", "the whole deployment in the terminal, redrawn every second (as the gateway's Cluster service sees it); --json: one snapshot", top.Run},
	{"certs", "make the deployment's CA and certificates, or another client credential", certs.Run},
	{"docker-proxy", "serve the Docker Engine API to the masters, only the calls they need on the project's containers", dockerproxy.Run},
	{"health", "check a process's gRPC health; exits 0 when it is SERVING (the containers' health check)", healthcheck.Run},
	{"compose", "write the docker compose file of a topology (deploy/compose.yaml is its default output)", compose.Run},
	{"datagen", "generate a matches.csv / match_players.csv dataset", datagen.Run},
	{"chaos", "crash harness: kill processes of a local cluster during a job, compare with the reference", chaos.Run},
	{"explain", "print the logical plans of a job's SQL queries and its physical plan on the topology's tasks", explain.Run},
	{"reference", "answer the four queries with the single-process reference evaluator", reference.Run},
	{"bench", "measure reference, DuckDB, demo and local mode on a dataset and write a markdown report", bench.Run},
	{"version", "print the version, the git commit it was built from and the Go version (--json for scripts)", version.Run},
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: wololo <command> [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.help)
	}
	fmt.Fprintf(w, "\nRun 'wololo <command> -h' for a command's flags; 'wololo --version' is 'wololo version'.\n")
	fmt.Fprintf(w, "The client's address and credential flags default to $%s, $%s and $%s.\n\n", client.EnvServer, tlsflags.EnvDir, tlsflags.EnvClient)
	fmt.Fprint(w, cli.ExitCodes)
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	name := os.Args[1]
	switch name {
	case "help", "-h", "--help":
		usage(os.Stdout)
		return
	case "--version", "-version":
		name = "version"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, c := range commands {
		if c.name != name {
			continue
		}
		err := c.run(ctx, os.Args[2:], os.Stdout, os.Stderr)
		switch code := cli.ExitCode(err); {
		case code == 0:
			return
		case ctx.Err() != nil:
			fmt.Fprintf(os.Stderr, "wololo %s: interrupted\n", name)
			var hinted cli.Hinted
			if errors.As(err, &hinted) {
				fmt.Fprintf(os.Stderr, "  %s\n", hinted.Hint())
			}
			os.Exit(cli.ExitInterrupted)
		default: // see cli.ExitCodes
			fmt.Fprintf(os.Stderr, "wololo %s: %v\n", name, err)
			os.Exit(code)
		}
	}
	fmt.Fprintf(os.Stderr, "wololo: unknown command %q\n\n", name)
	usage(os.Stderr)
	os.Exit(cli.ExitUsage)
}
