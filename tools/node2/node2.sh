#!/bin/bash
# A second Docker engine on this machine, in its own network namespace,
# joined as a worker to a swarm whose manager is this machine's engine, and
# the Wololo stack deployed across the two, so that a shard can run on the
# second node and that node can be crashed mid-job.
#
#   tools/node2/node2.sh up        netns + veth, second dockerd, image loaded,
#                                  swarm (made here only if the engine is
#                                  inactive), stack deployed, health checked
#   tools/node2/node2.sh where     which node each task runs on
#   tools/node2/node2.sh crash     cut node 2's link and SIGKILL its engine:
#                                  dockerd, containerd, shims, containers
#                                  (CRASH=dockerd: SIGKILL dockerd alone)
#   tools/node2/node2.sh job [S]   submit a job (MATCHES/PLAYERS, default
#                                  data/full), crash node 2 S seconds in
#                                  (default 4; 0: no crash), compare with
#                                  `wololo reference`
#   tools/node2/node2.sh down      remove all of it; leave the swarm only if
#                                  `up` made it; verify nothing is left
#
# Run as root from the repository root, after `make build`. Needs dockerd,
# containerd, ip, nsenter, and an engine at /var/run/docker.sock whose
# swarm is inactive (or one `up` made). The first engine is never stopped
# or restarted, and its data root is never touched.
#
# Limits of this machine found with it (see README "Two Swarm nodes on one
# machine"): the kernel has no ESP (xfrm "Requested type not found") and no
# GCM ("Requested AEAD algorithm not found"), so an encrypted overlay (the
# stack's driver_opts encrypted) carries nothing between the nodes; `up`
# deploys a copy of the stack without it unless ENCRYPTED=1. No IPVS either,
# so only dnsrr endpoints (which the stack uses) work, not VIPs.
set -euo pipefail

BASE=${BASE:-/tmp/wololo-node2}
NS=${NS:-wololo-node2}
VETH_HOST=${VETH_HOST:-wl-n2h}
VETH_NODE=${VETH_NODE:-wl-n2c}
HOST_IP=${HOST_IP:-10.213.0.1}
NODE_IP=${NODE_IP:-10.213.0.2}
PROJECT=${PROJECT:-wololo-node2}
PORT_BASE=${PORT_BASE:-7400}
IMAGE=${IMAGE:-wololo:node2}
ENCRYPTED=${ENCRYPTED:-0}
BIN=${BIN:-bin/wololo}
TLS_DIR=${TLS_DIR:-deploy/tls}
STACK_FILE=deploy/.$PROJECT-stack.yaml
D2=(docker -H "unix://$BASE/docker.sock")

say() { echo "node2: $*"; }
die() { echo "node2: $*" >&2; exit 1; }

node2_alive() { [ -f "$BASE/docker.pid" ] && kill -0 "$(cat "$BASE/docker.pid")" 2>/dev/null; }

up() {
	[ "$(id -u)" = 0 ] || die "run as root (netns, veth, a dockerd)"
	[ -x "$BIN" ] || die "$BIN missing: make build"
	local state
	state=$(docker info --format '{{.Swarm.LocalNodeState}}')
	if [ "$state" != inactive ] && [ ! -f "$BASE/swarm-made" ]; then
		die "the first engine's swarm is $state, not made by this script: not touching it"
	fi
	mkdir -p "$BASE/root" "$BASE/exec" "$BASE/logs"

	if ! ip netns list | grep -qw "$NS"; then
		ip netns add "$NS"
		ip link add "$VETH_HOST" type veth peer name "$VETH_NODE"
		ip link set "$VETH_NODE" netns "$NS"
		ip addr add "$HOST_IP/30" dev "$VETH_HOST"
		ip link set "$VETH_HOST" up
		ip netns exec "$NS" ip addr add "$NODE_IP/30" dev "$VETH_NODE"
		ip netns exec "$NS" ip link set "$VETH_NODE" up
		ip netns exec "$NS" ip link set lo up
		say "netns $NS, $VETH_HOST $HOST_IP/30 <-> $VETH_NODE $NODE_IP/30 (no default route: the node reaches only the host side)"
	fi

	if ! node2_alive; then
		# Its own config file: the default /etc/docker/daemon.json names the
		# first engine's data root. nsenter --net, not `ip netns exec`: the
		# latter also makes a mount namespace with a fresh /sys, without
		# /sys/fs/cgroup, and dockerd then fails "Devices cgroup isn't mounted".
		local driver
		driver=$(docker info --format '{{.Driver}}')
		cat >"$BASE/daemon.json" <<EOF
{"data-root": "$BASE/root", "exec-root": "$BASE/exec", "pidfile": "$BASE/docker.pid",
 "hosts": ["unix://$BASE/docker.sock"], "storage-driver": "$driver", "bridge": "none",
 "cgroup-parent": "$NS", "log-driver": "json-file", "log-opts": {"max-size": "10m", "max-file": "3"}}
EOF
		nsenter --net="/run/netns/$NS" setsid dockerd --config-file "$BASE/daemon.json" >>"$BASE/logs/dockerd.log" 2>&1 </dev/null &
		for _ in $(seq 1 60); do "${D2[@]}" info >/dev/null 2>&1 && break; sleep 0.5; done
		"${D2[@]}" info >/dev/null 2>&1 || die "the second dockerd did not answer: $BASE/logs/dockerd.log"
		say "second engine up: unix://$BASE/docker.sock (pid $(cat "$BASE/docker.pid"), its own containerd under $BASE/exec/containerd)"
	fi

	docker image inspect "$IMAGE" >/dev/null 2>&1 || make --no-print-directory images IMAGE="$IMAGE"
	if [ "$(docker image inspect -f '{{.Id}}' "$IMAGE")" != "$("${D2[@]}" image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null)" ]; then
		docker save "$IMAGE" | "${D2[@]}" load >/dev/null
		say "loaded $IMAGE into the second engine"
	fi

	if [ "$(docker info --format '{{.Swarm.LocalNodeState}}')" = inactive ]; then
		if docker network inspect docker_gwbridge >/dev/null 2>&1; then echo had-gwbridge; else echo; fi >"$BASE/swarm-made"
		docker swarm init --advertise-addr "$HOST_IP" --listen-addr "$HOST_IP:2377" >/dev/null
		say "swarm made on $HOST_IP:2377 (down leaves it)"
	fi
	if [ "$("${D2[@]}" info --format '{{.Swarm.LocalNodeState}}')" != active ]; then
		"${D2[@]}" swarm join --token "$(docker swarm join-token -q worker)" \
			--advertise-addr "$NODE_IP" --listen-addr "$NODE_IP:2377" "$HOST_IP:2377" >/dev/null
		say "second engine joined as a worker ($("${D2[@]}" info --format '{{.Swarm.NodeID}}'))"
	fi

	make --no-print-directory certs >/dev/null
	"$BIN" compose --swarm --project "$PROJECT" --port-base "$PORT_BASE" --out "$STACK_FILE.tmp"
	if [ "$ENCRYPTED" = 1 ]; then mv "$STACK_FILE.tmp" "$STACK_FILE"
	else sed '/driver_opts: {encrypted: "true"}/d' "$STACK_FILE.tmp" >"$STACK_FILE" && rm -f "$STACK_FILE.tmp"; fi
	local n1
	n1=$(docker info --format '{{.Swarm.NodeID}}')
	for l in $(grep -o "node\.labels\.$PROJECT\.[a-z0-9-]*" "$STACK_FILE" | sort -u | sed 's/^node\.labels\.//'); do
		docker node update --label-add "$l=true" "$n1" >/dev/null
	done
	(cd deploy && WOLOLO_IMAGE="$IMAGE" docker stack deploy --resolve-image never -c "$(basename "$STACK_FILE")" "$PROJECT" >/dev/null)
	"$BIN" health --timeout 90s --addr "127.0.0.1:$PORT_BASE" --tls-dir "$TLS_DIR" --as client --server-name localhost
	for m in 1 2 3; do
		"$BIN" health --timeout 90s --addr "127.0.0.1:$((PORT_BASE + 3 + m))" --tls-dir "$TLS_DIR" --as operator --server-name "master-$m"
	done
	where
}

where() {
	# Both engines call themselves by this machine's host name: the task's
	# node ID says which.
	local n1 t
	n1=$(docker info --format '{{.Swarm.NodeID}}')
	for t in $(docker stack ps "$PROJECT" -q --filter desired-state=running 2>/dev/null); do
		docker inspect --format '{{.Spec.ContainerSpec.Labels}} {{.NodeID}} {{.Status.State}}' "$t" |
			sed -E "s/.*wololo.instance:([a-z0-9-]+).* ([a-z0-9]+) ([a-z]+)\$/\1 \2 \3/; s/^map\[[^]]*\]/docker-proxy/; s/ $n1 / node1 /; s/ [a-z0-9]{25} / node2 /"
	done | sort
}

crash() {
	# As a machine dies: its link first, then every process of its engine.
	# (SIGKILL of dockerd alone leaves containerd, the shims and the
	# containers running, and the shards serving.)
	# CRASH=dockerd: SIGKILL only the second dockerd, the link and the rest
	# left as they are.
	if [ "${CRASH:-machine}" = dockerd ]; then
		kill -9 "$(cat "$BASE/docker.pid")"
		say "SIGKILLed node 2's dockerd ($(cat "$BASE/docker.pid")) at $(date +%T.%N | cut -c1-12); its containerd, shims and containers run on"
		return
	fi
	ip link set "$VETH_HOST" down 2>/dev/null || true
	local pids=""
	[ -f "$BASE/docker.pid" ] && pids="$pids $(cat "$BASE/docker.pid")"
	[ -f "$BASE/exec/containerd/containerd.pid" ] && pids="$pids $(cat "$BASE/exec/containerd/containerd.pid")"
	pids="$pids $(cat /sys/fs/cgroup/pids/"$NS"/*/cgroup.procs 2>/dev/null || true)"
	pids="$pids $(pgrep -f -- "-address $BASE/exec/containerd/containerd.sock" || true)"
	pids=$(echo $pids)
	[ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
	say "crashed node 2 at $(date +%T.%N | cut -c1-12): link down, SIGKILL $pids"
}

job() {
	local at=${1:-4} out=${OUT:-$BASE/out/job-$(date +%s)}
	local m=${MATCHES:-data/full/matches.csv} p=${PLAYERS:-data/full/match_players.csv}
	local ref=$BASE/ref-$(basename "$(dirname "$m")")
	[ -f "$ref/q4.csv" ] || "$BIN" reference --matches "$m" --players "$p" --out "$ref" >/dev/null
	where
	"$BIN" client submit --tls-dir "$TLS_DIR" --server "127.0.0.1:$PORT_BASE" --matches "$m" --players "$p" --out "$out" &
	local sub=$!
	if [ "$at" != 0 ]; then sleep "$at"; crash; fi
	local rc=0
	wait $sub || rc=$?
	where
	[ $rc = 0 ] || die "client submit exited $rc"
	for q in q1 q2 q3 q4; do cmp "$ref/$q.csv" "$out/$q.csv" || die "$q differs from the reference"; done
	say "job byte-equal to the reference ($out)"
}

down() {
	set +e
	if [ "$(docker info --format '{{.Swarm.LocalNodeState}}')" = active ] && [ "$(docker info --format '{{.Swarm.ControlAvailable}}')" = true ]; then
		docker stack rm "$PROJECT" >/dev/null 2>&1
		for _ in $(seq 1 60); do [ -z "$(docker ps -aq --filter label=com.docker.stack.namespace=$PROJECT)" ] && break; sleep 1; done
		local n1
		n1=$(docker info --format '{{.Swarm.NodeID}}')
		for l in $(docker node inspect --format '{{range $k, $v := .Spec.Labels}}{{$k}} {{end}}' "$n1"); do
			case $l in "$PROJECT".*) docker node update --label-rm "$l" "$n1" >/dev/null ;; esac
		done
	fi
	for _ in $(seq 1 30); do
		v=$(docker volume ls -q --filter label=com.docker.stack.namespace=$PROJECT)
		n=$(docker network ls -q --filter label=com.docker.stack.namespace=$PROJECT)
		[ -z "$v$n" ] && break
		[ -n "$v" ] && docker volume rm $v >/dev/null 2>&1
		[ -n "$n" ] && docker network rm $n >/dev/null 2>&1
		sleep 1
	done

	# The second engine: leave (so the manager forgets it), stop, then
	# whatever a crash left.
	if node2_alive; then
		"${D2[@]}" swarm leave --force >/dev/null 2>&1
		kill -TERM "$(cat "$BASE/docker.pid")"
		for _ in $(seq 1 40); do node2_alive || break; sleep 0.5; done
	fi
	local pids=""
	[ -f "$BASE/docker.pid" ] && kill -0 "$(cat "$BASE/docker.pid")" 2>/dev/null && pids="$(cat "$BASE/docker.pid")"
	[ -f "$BASE/exec/containerd/containerd.pid" ] && kill -0 "$(cat "$BASE/exec/containerd/containerd.pid")" 2>/dev/null && pids="$pids $(cat "$BASE/exec/containerd/containerd.pid")"
	pids="$pids $(cat /sys/fs/cgroup/pids/"$NS"/*/cgroup.procs 2>/dev/null) $(pgrep -f -- "-address $BASE/exec/containerd/containerd.sock") $(pgrep -f -- "fuse-overlayfs .*$BASE/root/")"
	pids=$(echo $pids)
	[ -n "$pids" ] && kill -9 $pids 2>/dev/null && sleep 1
	# Mounts under BASE (fuse-overlayfs layers, netns files, shm), deepest first.
	for mnt in $(awk -v b="$BASE/" 'index($2, b) == 1 {print $2}' /proc/self/mounts | sort -r); do
		umount "$mnt" 2>/dev/null || umount -l "$mnt"
	done
	for h in /sys/fs/cgroup/*/; do
		[ -d "$h$NS" ] && find "$h$NS" -depth -type d -exec rmdir {} \; 2>/dev/null
	done

	if [ -f "$BASE/swarm-made" ]; then
		local had
		had=$(cat "$BASE/swarm-made")
		docker node rm --force $(docker node ls -q --filter role=worker) >/dev/null 2>&1
		docker swarm leave --force >/dev/null && say "left the swarm up made"
		if [ -z "$had" ]; then
			for _ in $(seq 1 40); do docker network inspect docker_gwbridge >/dev/null 2>&1 || break; docker network rm docker_gwbridge >/dev/null 2>&1 || sleep 0.25; done
		fi
		# An encrypted overlay whose IPsec SAs the kernel refused leaves the
		# first engine's rules for it behind (the VXLAN drop/accept in
		# INPUT, the mark in mangle OUTPUT, an xfrm policy to node 2): out
		# of a swarm, no overlay needs them.
		local rule
		for tbl in filter:INPUT mangle:OUTPUT; do
			iptables -t "${tbl%%:*}" -S "${tbl#*:}" | grep -- '--dport 4789 -m u32' | sed 's/^-A //' | while read -r rule; do
				eval iptables -t "${tbl%%:*}" -D "$rule"
			done
		done
		ip xfrm policy deleteall src "$HOST_IP/32" dst "$NODE_IP/32" 2>/dev/null
		ip xfrm state deleteall src "$HOST_IP" dst "$NODE_IP" 2>/dev/null
		ip xfrm state deleteall src "$NODE_IP" dst "$HOST_IP" 2>/dev/null
	else
		# A swarm that was there before: only forget node 2.
		[ -n "$(docker node ls -q 2>/dev/null)" ] && for id in $(docker node ls --filter role=worker --format '{{.ID}} {{.Status}}' | awk '$2 == "Down" {print $1}'); do
			docker node rm --force "$id" >/dev/null 2>&1
		done
	fi
	ip link del "$VETH_HOST" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$BASE" "$STACK_FILE" "$STACK_FILE.tmp"

	local left=""
	ip netns list | grep -qw "$NS" && left="$left netns"
	ip link show "$VETH_HOST" >/dev/null 2>&1 && left="$left veth"
	[ -e "$BASE" ] && left="$left $BASE"
	left="$left $(docker ps -aq --filter label=com.docker.stack.namespace=$PROJECT) $(docker volume ls -q --filter label=com.docker.stack.namespace=$PROJECT)"
	left="$left $(docker network ls -q --filter label=com.docker.stack.namespace=$PROJECT)"
	left=$(echo $left)
	[ -z "$left" ] || die "left behind: $left"
	say "down: nothing left (the first engine's swarm: $(docker info --format '{{.Swarm.LocalNodeState}}'))"
}

case ${1:-} in
up) up ;;
where) where ;;
crash) crash ;;
job) job "${2:-4}" ;;
down) down ;;
*) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
