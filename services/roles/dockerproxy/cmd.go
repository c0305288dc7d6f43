package dockerproxy

import (
	"context"
	"io"
	"os"
	"strconv"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/cmdline/cli"
	"github.com/wololo/wololo/services/cmdline/logflags"
)

const usage = `usage: wololo docker-proxy --listen PATH [flags]

Serves the Docker Engine API on the Unix socket PATH, letting through only
what the masters need, in the one API version they speak (--api-version):
the list of the project's labelled containers, and the start and SIGKILL
of one; with --swarm also the list of its services and tasks, and the
inspect and forced update of its services. The rest (another API version,
a body or a query parameter the masters never send included) is refused
with 403. It checks at start that the engine speaks --api-version.
`

// Run is `wololo docker-proxy`.
func Run(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := cli.NewFlagSet("wololo docker-proxy", usage, stderr)
	listen := fs.String("listen", "", "the Unix socket to serve (required)")
	upstream := fs.String("upstream", "unix:///var/run/docker.sock", "the engine's socket")
	project := fs.String("project", "wololo", "the project whose containers may be acted on (label "+deploy.LabelProject+")")
	apiVersion := fs.String("api-version", deploy.DockerAPIVersion, "the one Engine API version admitted, the masters' --docker-api-version (the engine must speak it; Docker Engine 29 and later speak 1.44 and up)")
	withSwarm := fs.Bool("swarm", false, "also admit the swarm runtime's calls: the project's services listed, inspected and force-updated (nothing else changed), its tasks listed")
	uid := fs.Int("socket-uid", -1, "owner of the socket (-1: leave)")
	gid := fs.Int("socket-gid", -1, "group of the socket (-1: leave)")
	mode := fs.String("socket-mode", "0660", "mode of the socket, octal")
	logFlags := logflags.Register(fs, "info")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := cli.Required(fs, "listen"); err != nil {
		return err
	}
	m, err := strconv.ParseUint(*mode, 8, 32)
	if err != nil {
		return cli.Usagef(fs, "--socket-mode %q: want an octal mode such as 0660", *mode)
	}
	log := logFlags.Logger("docker-proxy", stderr)
	p, err := New(*upstream, Policy{Project: *project, APIVersion: *apiVersion, Swarm: *withSwarm}, log)
	if err != nil {
		return err
	}
	if err := p.CheckEngine(ctx); err != nil {
		return err
	}
	l, err := Listen(*listen, os.FileMode(m), *uid, *gid)
	if err != nil {
		return err
	}
	log.Info("serving", "socket", *listen, "upstream", *upstream, "project", *project, "api-version", *apiVersion, "swarm", *withSwarm)
	return p.Serve(ctx, l)
}
