package deploy

// The Docker labels of a deployment's containers: the compose generator
// puts them on every container, the masters' Docker runtime and the chaos
// harness find the containers of a project by them.
const (
	LabelProject  = "wololo.project"  // the deployment's name
	LabelInstance = "wololo.instance" // e.g. "shard-1"
	LabelAddress  = "wololo.address"  // where it serves gRPC, e.g. "shard-1:7103"
)

// DockerAPIVersion is the Engine API version the masters' Docker and Swarm
// runtimes pin (their --docker-api-version) and the only one the
// docker-proxy admits (its --api-version): engines 20.10 to 28 speak it.
// Pinned rather than negotiated, so that the proxy can admit exactly what
// the masters send (services/roles/dockerproxy says why an old version matters).
const DockerAPIVersion = "1.41"
