# Wololo developer commands. `make help` lists them.
SHELL := /bin/bash
GO ?= go
BIN := bin/wololo
TOOLS := $(CURDIR)/bin/tools

# Pinned tool versions (installed with `go install` into bin/tools).
BUF_VERSION := v1.50.0
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.5.1
GRPCURL_VERSION := v1.9.3
STATICCHECK_VERSION := v0.8.2

# What `buf breaking` compares proto/ against: the last release tag, else
# the previous commit (on a branch, override with BREAKING_AGAINST=main).
BREAKING_AGAINST ?= $(or $(shell git describe --tags --abbrev=0 2>/dev/null),HEAD~1)

# `wololo version`'s commit for builds the toolchain does not stamp (a
# linked git worktree, -buildvcs=false): see services/cmdline/version.
VERSION_PKG := github.com/wololo/wololo/services/cmdline/version
VERSION_LDFLAGS = -X $(VERSION_PKG).Commit=$(shell git rev-parse HEAD 2>/dev/null) -X $(VERSION_PKG).Modified=$(if $(shell git status --porcelain 2>/dev/null | head -1),true,false)

# Where `make demo` and `make reference` read and write.
MATCHES ?=
PLAYERS ?=
OUT ?= out/demo
FUZZTIME ?= 15s

# `make chaos-local`: SIGKILLs per run and the schedule's seed. Its output
# directory is OUT when given, out/chaos otherwise; without MATCHES/PLAYERS
# it generates a dataset into data/chaos once.
KILLS ?= 20
SEED ?= 1
CHAOS_OUT = $(if $(filter file,$(origin OUT)),out/chaos,$(OUT))
# SQL=1: the chaos job (chaos-local, chaos, swarm-chaos) is one of more
# SQL queries (--sql: the four defaults and tools/chaos/sql's user
# queries) than the four default ones it runs otherwise.
SQL ?=
CHAOS_SQL = $(if $(filter 1 yes true,$(SQL)),--sql)
# STANDING=1: the job of every chaos target (chaos-local, chaos-election,
# chaos, chaos-election-docker, swarm-chaos, swarm-chaos-election) is a
# standing one fed in EPOCHS epochs (4 unless given): submitted
# --standing, appended, closed, every version checked (--standing).
STANDING ?=
EPOCHS ?=
CHAOS_STANDING = $(if $(filter 1 yes true,$(STANDING)),--standing$(if $(EPOCHS), --epochs $(EPOCHS)))

# `make chaos-election`: kills of the leading master, 10 unless KILLS is
# given on the command line or in the environment (KILLS's default of 20
# is chaos-local's); output in OUT when given, out/chaos-election otherwise.
ELECTION_KILLS = $(if $(filter command line environment,$(origin KILLS)),$(KILLS),10)
ELECTION_OUT = $(if $(filter file,$(origin OUT)),out/chaos-election,$(OUT))

.PHONY: promtool test-ci test-chromium test-swarm certs images up down logs submit chaos chaos-election-docker e2e-docker swarm-up swarm-down swarm-submit swarm-chaos swarm-chaos-election e2e-swarm help build demo local chaos-local chaos-election test unit chromium lint race proto proto-check tools ci bench bench-sql bench-analyst bench-sizes bench-micro duckdb duckdb-test sql-diff sql-diff-test fuzz reference datagen clean

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/wololo (static)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(VERSION_LDFLAGS)' -o $(BIN) .

demo: build ## run the whole graph in one process on the default dataset (generated once)
ifeq ($(MATCHES),)
	$(BIN) demo --out $(OUT)
else
	$(BIN) demo --matches $(MATCHES) --players $(PLAYERS) --out $(OUT)
endif

local: build ## run the topology as OS processes until Ctrl-C (data and logs in data/local)
	$(BIN) local

chaos-local: build ## crash harness: make chaos-local [MATCHES=F PLAYERS=F] [OUT=D] [KILLS=20] [SEED=1] [SQL=1] [STANDING=1 [EPOCHS=4]]
ifeq ($(MATCHES),)
	$(BIN) chaos local --dataset data/chaos --out $(CHAOS_OUT) --kills $(KILLS) --seed $(SEED) $(CHAOS_SQL) $(CHAOS_STANDING)
else
	$(BIN) chaos local --matches $(MATCHES) --players $(PLAYERS) --out $(CHAOS_OUT) --kills $(KILLS) --seed $(SEED) $(CHAOS_SQL) $(CHAOS_STANDING)
endif

chaos-election: build ## kill the leading master during a job, time failovers, check one leader per term: make chaos-election [MATCHES=F PLAYERS=F] [OUT=D] [KILLS=10] [SEED=1] [SQL=1] [STANDING=1 [EPOCHS=4]]
ifeq ($(MATCHES),)
	$(BIN) chaos election --dataset data/chaos --out $(ELECTION_OUT) --kills $(ELECTION_KILLS) --seed $(SEED) $(CHAOS_SQL) $(CHAOS_STANDING)
else
	$(BIN) chaos election --matches $(MATCHES) --players $(PLAYERS) --out $(ELECTION_OUT) --kills $(ELECTION_KILLS) --seed $(SEED) $(CHAOS_SQL) $(CHAOS_STANDING)
endif

# What `make test` does beyond the checkout and the temporary directory:
# with a Docker engine, it builds wololo:latest and brings the compose
# deployment up and down (e2e-docker). Installing chromium with apt-get and
# the Swarm test (which makes a one-node swarm on an engine in none, and
# leaves it after) change the machine: only when asked, with
# WOLOLO_TEST_MACHINE=1 (.ci/run sets it; `make test-ci` is the same).
WOLOLO_TEST_MACHINE ?=
MACHINE_ASKED = $(filter 1,$(WOLOLO_TEST_MACHINE))

test: lint test-chromium unit sql-diff-test e2e-docker test-swarm ## everything CI runs: lint, generated-code check, all tests, the SQL engine against DuckDB (seeded), the docker e2e where an engine answers; chromium and the swarm e2e with WOLOLO_TEST_MACHINE=1

test-ci: ## make test with WOLOLO_TEST_MACHINE=1: also installs chromium and runs the swarm e2e (what .ci/run runs)
	@$(MAKE) --no-print-directory test WOLOLO_TEST_MACHINE=1

test-chromium:
	@if [ -n "$(MACHINE_ASKED)" ]; then $(MAKE) --no-print-directory chromium; \
	  elif [ -z "$(CHROMIUM_FOUND)" ]; then echo "chromium: not installed, and make test installs it only with WOLOLO_TEST_MACHINE=1 (or make chromium): the web page's browser test will skip"; fi

test-swarm:
	@if [ -n "$(MACHINE_ASKED)" ]; then $(MAKE) --no-print-directory e2e-swarm; \
	  else echo "e2e-swarm: SKIPPED: it may make a swarm on this engine; WOLOLO_TEST_MACHINE=1 make test (or make e2e-swarm) runs it"; fi

unit: $(TOOLS)/grpcurl $(TOOLS)/promtool ## all Go tests (unit, fuzz seeds, in-process end to end; the docs' grpcurl lines with bin/tools/grpcurl; the alert rules with bin/tools/promtool)
	$(GO) test -count=1 -timeout 25m ./...

# The web page's test opens it in headless Chromium (services/e2e,
# TestWatchingALocalCluster); Debian's package is installed when missing,
# and where it cannot be the test says so and skips that part.
CHROMIUM_FOUND = $(shell command -v chromium || command -v chromium-browser || command -v google-chrome)
chromium: ## install Debian's chromium (for the web page's headless test) when missing
	@if [ -n "$(CHROMIUM_FOUND)" ]; then exit 0; fi; \
	  SUDO=; if [ "$$(id -u)" != 0 ]; then SUDO="sudo -n"; fi; \
	  if command -v apt-get >/dev/null 2>&1 && $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; then \
	    echo "chromium: installed $$(command -v chromium)"; \
	  else echo "chromium: SKIPPED: could not apt-get install chromium; the web page's browser test will skip"; fi

lint: tools $(TOOLS)/staticcheck ## gofmt, go vet, staticcheck, buf lint and breaking, generated code up to date, race tests of the concurrent packages
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(TOOLS)/staticcheck ./...
	PATH=$(TOOLS):$$PATH buf lint
	@if git rev-parse -q --verify '$(BREAKING_AGAINST)^{commit}' >/dev/null; then \
	  echo "buf breaking --against .git#ref=$(BREAKING_AGAINST)"; \
	  PATH=$(TOOLS):$$PATH buf breaking --against '.git#ref=$(BREAKING_AGAINST)'; \
	else echo "buf breaking: SKIPPED: no $(BREAKING_AGAINST) to compare with"; fi
	$(MAKE) --no-print-directory proto-check
	$(MAKE) --no-print-directory race

race: ## the packages with concurrency under the race detector (-short: the full runs are in unit)
	$(GO) test -race -short -count=1 -timeout 15m ./transport/ ./transport/segstore/ ./services/dataflow/stage/ ./services/roles/gateway/ ./services/base/inputlog/ ./internal/directio/ ./services/roles/master/ ./election/...

tools: $(TOOLS)/buf $(TOOLS)/protoc-gen-go $(TOOLS)/protoc-gen-go-grpc ## install pinned buf and protoc plugins

$(TOOLS)/buf:
	GOBIN=$(TOOLS) $(GO) install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
$(TOOLS)/protoc-gen-go:
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
$(TOOLS)/protoc-gen-go-grpc:
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
$(TOOLS)/staticcheck:
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
promtool: $(TOOLS)/promtool ## install promtool into bin/tools (the alert rules' test skips without it)

# promtool checks and unit-tests deploy/observability/alerts.yaml (go test
# ./deploy/observability). It is taken out of Debian's prometheus package
# (`apt-get download` and `dpkg-deb -x`: nothing is installed, no server is
# started), because building it from its Go module takes many minutes; the
# package lists are refreshed with apt-get update only with
# WOLOLO_TEST_MACHINE=1. Without it the rules' test skips and says so.
$(TOOLS)/promtool:
	@mkdir -p $(TOOLS); tmp=$$(mktemp -d); \
	  if ! (cd $$tmp && apt-get download prometheus >/dev/null 2>&1) && [ -n "$(MACHINE_ASKED)" ]; then \
	    SUDO=; if [ "$$(id -u)" != 0 ]; then SUDO="sudo -n"; fi; \
	    $$SUDO apt-get update -qq >/dev/null 2>&1; (cd $$tmp && apt-get download prometheus >/dev/null 2>&1); fi; \
	  if ls $$tmp/prometheus_*.deb >/dev/null 2>&1 && dpkg-deb -x $$tmp/prometheus_*.deb $$tmp/x && cp $$tmp/x/usr/bin/promtool $@; then \
	    echo "promtool: $@, from Debian's prometheus package ($$($@ --version 2>&1 | head -1))"; \
	  else echo "promtool: SKIPPED: Debian's prometheus package could not be downloaded; the alert rules' test will skip"; fi; \
	  rm -rf $$tmp
$(TOOLS)/grpcurl:
	GOBIN=$(TOOLS) $(GO) install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION)

proto: tools ## regenerate the Go code of proto/
	PATH=$(TOOLS):$$PATH buf generate

proto-check: tools ## fail if proto/ regenerates differently from what is committed
	@tmp=$$(mktemp -d); PATH=$(TOOLS):$$PATH buf generate -o $$tmp; \
	  if ! diff -r -q -x '*.proto' $$tmp/proto proto >/dev/null; then \
	    diff -r -x '*.proto' $$tmp/proto proto | head -20; rm -rf $$tmp; \
	    echo "generated code is stale: run 'make proto'"; exit 1; fi; rm -rf $$tmp

grpcurl: $(TOOLS)/grpcurl ## install grpcurl into bin/tools (the docs run it as bin/tools/grpcurl)
	@echo "grpcurl: bin/tools/grpcurl (the docs' commands run it so from here; export PATH=\"$(TOOLS):\$$PATH\" to call it grpcurl)"

# ---- Docker deployment: the checked-in deploy/compose.yaml (regenerate it
# with `bin/wololo compose --out deploy/compose.yaml`; a test keeps it in
# sync). COMPOSE is `docker compose` where the plugin exists, else
# docker-compose.
COMPOSE ?= $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)
PROJECT ?= wololo
COMPOSE_FILE ?= deploy/compose.yaml
IMAGE ?= wololo:latest
DC = $(COMPOSE) -p $(PROJECT) -f $(COMPOSE_FILE)
GATEWAY ?= 127.0.0.1:7100
# The compose deployment's certificates (make certs); the compose file names them.
TLS_DIR := deploy/tls
DOCKER_OUT = $(if $(filter file,$(origin OUT)),out/submit,$(OUT))

images: build ## build the one image (FROM scratch: the static binary) every role runs
	@mkdir -p bin/image/data && cp $(BIN) bin/image/wololo
	docker build -q -f deploy/Dockerfile -t $(IMAGE) bin/image

# The deployment's CA and every process's certificate, made once into
# deploy/tls (0700, never committed; the CA's key in deploy/tls/ca, which
# no container mounts) and handed to the containers as compose secrets,
# with the revocation list crl.pem. The containers run as the unprivileged
# CONTAINER_USER (tools/compose User), and a bind-mounted secret keeps its
# host owner and mode: the keys the compose file names become that user's,
# 0600, where make runs as root (who alone may chown); elsewhere they are
# made readable, 0644, and make says so (the directory itself stays 0700,
# so no other host user reaches them; a process takes a key open to others
# only in a container's /run/secrets). `wololo certs` makes every key 0600
# again, so this follows each run. The CA's key and the client and
# operator keys are left alone.
CONTAINER_USER := 10001:10001
certs: build ## make the compose deployment's CA and certificates in deploy/tls (kept when valid)
	$(BIN) certs --dir $(TLS_DIR)
	@keys=$$(grep -o '"\./$(notdir $(TLS_DIR))/[^"]*\.key"' $(COMPOSE_FILE) | tr -d '"' | sed 's|^\./$(notdir $(TLS_DIR))/|$(TLS_DIR)/|'); \
	  if [ -z "$$keys" ]; then echo "certs: $(COMPOSE_FILE) names no key"; exit 1; fi; \
	  if [ "$$(id -u)" = 0 ]; then chown $(CONTAINER_USER) $$keys && chmod 0600 $$keys; \
	  else chmod 0644 $$keys && echo "certs: not root, so the containers' keys cannot be made user $(CONTAINER_USER)'s: made readable (0644) in the 0700 $(TLS_DIR)"; fi

# A failed `up` (a port in use, a process that never answers) runs `down`,
# so that it leaves no containers, network or volumes behind.
up: images certs ## deploy deploy/compose.yaml (3 masters + the graph) and wait until the gateway and masters answer; on failure, make down
	@if ! ( set -x; $(DC) up -d && \
	  $(BIN) health --timeout 60s --addr $(GATEWAY) --tls-dir $(TLS_DIR) --as client --server-name localhost && \
	  for m in 1 2 3; do $(BIN) health --timeout 60s --addr 127.0.0.1:$$((7103 + $$m)) --tls-dir $(TLS_DIR) --as operator --server-name master-$$m || exit 1; done ); then \
	  echo "make up failed (see above; a port in use?): removing what it started (make down)" >&2; \
	  $(DOWN); exit 1; fi

# The masters restart whatever stops, each other included: they are killed
# together before compose stops the rest one by one, and `down` is retried
# once for a master a surviving one restarted meanwhile.
down: ## remove the deployment's containers, network and volumes
	$(DOWN)

# DOWN is down's shell command, which a failed up runs too (not as a
# $(MAKE) down: `make -n up` would then run up's recipe for real).
DOWN = { $(DC) kill $$($(DC) config --services | grep '^master-') >/dev/null 2>&1 || true; }; \
	$(DC) down -v --remove-orphans || { $(DC) kill $$($(DC) config --services | grep '^master-') >/dev/null 2>&1; $(DC) down -v --remove-orphans; }

logs: ## follow the deployment's logs
	$(DC) logs -f --tail=100

submit: build ## run a job on the deployment: make submit MATCHES=F PLAYERS=F OUT=DIR [QUERY=NAME=F.sql] (the four default queries, or that one)
	@if [ -z "$(MATCHES)" ] || [ -z "$(PLAYERS)" ]; then echo "usage: make submit MATCHES=F PLAYERS=F [OUT=DIR] [QUERY=NAME=F.sql]"; exit 2; fi
	$(BIN) client submit --tls-dir $(TLS_DIR) --server $(GATEWAY) --matches $(MATCHES) --players $(PLAYERS) --out $(DOCKER_OUT)$(if $(QUERY), --query $(QUERY))

chaos: build ## kill containers of every kind (and pause one) during a job on the deployment: make chaos [MATCHES=F PLAYERS=F] [OUT=DIR] [KILLS=N] [SQL=1] [STANDING=1 [EPOCHS=4]]
ifeq ($(MATCHES),)
	$(BIN) chaos docker --project $(PROJECT) --dataset data/chaos --out $(if $(filter file,$(origin OUT)),out/chaos-docker,$(OUT)) --kills $(KILLS) --seed $(SEED) $(CHAOS_SQL) $(CHAOS_STANDING)
else
	$(BIN) chaos docker --project $(PROJECT) --matches $(MATCHES) --players $(PLAYERS) --out $(if $(filter file,$(origin OUT)),out/chaos-docker,$(OUT)) --kills $(KILLS) --seed $(SEED) $(CHAOS_SQL) $(CHAOS_STANDING)
endif

PARTITION ?= 6s
chaos-election-docker: build ## chaos-election against the deployed masters, ending with the leader cut off the network: [KILLS=10] [PARTITION=6s] [MATCHES=F PLAYERS=F] [STANDING=1 [EPOCHS=4]]
ifeq ($(MATCHES),)
	$(BIN) chaos election --docker --project $(PROJECT) --partition $(PARTITION) --dataset data/chaos --out $(ELECTION_OUT) --kills $(ELECTION_KILLS) --seed $(SEED) $(CHAOS_STANDING)
else
	$(BIN) chaos election --docker --project $(PROJECT) --partition $(PARTITION) --matches $(MATCHES) --players $(PLAYERS) --out $(ELECTION_OUT) --kills $(ELECTION_KILLS) --seed $(SEED) $(CHAOS_STANDING)
endif

# recap_on_failure runs a verbose end-to-end test ($(2)) with its output
# kept in out/$(1).log and, when it fails, prints its own lines again at
# the end (the Errorf and Logf of the test and its helpers, the harness's
# progress lines left out), so that a failure deep in a long log is the
# last thing a CI log shows.
recap_on_failure = mkdir -p out && { set -o pipefail; $(2) 2>&1 | tee out/$(1).log; } || { \
	  echo "---- $(1) FAILED; the test's own lines again (out/$(1).log has all):"; \
	  grep -E '^\s+[A-Za-z0-9_]+\.go:[0-9]+: ' out/$(1).log | grep -v 'testkit.go:' | tail -60; exit 1; }

e2e-docker: ## the docker end-to-end test through make up, make submit and make down (a job, kills, the docs' grpcurl lines); skipped without an engine
	@if ! docker info >/dev/null 2>&1; then echo "e2e-docker: SKIPPED: no Docker engine answers (docker info failed)"; exit 0; fi; \
	  $(MAKE) --no-print-directory $(TOOLS)/grpcurl && \
	  $(call recap_on_failure,e2e-docker,WOLOLO_E2E_DOCKER=1 $(GO) test -count=1 -timeout 15m -run '^TestDockerE2E$$' -v ./tools/chaos)

# ---- Docker Swarm: the checked-in deploy/stack.yaml (regenerate it with
# `bin/wololo compose --swarm --out deploy/stack.yaml`; a test keeps it in
# sync), deployed as stack STACK on this engine's swarm. swarm-up makes a
# one-node swarm (on loopback) when the engine is in none, and leaves the
# marker SWARM_MARKER so that swarm-down leaves only a swarm it made. Its
# own image tag, stack name and ports (SWARM_PORT: the gateway's public
# port; the masters' are 7304..7306), so that it never meets `make up` or
# `wololo local`.
STACK ?= wololo-swarm
STACK_FILE ?= deploy/stack.yaml
SWARM_IMAGE ?= wololo:swarm
SWARM_PORT ?= 7300
SWARM_GATEWAY = 127.0.0.1:$(SWARM_PORT)
SWARM_MARKER := deploy/.swarm-made-by-make
SWARM_OUT = $(if $(filter file,$(origin OUT)),out/swarm-submit,$(OUT))

swarm-up: certs ## deploy deploy/stack.yaml on a swarm (one made on loopback if none) and wait until the gateway and masters answer
	@$(MAKE) --no-print-directory images IMAGE=$(SWARM_IMAGE)
	@state=$$(docker info --format '{{.Swarm.LocalNodeState}}'); \
	  if [ "$$state" = inactive ]; then \
	    had=$$(docker network inspect docker_gwbridge >/dev/null 2>&1 && echo had-gwbridge); \
	    docker swarm init --advertise-addr 127.0.0.1 --listen-addr 127.0.0.1:2377 >/dev/null && echo "$$had" > $(SWARM_MARKER) && \
	    echo "swarm-up: made a one-node swarm on 127.0.0.1 (make swarm-down leaves it)"; \
	  elif [ "$$state" != active ]; then echo "swarm-up: this engine's swarm is $$state"; exit 1; fi
	@node=$$(docker info --format '{{.Swarm.NodeID}}'); \
	  have=$$(docker node inspect --format '{{range $$k, $$v := .Spec.Labels}}{{$$k}}={{$$v}} {{end}}' $$(docker node ls -q)); \
	  for l in $$(grep -o 'node\.labels\.$(STACK)\.[a-z0-9-]*' $(STACK_FILE) | sort -u | sed 's/^node\.labels\.//'); do \
	    case " $$have " in *" $$l=true "*) ;; *) docker node update --label-add $$l=true $$node >/dev/null || exit 1; echo "swarm-up: node label $$l=true on this node";; esac; done
	cd $(dir $(STACK_FILE)) && WOLOLO_IMAGE=$(SWARM_IMAGE) docker stack deploy --resolve-image never -c $(notdir $(STACK_FILE)) $(STACK)
	$(BIN) health --timeout 90s --addr $(SWARM_GATEWAY) --tls-dir $(TLS_DIR) --as client --server-name localhost
	@for m in 1 2 3; do $(BIN) health --timeout 90s --addr 127.0.0.1:$$(($(SWARM_PORT) + 3 + $$m)) --tls-dir $(TLS_DIR) --as operator --server-name master-$$m || exit 1; done

# The masters restart what stops, each other included, but a removed
# service is gone for them too: docker stack rm takes them all at once.
# Then the volumes once their containers are gone, the stack's node labels
# on this node, and the swarm if swarm-up made it.
swarm-down: ## remove the stack, its volumes, networks and secrets (and leave the swarm if swarm-up made it)
	-@docker stack rm $(STACK)
	@for i in $$(seq 1 60); do [ -z "$$(docker ps -aq --filter label=com.docker.stack.namespace=$(STACK))" ] && break; sleep 1; done
	@for i in $$(seq 1 30); do \
	  v=$$(docker volume ls -q --filter label=com.docker.stack.namespace=$(STACK)); n=$$(docker network ls -q --filter label=com.docker.stack.namespace=$(STACK)); \
	  [ -z "$$v$$n" ] && break; [ -n "$$v" ] && docker volume rm $$v >/dev/null 2>&1; [ -n "$$n" ] && docker network rm $$n >/dev/null 2>&1; sleep 1; done
	@if [ "$$(docker info --format '{{.Swarm.LocalNodeState}}')" = active ] && [ "$$(docker info --format '{{.Swarm.ControlAvailable}}')" = true ]; then \
	  node=$$(docker info --format '{{.Swarm.NodeID}}'); \
	  for l in $$(docker node inspect --format '{{range $$k, $$v := .Spec.Labels}}{{$$k}} {{end}}' $$node); do \
	    case $$l in $(STACK).*) docker node update --label-rm $$l $$node >/dev/null;; esac; done; fi
	@if [ -f $(SWARM_MARKER) ]; then had=$$(cat $(SWARM_MARKER)); docker swarm leave --force >/dev/null && rm -f $(SWARM_MARKER) && \
	  if [ -n "$$had" ]; then echo "swarm-down: left the swarm swarm-up made (docker_gwbridge was there before it: kept)"; else \
	  for i in $$(seq 1 40); do docker network inspect docker_gwbridge >/dev/null 2>&1 || break; docker network rm docker_gwbridge >/dev/null 2>&1 || sleep 0.25; done; \
	  if docker network inspect docker_gwbridge >/dev/null 2>&1; then echo "swarm-down: left the swarm swarm-up made; its docker_gwbridge network is still in use"; \
	  else echo "swarm-down: left the swarm swarm-up made (and removed its docker_gwbridge network)"; fi; fi; fi
	@left=$$(docker ps -aq --filter label=com.docker.stack.namespace=$(STACK); docker volume ls -q --filter label=com.docker.stack.namespace=$(STACK); docker network ls -q --filter label=com.docker.stack.namespace=$(STACK); docker secret ls -q --filter label=com.docker.stack.namespace=$(STACK) 2>/dev/null); \
	  if [ -n "$$left" ]; then echo "swarm-down: left behind: $$left"; exit 1; fi

swarm-submit: build ## run a job on the swarm stack: make swarm-submit MATCHES=F PLAYERS=F OUT=DIR
	@if [ -z "$(MATCHES)" ] || [ -z "$(PLAYERS)" ]; then echo "usage: make swarm-submit MATCHES=F PLAYERS=F [OUT=DIR]"; exit 2; fi
	$(BIN) client submit --tls-dir $(TLS_DIR) --server $(SWARM_GATEWAY) --matches $(MATCHES) --players $(PLAYERS) --out $(SWARM_OUT)

swarm-chaos: build ## kill tasks of every kind (the leading master among them), pause one, during a job on the stack: make swarm-chaos [KILLS=N] [MATCHES=F PLAYERS=F] [OUT=DIR] [SQL=1] [STANDING=1 [EPOCHS=4]]
ifeq ($(MATCHES),)
	$(BIN) chaos swarm --project $(STACK) --port-base $(SWARM_PORT) --tls-dir $(TLS_DIR) --dataset data/chaos --out $(if $(filter file,$(origin OUT)),out/chaos-swarm,$(OUT)) --kills $(KILLS) --seed $(SEED) $(CHAOS_SQL) $(CHAOS_STANDING)
else
	$(BIN) chaos swarm --project $(STACK) --port-base $(SWARM_PORT) --tls-dir $(TLS_DIR) --matches $(MATCHES) --players $(PLAYERS) --out $(if $(filter file,$(origin OUT)),out/chaos-swarm,$(OUT)) --kills $(KILLS) --seed $(SEED) $(CHAOS_SQL) $(CHAOS_STANDING)
endif

swarm-chaos-election: build ## chaos-election against the stack's masters (failover times on swarm): [KILLS=10] [MATCHES=F PLAYERS=F] [STANDING=1 [EPOCHS=4]]
ifeq ($(MATCHES),)
	$(BIN) chaos election --swarm --project $(STACK) --port-base $(SWARM_PORT) --tls-dir $(TLS_DIR) --dataset data/chaos --out $(if $(filter file,$(origin OUT)),out/chaos-election-swarm,$(OUT)) --kills $(ELECTION_KILLS) --seed $(SEED) $(CHAOS_STANDING)
else
	$(BIN) chaos election --swarm --project $(STACK) --port-base $(SWARM_PORT) --tls-dir $(TLS_DIR) --matches $(MATCHES) --players $(PLAYERS) --out $(if $(filter file,$(origin OUT)),out/chaos-election-swarm,$(OUT)) --kills $(ELECTION_KILLS) --seed $(SEED) $(CHAOS_STANDING)
endif

e2e-swarm: ## the swarm end-to-end test (swarm-up, a job under kills, a leader kill, swarm-down, nothing left); skipped without an engine
	@if ! docker info >/dev/null 2>&1; then echo "e2e-swarm: SKIPPED: no Docker engine answers (docker info failed)"; exit 0; fi; \
	  state=$$(docker info --format '{{.Swarm.LocalNodeState}}'); \
	  if [ "$$state" != inactive ] && [ ! -f $(SWARM_MARKER) ]; then echo "e2e-swarm: SKIPPED: this engine is already in a swarm ($$state) that make did not make; the test would not leave it as it found it"; exit 0; fi; \
	  $(MAKE) --no-print-directory build && \
	  $(call recap_on_failure,e2e-swarm,WOLOLO_E2E_SWARM=1 $(GO) test -count=1 -timeout 10m -run '^TestSwarmE2E$$' -v ./tools/chaos)

ci: test-ci ## what .ci/run runs

bench: build data/full/match_players.csv ## micro-benchmarks, then reference, plain and exact DuckDB, demo (the four default queries as SQL; the ten examples) and local (the SQL plan) (3 interleaved rounds), the cost of more data (1x, 2x, 4x: data/x2, data/x4 generated once), and the compose deployment where Docker answers (make up, 3 jobs, make down), on the full dataset → BENCHMARKS.md
	@mkdir -p out
	set -o pipefail; $(MAKE) --no-print-directory bench-micro | tee out/bench-micro.txt
	@if docker info >/dev/null 2>&1; then compose="--compose $(GATEWAY) --compose-tls $(TLS_DIR) --compose-up '$(MAKE) --no-print-directory up' --compose-down '$(MAKE) --no-print-directory down'"; \
	  else echo "bench: no Docker engine answers: the compose deployment is not measured"; compose=; fi; \
	  set -x; eval "$(BIN) bench --matches data/full/matches.csv --players data/full/match_players.csv --out BENCHMARKS.md --micro out/bench-micro.txt --go $(GO) --runs 3 --sizes 1,2,4 $$compose"

bench-sql: build data/full/match_players.csv ## the SQL plans: demo (the four default queries; the ten examples) and durable local (the four), 3 interleaved rounds, full dataset → out/bench-sql.md
	@mkdir -p out
	$(BIN) bench --matches data/full/matches.csv --players data/full/match_players.csv --out out/bench-sql.md --go $(GO) --runs 3 --modes demo,demo-examples,local --kills=false --scaling "" --profile=false

bench-analyst: build data/full/match_players.csv ## the analyst queries (queries/analyst) by DuckDB on the same texts (and within 512 MiB), demo and durable local mode (3 interleaved rounds), full dataset → out/bench-analyst.md
	@mkdir -p out
	$(BIN) bench --matches data/full/matches.csv --players data/full/match_players.csv --out out/bench-analyst.md --go $(GO) --runs 3 --modes duckdb-analyst,duckdb-analyst-bounded,demo-analyst,local-analyst --kills=false --scaling "" --profile=false

bench-sizes: build data/full/match_players.csv ## the cost of more data alone: plain DuckDB, demo and durable local mode at 1x, 2x and 4x the full dataset (data/x2, data/x4 generated once, 5.2 GB), 3 interleaved rounds → out/bench-sizes.md
	@mkdir -p out
	$(BIN) bench --matches data/full/matches.csv --players data/full/match_players.csv --out out/bench-sizes.md --go $(GO) --runs 3 --modes demo --sizes 1,2,4 --kills=false --scaling "" --profile=false

# The DuckDB baselines of `make bench`: tools/duckdb is a Go module of its
# own because go-duckdb needs CGO (and a C compiler), which the static
# bin/wololo must not. `wololo bench` builds it itself; these build and
# test it alone.
duckdb: ## build bin/duckdb-queries, the DuckDB baselines of make bench, exact and --plain (CGO; needs a C compiler)
	cd tools/duckdb && CGO_ENABLED=1 $(GO) build -o ../../bin/duckdb-queries .

duckdb-test: ## vet and test the DuckDB baselines: exact's answers byte-equal to the reference's, plain's differences pinned
	cd tools/duckdb && CGO_ENABLED=1 $(GO) vet ./... && CGO_ENABLED=1 $(GO) test -count=1 ./...

# The SQL engine against DuckDB (tools/duckdb/sqldiff_test.go): random
# queries of the subset (services/dataflow/sql/sqlgen) run by both over the
# same files, the rows compared. make test runs a seeded few hundred;
# sql-diff as many as asked, from any seed.
SQLDIFF_QUERIES ?= 20000
SQLDIFF_SEED ?= 0
sql-diff-test: ## the SQL engine against DuckDB: 500 seeded random queries and the kept cases (CGO; part of make test)
	cd tools/duckdb && CGO_ENABLED=1 $(GO) test -count=1 -run '^TestSQL' .

sql-diff: ## the SQL engine against DuckDB on many random queries: make sql-diff [SQLDIFF_QUERIES=20000] [SQLDIFF_SEED=0]
	cd tools/duckdb && SQLDIFF_QUERIES=$(SQLDIFF_QUERIES) SQLDIFF_SEED=$(SQLDIFF_SEED) CGO_ENABLED=1 $(GO) test -count=1 -timeout 0 -v -run '^TestSQL' .

bench-micro: ## Go benchmarks of the hot paths (parsers, batches, generator, segment and Pebble stores)
	WOLOLO_BENCH_JOB_MIB=290 $(GO) test -run '^$$' -bench . -benchmem ./services/dataflow/csvio/ ./services/dataflow/schema/ ./services/dataflow/batch/ ./services/base/datagen/ ./transport/segstore/ ./transport/durable/

# The full dataset (`wololo datagen` defaults), generated once. datagen
# renames match_players.csv into place last.
data/full/match_players.csv: | build
	$(BIN) datagen --out data/full

fuzz: ## run every fuzz target for FUZZTIME each
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; done

reference: build ## answer the queries with the reference evaluator: make reference MATCHES=F PLAYERS=F OUT=D
	$(BIN) reference --matches $(MATCHES) --players $(PLAYERS) --out $(OUT)

datagen: build ## generate a dataset: make datagen N=1000000 DIR=data/1m
	$(BIN) datagen --matches $(or $(N),3100000) --out $(or $(DIR),data/full)

clean: ## remove build outputs and generated data
	rm -rf bin out data
