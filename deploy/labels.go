package deploy

// The Docker labels of a deployment's containers: the compose generator
// puts them on every container, the masters' Docker runtime and the chaos
// harness find the containers of a project by them.
const (
	LabelProject  = "wololo.project"  // the deployment's name
	LabelInstance = "wololo.instance" // e.g. "q3-joiner-1"
	LabelAddress  = "wololo.address"  // where it serves gRPC, e.g. "q3-joiner-1:7108"
)
