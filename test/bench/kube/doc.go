// Command kube benchmarks braid's Kubernetes backend on a real node (the
// one `make kube-up` starts). Workloads:
//
//	K1: a chain of -k1-steps (100) steps, each `true` in busybox:1.36, run
//	    by a real `braid controller --backend kube` process the bench
//	    starts and stops by PID. A pod informer in the bench records, with
//	    the bench's clock, when each pod is first seen (ADD, about its
//	    creation) and when its status first shows the main container
//	    terminated (about the kubelet's report). Reported: the per-step
//	    overhead (next pod's ADD - this pod's terminated-seen), median and
//	    p90; the same from the apiserver's second-resolution timestamps
//	    (next creationTimestamp - finishedAt); pod start-up (creation ->
//	    main startedAt); the controller's CPU time (utime+stime from
//	    /proc/<pid>/stat) and peak RSS (VmHWM).
//	K2: DAGs of steps that do nothing (-k2-nodes, default 200 and 2,000)
//	    driven in-process by controller.Manager on the kube store and the
//	    kube runtime against the real apiserver. The pods carry
//	    spec.nodeName braid-bench-none (a podSpecPatch), a node that does not
//	    exist, so neither the scheduler nor a kubelet touches them; a child
//	    process of the bench (so that its CPU is not the controller's) marks
//	    each new pod done at once with UpdateStatus: main terminated, exit
//	    0, the emissary's termination message, phase Succeeded. Reported:
//	    wall time, wall and controller CPU per node, and API writes per step
//	    (the store's Writes(), and every write request of the store's and the
//	    runtime's clients, counted in their HTTP transports).
//
// Each workload runs in a namespace of its own, deleted afterwards (pods,
// workflows, then the namespace). With -optional the bench prints why and
// exits 0 when no cluster answers (make bench on a machine with no node).
// Usage: go run ./test/bench/kube -braid bin/braid
package main
