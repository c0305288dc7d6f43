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
//   - the gateway and the masters are pinned to the node carrying the
//     node label NODELABEL == true (NodeLabel: "<project>.<instance>"),
//     since their named volume lives on one node and holds what nothing
//     else can give back (the jobs and their retained input; the masters'
//     terms and promises); the masters also need a manager node
//     (node.role == manager), where the docker-proxy runs. The shards are
//     not pinned: a shard started on another node starts with an empty
//     volume there, and the jobs whose state it lost are run again from
//     their input (by the gateway, or by their attached client while an
//     upload is not over), so Swarm may place it on any live node;
//   - the docker-proxy is a global service on the managers with --swarm
//     (the masters' calls are service and task calls), restarted by Swarm
//     itself (it is no graph process); it shares a node-local volume with
//     the master(s) of its node;
//   - the network is an overlay with IPsec encryption between nodes
//     (driver_opts encrypted);
//   - the certificates are Swarm secrets, keys mode 0400 owned by User (the
//     host's files' owner and mode do not matter); `docker stack deploy`
//     creates them from TLSDir beside the stack file and `docker stack rm`
//     removes them;
//   - services are found by DNS round robin (endpoint_mode dnsrr: a
//     service's name resolves to its one task's address) and ports are
//     published in host mode on the node the task runs on, not through
//     the routing mesh: both a virtual IP and the mesh need IPVS in the
//     kernel, which not every host has (the one this was tested on has
//     not), and one replica per service gains nothing from them. The
//     gateway's public port is published at PortBase and the masters'
//     ports shifted alike, so that a stack and a compose deployment (or
//     `wololo local`) on one host do not collide;
//   - every service has its limits as deploy.resources.limits and the
//     compose file's confinement (user, read_only, cap_drop ALL; cap_drop
//     reaches a service from Engine 20.10, API 1.41) but no-new-privileges:
//     docker stack deploy ignores security_opt, and a service's
//     NoNewPrivileges needs API 1.46 (Engine 27). The image holds no setuid
//     file to gain privileges by, and with every capability dropped from
//     the bounding set there would be none to gain; none has a healthcheck (Swarm
//     would kill an unhealthy task itself, competing with the masters, and
//     hold a new task in "starting" until its first check);
//   - the image is ${WOLOLO_IMAGE:-wololo:latest}, interpolated by
//     `docker stack deploy`: it must exist on every node (nothing is
//     pulled).

// StackOptions shape the generated stack file: Options (with the stack's
// own defaults: Project "wololo-swarm", Image DefaultStackImage), and the
// ports.
type StackOptions struct {
	Options
	// PortBase is the published port of the gateway's public port; the
	// masters' published ports are theirs shifted by the same amount.
	// DefaultPortBase if 0.
	PortBase int
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
	if o.PortBase == 0 {
		o.PortBase = DefaultPortBase
	}
	o.Options.defaults()
}

// pinned reports whether an instance must run on the node of its volume:
// the gateway and the masters (see the stack's notes above), not a shard.
func pinned(top deploy.Topology, in deploy.Instance) bool {
	return in.Stage == deploy.MasterStage || in.Stage == top.Gateway().Name
}

// NodeLabel is the node label that must be "true" on the node an instance
// runs on (where its volume is): "<project>.<instance>".
func NodeLabel(project, instance string) string { return project + "." + instance }

// stackNetwork is the stack's one overlay network.
const stackNetwork = "net"

// GenerateStack writes the swarm stack file for top.
func GenerateStack(top deploy.Topology, o StackOptions) ([]byte, error) {
	o.defaults()
	if err := checkDeployment(top, o.Project, o.Image, "a swarm stack", " :/\"'$"); err != nil {
		return nil, err
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
	fmt.Fprintf(&w, "# The gateway and each master run on the node labelled %s.<instance>=true (its volume's);\n", o.Project)
	fmt.Fprintf(&w, "# a shard runs on any node (what it loses with its volume is replayed).\n")
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
		var ports []string
		mounts := []string{name + "-data:" + DataDir}
		var constraints []string
		if pinned(top, in) {
			constraints = []string{"node.labels." + NodeLabel(o.Project, name) + " == true"}
		}
		switch {
		case master:
			ports = []string{publish(port, port+shift)}
			mounts = append(mounts, proxyVolume+":"+ProxyDir)
			constraints = append([]string{"node.role == manager"}, constraints...)
		case in.Stage == gateway:
			ports = []string{publish(top.PublicPort(), o.PortBase)}
		}
		cmd := command(top, in, "swarm", o.Project, o.LogLevel, o.LogJSON)
		volumes = append(volumes, name+"-data")
		secrets = append(secrets, name+".pem", name+".key")
		labels := [][2]string{{deploy.LabelProject, o.Project}, {deploy.LabelInstance, name}, {deploy.LabelAddress, name + ":" + strconv.Itoa(port)}}

		fmt.Fprintf(&w, "  %s:\n", name)
		fmt.Fprintf(&w, "    image: %s\n", quote(o.Image))
		fmt.Fprintf(&w, "    hostname: %s\n", name)
		writeConfinement(&w, User, true)
		writeLogging(&w)
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
		owner := fmt.Sprintf(", uid: %s, gid: %s", quote(uid), quote(gid))
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
		if len(constraints) > 0 {
			fmt.Fprintf(&w, "      placement: {constraints: %s}\n", flow(constraints))
		}
		writeStackLimits(&w, limitsOf(in))
	}
	writeStackProxy(&w, o)
	w.WriteString("\nnetworks:\n")
	fmt.Fprintf(&w, "  %s:\n    driver: overlay\n    driver_opts: {encrypted: \"true\"}\n", stackNetwork)
	w.WriteString("\n# Local to the node each instance is pinned to.\nvolumes:\n")
	writeVolumesAndSecrets(&w, volumes, secrets, "# Made by `wololo certs --dir TLSDIR` (make swarm-up); docker stack deploy\n# creates them as swarm secrets, docker stack rm removes them.\n")
	return w.Bytes(), nil
}

// writeStackProxy writes the docker-proxy: one per manager node, with the
// engine's socket, serving the masters of its node their filtered one.
func writeStackProxy(w *bytes.Buffer, o StackOptions) {
	fmt.Fprintf(w, "  %s:\n", proxyVolume)
	fmt.Fprintf(w, "    image: %s\n", quote(o.Image))
	writeConfinement(w, ProxyUser, true)
	writeLogging(w)
	fmt.Fprintf(w, "    command: %s\n", flow(proxyCommand(o.Options, true)))
	fmt.Fprintf(w, "    volumes: %s\n", flow([]string{"/var/run/docker.sock:/var/run/docker.sock", proxyVolume + ":" + ProxyDir}))
	fmt.Fprintf(w, "    networks: [%s]\n", stackNetwork)
	w.WriteString("    deploy:\n")
	w.WriteString("      mode: global\n")
	w.WriteString("      restart_policy: {condition: any, delay: 1s}\n")
	fmt.Fprintf(w, "      placement: {constraints: %s}\n", flow([]string{"node.role == manager"}))
	writeStackLimits(w, ProxyLimits)
}

// writeStackLimits writes a stack service's limits.
func writeStackLimits(w *bytes.Buffer, l Limits) {
	fmt.Fprintf(w, "      resources: {limits: {cpus: %s, memory: %s}}\n", quote(l.CPUs), l.Memory)
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
