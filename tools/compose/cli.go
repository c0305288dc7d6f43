package compose

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/cli"
)

// DefaultFile is the checked-in compose file: Generate's output for the
// default topology and options.
const DefaultFile = "deploy/compose.yaml"

// Run is `wololo compose`.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo compose", `usage: wololo compose [--swarm [--port-base N]] [--topology F] [--replicas task=N,...] [--masters N] [--log-json] [--out FILE]

Writes the docker compose file of the topology: one service per instance and
master, named volumes, the gateway's port published, the masters given the
docker-proxy's socket, no restart policies (the masters restart).

With --swarm, the Docker Swarm stack instead (docker stack deploy): one
service of one replica per instance, the gateway and the masters pinned
to the node labelled <project>.<instance>=true (shards run anywhere), the masters on managers with the swarm runtime,
an encrypted overlay network, the certificates as swarm secrets, resource
limits, ports published in host mode (not through the routing mesh) from --port-base.
`, stderr)
	topoPath := fs.String("topology", "", "topology JSON file (default: the embedded one)")
	replicas := fs.String("replicas", "", `replica counts of tasks to change, e.g. "shard=3"; "*=N" sets every task but the gateway`)
	masters := fs.Int("masters", -1, "number of masters (default: the topology's)")
	var o Options
	fs.StringVar(&o.Project, "project", "", `project name: the masters' label filter and the container name prefix (default "wololo"; with --swarm "`+DefaultStackProject+`", the stack's name)`)
	fs.StringVar(&o.Image, "image", "", `image of every service (default "wololo:latest"; with --swarm "`+DefaultStackImage+`")`)
	fs.StringVar(&o.LogLevel, "log-level", "info", "log level of every process")
	fs.BoolVar(&o.LogJSON, "log-json", false, "every service logs JSON (adds --log-json to each command; the masters have it anyway)")
	swarm := fs.Bool("swarm", false, "write the Docker Swarm stack instead of the compose file")
	portBase := fs.Int("port-base", DefaultPortBase, "with --swarm: the published port of the gateway's public port (the masters' shift alike)")
	out := fs.String("out", "-", `file to write ("-": standard output)`)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	top, err := deploy.Select(*topoPath)
	if err != nil {
		return err
	}
	if top, err = applyReplicas(top, *replicas); err != nil {
		return err
	}
	if *masters >= 0 {
		top.Masters = *masters
	}
	var b []byte
	if *swarm {
		b, err = GenerateStack(top, StackOptions{Options: o, PortBase: *portBase})
	} else {
		b, err = Generate(top, o)
	}
	if err != nil {
		return err
	}
	if *out == "-" {
		_, err = stdout.Write(b)
		return err
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", *out, err)
	}
	fmt.Fprintf(stderr, "wrote %s: %d services\n", *out, len(top.Instances())+top.Masters)
	return nil
}

// applyReplicas applies "task=N,..." ("*=N": every task but the gateway).
func applyReplicas(top deploy.Topology, spec string) (deploy.Topology, error) {
	if strings.TrimSpace(spec) == "" {
		return top, nil
	}
	counts := map[string]int{}
	for _, part := range strings.Split(spec, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(val)
		if !ok || err != nil || n < 1 {
			return top, fmt.Errorf("--replicas: %q is not task=N with N >= 1", part)
		}
		if name == "*" {
			top = top.Uniform(n)
			continue
		}
		counts[name] = n
	}
	return top.WithReplicas(counts)
}
