package compose

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/wololo/wololo/deploy"
)

// The swarm stack (`wololo compose --swarm`, checked in as
// deploy/stack.yaml): the compose deployment's services as a Docker Swarm
// stack for `docker stack deploy`. What differs from the compose file:
//
//   - every graph process and master is a replicated service of one replica
//     with deploy.restart_policy condition none (the masters supervise),
//     restarted by the masters' swarm runtime with a forced update; the
//     update order is stop-first, so an instance never runs twice;
//   - every instance is pinned to the node carrying the node label
//     NODELABEL == true (NodeLabel: "<project>.<instance>"), since its named
//     volume lives on one node; the masters also need a manager node
//     (node.role == manager), where the docker-proxy runs;
//   - the docker-proxy is a global service on the managers with --swarm
//     (the masters' calls are service and task calls), restarted by Swarm
//     itself (it is no graph process); it shares a node-local volume with
//     the master(s) of its node;
//   - the network is an overlay with IPsec encryption between nodes
//     (driver_opts encrypted);
//   - the certificates are Swarm secrets, keys mode 0400 (the masters' owned
//     by their unprivileged user); `docker stack deploy` creates them from
//     TLSDir beside the stack file and `docker stack rm` removes them;
//   - services are found by DNS round robin (endpoint_mode dnsrr: a
//     service's name resolves to its one task's address) and ports are
//     published in host mode on the node the task runs on, not through
//     the routing mesh: both a virtual IP and the mesh need IPVS in the
//     kernel, which not every host has (the one this was tested on has
//     not), and one replica per service gains nothing from them. The
//     gateway's public port is published at PortBase and the masters'
//     ports shifted alike, so that a stack and a compose deployment (or
//     `wololo local`) on one host do not collide;
//   - every service has resource limits; none has a healthcheck (Swarm
//     would kill an unhealthy task itself, competing with the masters, and
//     hold a new task in "starting" until its first check);
//   - the image is ${WOLOLO_IMAGE:-wololo:latest}, interpolated by
//     `docker stack deploy`: it must exist on every node (nothing is
//     pulled).

// StackOptions shape the generated stack file.
type StackOptions struct {
	// Project is the stack's name as the labels carry it (the masters'
	// filter) and the prefix of the node labels; "wololo-swarm" if empty.
	// Deploy the stack under the same name.
	Project string
	// Image every service runs; DefaultStackImage if empty.
	Image string
	// LogLevel of every process; "info" if empty.
	LogLevel string
	// PortBase is the published port of the gateway's public port; the
	// masters' published ports are theirs shifted by the same amount.
	// DefaultPortBase if 0.
	PortBase int
	// LogJSON gives every service --log-json (the masters log JSON
	// anyway), as Options.LogJSON does for compose.
	LogJSON bool
}

// The stack's defaults.
const (
	DefaultStackProject = "wololo-swarm"
	DefaultStackImage   = "${WOLOLO_IMAGE:-wololo:latest}"
	DefaultPortBase     = 7300
	// DefaultStackFile is the checked-in stack: GenerateStack's output for
	// the default topology and options.
	DefaultStackFile = "deploy/stack.yaml"
)

func (o *StackOptions) defaults() {
	if o.Project == "" {
		o.Project = DefaultStackProject
	}
	if o.Image == "" {
		o.Image = DefaultStackImage
	}
	if o.LogLevel == "" {
		o.LogLevel = "info"
	}
	if o.PortBase == 0 {
		o.PortBase = DefaultPortBase
	}
}

// NodeLabel is the node label that must be "true" on the node an instance
// runs on (where its volume is): "<project>.<instance>".
func NodeLabel(project, instance string) string { return project + "." + instance }

// The resource limits of the stack's services.
const (
	graphCPUs, graphMemory   = "1.0", "2G"
	masterCPUs, masterMemory = "0.5", "256M"
	proxyCPUs, proxyMemory   = "0.25", "64M"
)

// stackNetwork is the stack's one overlay network.
const stackNetwork = "net"

// GenerateStack writes the swarm stack file for top.
func GenerateStack(top deploy.Topology, o StackOptions) ([]byte, error) {
	o.defaults()
	if err := top.Validate(); err != nil {
		return nil, err
	}
	if top.Masters < 1 {
		return nil, fmt.Errorf("the topology has no masters: a swarm stack needs at least one (they do every restart)")
	}
	if strings.ContainsAny(o.Project, " :/\"'$") || strings.ContainsAny(o.Image, " \"'") {
		return nil, fmt.Errorf("project %q or image %q is not usable in a stack file", o.Project, o.Image)
	}
	shift := o.PortBase - top.PublicPort()
	for _, in := range top.MasterInstances() {
		if p := top.Port(in) + shift; p < 1 || p > 65535 {
			return nil, fmt.Errorf("--port-base %d puts %s's published port at %d", o.PortBase, in.Name(), p)
		}
	}
	custom := customTopology(top)

	var w bytes.Buffer
	fmt.Fprintf(&w, "# Generated by `wololo compose --swarm` from the topology; do not edit by hand.\n")
	fmt.Fprintf(&w, "# A Docker Swarm stack of %d graph processes and %d masters: deploy it as\n", len(top.Instances()), top.Masters)
	fmt.Fprintf(&w, "# `docker stack deploy -c stack.yaml %s` (make swarm-up). Swarm restarts\n", o.Project)
	fmt.Fprintf(&w, "# nothing but the docker-proxy: the leading master restarts what dies.\n")
	fmt.Fprintf(&w, "# Each instance runs on the node labelled %s.<instance>=true (its volume's).\n", o.Project)
	fmt.Fprintf(&w, "version: \"3.8\"\n\n")
	if custom != "" {
		fmt.Fprintf(&w, "x-topology: &topology '%s'\n\n", strings.ReplaceAll(custom, "'", "''"))
	}
	w.WriteString("services:\n")
	gateway := top.Gateway().Name
	var volumes, secrets []string
	for _, in := range append(top.Instances(), top.MasterInstances()...) {
		name := in.Name()
		port := top.Port(in)
		master := in.Stage == deploy.MasterStage
		var cmd []string
		var ports []string
		mounts := []string{name + "-data:" + DataDir}
		constraints := []string{"node.labels." + NodeLabel(o.Project, name) + " == true"}
		cpus, memory := graphCPUs, graphMemory
		switch {
		case master:
			cmd = []string{"master", "--id", strconv.Itoa(in.Index), "--runtime", "swarm", "--docker-project", o.Project, "--docker-host", "unix://" + ProxySocket, "--log-json"}
			ports = []string{publish(port, port+shift)}
			mounts = append(mounts, proxyVolume+":"+ProxyDir)
			constraints = append([]string{"node.role == manager"}, constraints...)
			cpus, memory = masterCPUs, masterMemory
		case in.Stage == gateway:
			cmd = []string{"gateway"}
			ports = []string{publish(top.PublicPort(), o.PortBase)}
		default:
			cmd = []string{"worker", "--instance", name}
		}
		cmd = append(cmd, "--hosts", "{instance}", "--data", DataDir, "--log-level", o.LogLevel, "--tls-dir", SecretsDir)
		if o.LogJSON && in.Stage != deploy.MasterStage {
			cmd = append(cmd, "--log-json")
		}
		volumes = append(volumes, name+"-data")
		secrets = append(secrets, name+".pem", name+".key")
		labels := [][2]string{{deploy.LabelProject, o.Project}, {deploy.LabelInstance, name}, {deploy.LabelAddress, name + ":" + strconv.Itoa(port)}}

		fmt.Fprintf(&w, "  %s:\n", name)
		fmt.Fprintf(&w, "    image: %s\n", quote(o.Image))
		fmt.Fprintf(&w, "    hostname: %s\n", name)
		if master {
			fmt.Fprintf(&w, "    user: %s\n", quote(MasterUser))
		}
		fmt.Fprintf(&w, "    command: %s\n", flow(cmd))
		if custom != "" {
			fmt.Fprintf(&w, "    environment:\n      %s: *topology\n", deploy.EnvTopology)
		}
		fmt.Fprintf(&w, "    stop_grace_period: 15s\n")
		if len(ports) > 0 {
			fmt.Fprintf(&w, "    ports: [%s]\n", strings.Join(ports, ", "))
		}
		fmt.Fprintf(&w, "    volumes: %s\n", flow(mounts))
		fmt.Fprintf(&w, "    networks: [%s]\n", stackNetwork)
		w.WriteString("    secrets:\n")
		owner := ""
		if master {
			uid, gid, _ := strings.Cut(MasterUser, ":")
			owner = fmt.Sprintf(", uid: %s, gid: %s", quote(uid), quote(gid))
		}
		fmt.Fprintf(&w, "      - {source: ca.pem, target: ca.pem, mode: 0444}\n")
		fmt.Fprintf(&w, "      - {source: %s.pem, target: %s.pem%s, mode: 0444}\n", name, name, owner)
		fmt.Fprintf(&w, "      - {source: %s.key, target: %s.key%s, mode: 0400}\n", name, name, owner)
		// The container's labels (the chaos harness and the proxy's kill
		// find a task's container by them) and the service's (the masters'
		// swarm runtime finds services and tasks by them).
		writeLabels(&w, "    ", labels)
		w.WriteString("    deploy:\n")
		w.WriteString("      replicas: 1\n")
		w.WriteString("      endpoint_mode: dnsrr\n")
		writeLabels(&w, "      ", labels)
		w.WriteString("      restart_policy: {condition: none}\n")
		w.WriteString("      update_config: {parallelism: 1, delay: 0s, order: stop-first, failure_action: continue, monitor: 1s}\n")
		fmt.Fprintf(&w, "      placement: {constraints: %s}\n", flow(constraints))
		fmt.Fprintf(&w, "      resources: {limits: {cpus: %s, memory: %s}}\n", quote(cpus), memory)
	}
	writeStackProxy(&w, o)
	w.WriteString("\nnetworks:\n")
	fmt.Fprintf(&w, "  %s:\n    driver: overlay\n    driver_opts: {encrypted: \"true\"}\n", stackNetwork)
	w.WriteString("\n# Local to the node each instance is pinned to.\nvolumes:\n")
	fmt.Fprintf(&w, "  %s: {}\n", proxyVolume)
	for _, v := range volumes {
		fmt.Fprintf(&w, "  %s: {}\n", v)
	}
	w.WriteString("\n# Made by `wololo certs --dir TLSDIR` (make swarm-up); docker stack deploy\n# creates them as swarm secrets, docker stack rm removes them.\nsecrets:\n")
	for _, s := range append([]string{"ca.pem"}, secrets...) {
		fmt.Fprintf(&w, "  %s: {file: %s}\n", s, quote("./"+TLSDir+"/"+s))
	}
	return w.Bytes(), nil
}

// writeStackProxy writes the docker-proxy: one per manager node, with the
// engine's socket, serving the masters of its node their filtered one.
func writeStackProxy(w *bytes.Buffer, o StackOptions) {
	uid, gid, _ := strings.Cut(MasterUser, ":")
	fmt.Fprintf(w, "  %s:\n", proxyVolume)
	fmt.Fprintf(w, "    image: %s\n", quote(o.Image))
	proxy := []string{"docker-proxy", "--swarm", "--listen", ProxySocket, "--project", o.Project, "--socket-uid", uid, "--socket-gid", gid, "--log-level", o.LogLevel}
	if o.LogJSON {
		proxy = append(proxy, "--log-json")
	}
	fmt.Fprintf(w, "    command: %s\n", flow(proxy))
	fmt.Fprintf(w, "    volumes: %s\n", flow([]string{"/var/run/docker.sock:/var/run/docker.sock", proxyVolume + ":" + ProxyDir}))
	fmt.Fprintf(w, "    networks: [%s]\n", stackNetwork)
	w.WriteString("    deploy:\n")
	w.WriteString("      mode: global\n")
	w.WriteString("      restart_policy: {condition: any, delay: 1s}\n")
	fmt.Fprintf(w, "      placement: {constraints: %s}\n", flow([]string{"node.role == manager"}))
	fmt.Fprintf(w, "      resources: {limits: {cpus: %s, memory: %s}}\n", quote(proxyCPUs), proxyMemory)
}

// publish is a port published on the node the task runs on.
func publish(target, published int) string {
	return fmt.Sprintf("{target: %d, published: %d, protocol: tcp, mode: host}", target, published)
}

func writeLabels(w *bytes.Buffer, indent string, labels [][2]string) {
	fmt.Fprintf(w, "%slabels:\n", indent)
	for _, l := range labels {
		fmt.Fprintf(w, "%s  %s: %s\n", indent, l[0], quote(l[1]))
	}
}
