// Package compose writes the docker compose file of a Wololo deployment
// from its topology: `wololo compose`. One service per instance (the
// gateway, every stage replica, every master), all from the one image, on
// one network, each with a named volume for its data directory; the
// gateway's public port published (JobService, Cluster and health only;
// its internal port is not) and its admin port on loopback only (the web
// page of the deployment; every process's /metrics is reachable on the
// project network, at its gRPC port plus deploy.AdminPortOffset, for a
// Prometheus that joins it: each process is given --admin 0.0.0.0:PORT,
// since its own default is loopback, and the admin listener serves the
// page and job labels only with the operator's token, services/ops/admin),
// the masters' published on loopback only (for
// Status and the chaos tools, behind mutual TLS like every internal port),
// the masters given the docker-proxy's socket (not the engine's) and
// logging JSON (the election chaos check reads their logs); every
// container labelled so that the masters' Docker runtime finds it
// (services/roles/master: wololo.project, wololo.instance, wololo.address).
// Every service's log is rotated (json-file, LogMaxFiles files of
// LogMaxSize), in the stack too.
// With Options.LogJSON (`wololo compose --log-json`) every service logs
// JSON; the default output, deploy/compose.yaml, only the masters.
//
// Every process speaks mutual TLS with the certificates `wololo certs`
// writes into TLSDir beside the compose file (`make up` does it): each
// service gets the CA's certificate and its own certificate and key as
// compose secrets (mounted read-only under /run/secrets), and no other
// process's key.
//
// Only the docker-proxy service holds the engine's socket; it lets the
// masters list the project's labelled containers and start and SIGKILL
// them, in the one API version they pin (deploy.DockerAPIVersion), and
// nothing else (services/roles/dockerproxy). The proxy itself is not a graph
// process and carries no project label: the masters do not supervise it,
// so it is the one service with a restart policy (unless-stopped).
//
// Every container is confined: the graph's processes and the masters run
// as the unprivileged User, every container with a read-only root
// filesystem (a process writes only its data volume: the image holds
// nothing else to write, and no process needs a /tmp), no capabilities
// (cap_drop ALL), no-new-privileges, and CPU and memory limits (Limits;
// the compose file's cpus and mem_limit, the stack's
// deploy.resources.limits). The image's /data belongs to User, and a new
// named volume takes the ownership of the directory it is mounted on, so
// every data volume is User's. The keys are bind-mounted with their host
// owner and mode: `make certs` makes the compose file's keys User's (0600,
// never world-readable). The docker-proxy needs the engine's socket
// (root:docker 0660 on the host, the docker group's gid differing from host
// to host): it runs as uid 0, the socket's owner, with no capability at
// all, and group User's gid, so that the socket it serves is the masters'
// (0660) without a chown.
//
// No graph container has a Docker restart policy: the masters are the only
// supervisor, so a killed container stays down until the leading master
// starts it again.
//
// The YAML is written by hand rather than through a YAML library: it is a
// fixed shape, and a byte-stable output is what lets a test keep the
// checked-in deploy/compose.yaml equal to the generator's output. The
// package reads a topology and writes text; it talks to no engine.
//
// GenerateStack (`wololo compose --swarm`, deploy/stack.yaml) writes the
// same deployment as a Docker Swarm stack; stack.go says what differs.
package compose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/wololo/wololo/deploy"
)

// Options shape the generated file.
type Options struct {
	// Project names the deployment: the label the masters look for and
	// the prefix of container names. "wololo" if empty.
	Project string
	// Image is the image every service runs; "wololo:latest" if empty.
	Image string
	// LogLevel of every process; "info" if empty.
	LogLevel string
	// LogJSON gives every service --log-json (the masters log JSON
	// either way).
	LogJSON bool
}

func (o *Options) defaults() {
	if o.Project == "" {
		o.Project = "wololo"
	}
	if o.Image == "" {
		o.Image = "wololo:latest"
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
}

// DataDir is where every container keeps its data (a named volume).
const DataDir = "/data"

// User is the uid:gid every graph process and master runs as; the image's
// /data belongs to it, so that a new named volume does too.
const User = uid + ":" + gid

const uid, gid = "10001", "10001"

// ProxyUser is the docker-proxy's uid:gid: uid 0, the owner of the
// engine's socket, without any capability (see the package doc), and
// User's group, so that the socket it makes is the masters'.
const ProxyUser = "0:" + gid

// Limits are a container's CPU and memory limits.
type Limits struct{ CPUs, Memory string }

// The limits of a graph process (peak RSS 399 MiB on the full dataset, see
// BENCHMARKS.md), a master and the docker-proxy.
var (
	GraphLimits  = Limits{CPUs: "1.0", Memory: "2G"}
	MasterLimits = Limits{CPUs: "0.5", Memory: "256M"}
	ProxyLimits  = Limits{CPUs: "0.25", Memory: "64M"}
)

// limitsOf is in's limits.
func limitsOf(in deploy.Instance) Limits {
	if in.Stage == deploy.MasterStage {
		return MasterLimits
	}
	return GraphLimits
}

// writeConfinement writes a service's user, read-only root filesystem and
// dropped capabilities and, with compose (swarm ignores security_opt, and
// an engine before API 1.46 has no such service field),
// no-new-privileges.
func writeConfinement(w *bytes.Buffer, user string, swarm bool) {
	fmt.Fprintf(w, "    user: %s\n", quote(user))
	w.WriteString("    read_only: true\n")
	w.WriteString("    cap_drop: [ALL]\n")
	if !swarm {
		w.WriteString("    security_opt: [\"no-new-privileges:true\"]\n")
	}
}

// LogMaxSize and LogMaxFiles are every service's log rotation: the
// json-file driver keeps at most LogMaxFiles files of LogMaxSize each (30
// MB a container), so that a process that logs without end (a refused
// channel, a client flooding the gateway) cannot fill the host's disk.
// The engine's own default keeps one file that grows for ever.
const (
	LogMaxSize  = "10m"
	LogMaxFiles = "3"
)

// writeLogging writes a service's logging: the json-file driver, which
// `docker logs` and the chaos checks read, rotated (LogMaxSize,
// LogMaxFiles). The same in the compose file and the stack.
func writeLogging(w *bytes.Buffer) {
	fmt.Fprintf(w, "    logging: {driver: json-file, options: {max-size: %s, max-file: %s}}\n", quote(LogMaxSize), quote(LogMaxFiles))
}

// writeComposeLimits writes a compose service's limits.
func writeComposeLimits(w *bytes.Buffer, l Limits) {
	fmt.Fprintf(w, "    cpus: %s\n    mem_limit: %s\n", quote(l.CPUs), l.Memory)
}

// ProxyDir is where the docker-proxy's socket lives, in a volume only the
// proxy and the masters mount; ProxySocket is the socket.
const (
	ProxyDir    = "/run/wololo-docker"
	ProxySocket = ProxyDir + "/docker.sock"
	proxyVolume = "docker-proxy"
)

// TLSDir is where the certificates are, relative to the compose file;
// SecretsDir where a container finds its own.
const (
	TLSDir     = "tls"
	SecretsDir = "/run/secrets"
)

// revocationList is the CA's revocation list (pki.RevocationPath), a
// secret of every service of the compose file: compose bind-mounts it, so
// a revocation reaches every running process. The swarm stack has none:
// a swarm secret cannot change, so a revocation would need the stack
// removed and deployed again.
const revocationList = "crl.pem"

// checkDeployment refuses what no deployment file can hold: an invalid
// topology, one without masters (they do every restart), a project or
// image name with a byte of forbidden (or a quote or space, for the image).
func checkDeployment(top deploy.Topology, project, image, file, forbidden string) error {
	if err := top.Validate(); err != nil {
		return err
	}
	if top.Masters < 1 {
		return fmt.Errorf("the topology has no masters: %s needs at least one (they do every restart)", file)
	}
	if strings.ContainsAny(project, forbidden) || strings.ContainsAny(image, " \"'") {
		return fmt.Errorf("project %q or image %q is not usable in %s", project, image, file)
	}
	return nil
}

// command is the command line of an instance's container: a master
// supervising through the docker-proxy with the given runtime ("docker"
// or "swarm"), the gateway, or a worker, each finding its peers by
// hostname, its store in DataDir and its certificates in SecretsDir.
func command(top deploy.Topology, in deploy.Instance, runtime, project, logLevel string, logJSON bool) []string {
	var cmd []string
	switch {
	case in.Stage == deploy.MasterStage:
		// JSON logs: the election chaos check reads the masters'
		// container logs (tools/chaos).
		cmd = []string{"master", "--id", strconv.Itoa(in.Index), "--runtime", runtime, "--docker-project", project, "--docker-host", "unix://" + ProxySocket, "--log-json"}
	case in.Stage == top.Gateway().Name:
		cmd = []string{"gateway"}
	default:
		cmd = []string{"worker", "--instance", in.Name()}
	}
	// The admin listener binds to loopback by default, which no published
	// port and no scraper on the project network reaches: every container
	// binds it to all its interfaces, guarded as services/ops/admin says (the
	// operator's token for the page and the job labels, Host checked).
	admin := net.JoinHostPort("0.0.0.0", strconv.Itoa(top.AdminPort(in)))
	cmd = append(cmd, "--hosts", "{instance}", "--admin", admin, "--data", DataDir, "--log-level", logLevel, "--tls-dir", SecretsDir)
	if logJSON && in.Stage != deploy.MasterStage {
		cmd = append(cmd, "--log-json")
	}
	return cmd
}

// Generate writes the compose file for top. A topology other than the
// binary's embedded default travels in $WOLOLO_TOPOLOGY, since the image
// holds nothing but the binary.
func Generate(top deploy.Topology, o Options) ([]byte, error) {
	o.defaults()
	if err := checkDeployment(top, o.Project, o.Image, "a compose file", " :/\"'"); err != nil {
		return nil, err
	}
	custom := customTopology(top)

	var w bytes.Buffer
	fmt.Fprintf(&w, "# Generated by `wololo compose` from the topology; do not edit by hand.\n")
	fmt.Fprintf(&w, "# %d graph processes and %d masters of project %q, image %s.\n", len(top.Instances()), top.Masters, o.Project, o.Image)
	fmt.Fprintf(&w, "# No service has a restart policy: the leading master restarts what dies.\n")
	fmt.Fprintf(&w, "version: \"3.8\"\n\n")
	if custom != "" {
		fmt.Fprintf(&w, "x-topology: &topology '%s'\n\n", strings.ReplaceAll(custom, "'", "''"))
	}
	w.WriteString("services:\n")
	gateway := top.Gateway().Name
	var volumes, secrets []string
	all := append(top.Instances(), top.MasterInstances()...)
	for _, in := range all {
		name := in.Name()
		port := top.Port(in)
		var ports, after []string
		mounts := []string{name + "-data:" + DataDir}
		switch {
		case in.Stage == deploy.MasterStage:
			ports = []string{fmt.Sprintf("127.0.0.1:%d:%d", port, port)}
			mounts = append(mounts, proxyVolume+":"+ProxyDir)
			// Started after the graph, so that no master finds a container
			// compose created but has not started yet and "restarts" it.
			for _, g := range top.Instances() {
				after = append(after, g.Name())
			}
			after = append(after, proxyVolume)
		case in.Stage == gateway:
			// The public port, and the admin listener (its web page of the
			// deployment, /metrics) on loopback only, like the masters'.
			admin := top.AdminPort(in)
			ports = []string{fmt.Sprintf("%d:%d", top.PublicPort(), top.PublicPort()), fmt.Sprintf("127.0.0.1:%d:%d", admin, admin)}
		}
		cmd := command(top, in, "docker", o.Project, o.LogLevel, o.LogJSON)
		volumes = append(volumes, name+"-data")
		own := []string{name + ".pem", name + ".key"}
		secrets = append(secrets, own...)

		fmt.Fprintf(&w, "  %s:\n", name)
		fmt.Fprintf(&w, "    image: %s\n", o.Image)
		fmt.Fprintf(&w, "    container_name: %s-%s\n", o.Project, name)
		fmt.Fprintf(&w, "    hostname: %s\n", name)
		writeConfinement(&w, User, false)
		writeComposeLimits(&w, limitsOf(in))
		writeLogging(&w)
		fmt.Fprintf(&w, "    command: %s\n", flow(cmd))
		if custom != "" {
			fmt.Fprintf(&w, "    environment:\n      %s: *topology\n", deploy.EnvTopology)
		}
		fmt.Fprintf(&w, "    restart: \"no\"\n")
		fmt.Fprintf(&w, "    stop_grace_period: 15s\n")
		if len(ports) > 0 {
			fmt.Fprintf(&w, "    ports: %s\n", flow(ports))
		}
		fmt.Fprintf(&w, "    volumes: %s\n", flow(mounts))
		fmt.Fprintf(&w, "    secrets: %s\n", flow(append([]string{"ca.pem", revocationList}, own...)))
		if len(after) > 0 {
			fmt.Fprintf(&w, "    depends_on: %s\n", flow(after))
		}
		writeLabels(&w, "    ", [][2]string{{deploy.LabelProject, o.Project}, {deploy.LabelInstance, name}, {deploy.LabelAddress, name + ":" + strconv.Itoa(port)}})
		fmt.Fprintf(&w, "    healthcheck:\n")
		fmt.Fprintf(&w, "      test: %s\n", flow([]string{"CMD", "/wololo", "health", "--quiet", "--addr", "127.0.0.1:" + strconv.Itoa(port), "--tls-dir", SecretsDir, "--as", name}))
		fmt.Fprintf(&w, "      interval: 5s\n      timeout: 3s\n      retries: 3\n")
	}
	writeProxy(&w, o)
	w.WriteString("\nvolumes:\n")
	writeVolumesAndSecrets(&w, volumes, append([]string{revocationList}, secrets...), "# Made by `wololo certs --dir TLSDIR` (make up); each service mounts its own.\n# crl.pem is the CA's revocation list (`wololo certs revoke`), a bind mount\n# every process reads again when it changes.\n")
	return w.Bytes(), nil
}

// writeVolumesAndSecrets writes the entries of the volumes section (the
// proxy's and every instance's), then the secrets section, under its
// comment: the CA's certificate and every instance's own files.
func writeVolumesAndSecrets(w *bytes.Buffer, volumes, secrets []string, secretsComment string) {
	fmt.Fprintf(w, "  %s: {}\n", proxyVolume)
	for _, v := range volumes {
		fmt.Fprintf(w, "  %s: {}\n", v)
	}
	w.WriteString("\n" + secretsComment + "secrets:\n")
	for _, s := range append([]string{"ca.pem"}, secrets...) {
		fmt.Fprintf(w, "  %s: {file: %s}\n", s, quote("./"+TLSDir+"/"+s))
	}
}

// customTopology is top as JSON, or "" if it is the binary's embedded
// default (which needs no travelling).
func customTopology(top deploy.Topology) string {
	a, _ := json.Marshal(top)
	b, _ := json.Marshal(deploy.Default())
	if bytes.Equal(a, b) {
		return ""
	}
	return string(a)
}

// writeProxy writes the docker-proxy service: the only one with the
// engine's socket, serving the masters' filtered one in the shared volume.
func writeProxy(w *bytes.Buffer, o Options) {
	fmt.Fprintf(w, "  %s:\n", proxyVolume)
	fmt.Fprintf(w, "    image: %s\n", o.Image)
	fmt.Fprintf(w, "    container_name: %s-%s\n", o.Project, proxyVolume)
	writeConfinement(w, ProxyUser, false)
	writeComposeLimits(w, ProxyLimits)
	writeLogging(w)
	fmt.Fprintf(w, "    command: %s\n", flow(proxyCommand(o, false)))
	fmt.Fprintf(w, "    restart: unless-stopped\n")
	fmt.Fprintf(w, "    volumes: %s\n", flow([]string{"/var/run/docker.sock:/var/run/docker.sock", proxyVolume + ":" + ProxyDir}))
}

// proxyCommand is the docker-proxy's command line, of the compose file or
// (swarm) of the stack.
func proxyCommand(o Options, swarm bool) []string {
	cmd := []string{"docker-proxy"}
	if swarm {
		cmd = append(cmd, "--swarm")
	}
	// The socket is made with the proxy's gid, User's (ProxyUser); the
	// gid is named all the same, so that a proxy run as another group
	// fails at start rather than the masters at their first call.
	cmd = append(cmd, "--listen", ProxySocket, "--project", o.Project, "--socket-gid", gid, "--log-level", o.LogLevel)
	if o.LogJSON {
		cmd = append(cmd, "--log-json")
	}
	return cmd
}

// flow writes a YAML flow sequence of double-quoted strings.
func flow(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// quote is a YAML double-quoted scalar; JSON's escaping is valid there.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
