// Package chaos is Wololo's crash harness, `wololo chaos local`: it starts
// the topology as OS processes (services/local) on a fresh data directory,
// submits one job with the client library, and meanwhile SIGKILLs randomly
// chosen processes at random moments — every kind of process, some while
// the files upload, some after the upload finished while the graph
// finishes and the results flush — and lets the local runner restart them.
// Then it answers the same files with the reference evaluator and passes
// only if all four outputs are byte-equal.
//
// The schedule is seeded: the same seed kills the same instances in the
// same order (the moments depend on timing). To make N kills fit in a job
// on a small dataset, the client reaches the gateway through a shaping
// proxy that cuts the upload into small frames and paces it (see shaper);
// the proxy forwards every other call unchanged.
//
// What it may not touch: it signals only processes of the cluster it
// started (through local.Cluster), writes only its own temporary data
// directory and the output directory it is given, and uses the system only
// through its public surfaces (the binary's flags, the client library, the
// JobService). It adds no recovery logic of its own: a run passes because
// the system recovered, or it fails and says where the logs are.
package chaos
