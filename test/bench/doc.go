// Command bench runs the same graphs of `true` commands under braid and under
// GNU make, side by side, and prints the wall times, their ratio and braid's
// peak RSS. Workloads:
//
//	W1: a 1,000-step sequential chain
//	W2: one source, 2,000 parallel tasks, one sink
//	W5: a 2,000-node diamond lattice, 100 layers of 20
//	W6: 2,000 single-step workflows submitted through a braid server's API
//	    by 8 clients at once, over gRPC (Argo's wire format) and over REST
//	    (JSON through the client's HTTP/1 transport), one line each
//	    (-w6-transports); workflows per minute from the first submit to
//	    the last completion, and the server's peak RSS. The server runs
//	    with its defaults, TLS and client auth, and the clients pin its
//	    certificate and send its local token, as the braid CLI does (the
//	    other server workloads too); -plain-server runs it without either
//	W7: one workflow of 10,000 and 50,000 parallel steps through a server
//	    (-w7-steps), with limits.maxNodes raised past them
//	L1: 10,000 stored workflows (-l1-count); GET the whole list over REST
//	    (names only, argo list's fields, everything): time to first byte,
//	    total, body size and the server's peak RSS growth
//	L2: a step that prints one 1 GiB line (-l2-size); GET its log with
//	    tailLines and limitBytes: time, bytes and the server's RSS growth
//	G1: GetWorkflow of one finished workflow of 10,000 nodes (-g1-nodes;
//	    a fan-out of `true` steps, as W7) through pkg/apiclient/client over
//	    gRPC and over REST, 20 times each (-g1-runs), taking turns: the
//	    median time to the typed workflow, the answer's size and the
//	    server's CPU per GET, and the ratio REST / gRPC; -g1-rest-only
//	    measures REST alone, for a build from before braid spoke Argo's
//	    gRPC wire format (before and after: run both binaries)
//	A1: a 1 GiB output artifact (-a1-size) saved to a real MinIO (bin/tools/minio,
//	    built by hack/minio.sh build) and loaded by the next step, once with
//	    archive none and once tar+gzip; wall time and braid's peak RSS
//
// Each measurement is repeated -runs times and the median is reported, since
// these machines are noisy. Usage: go run ./test/bench -braid bin/braid
package main
