package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

type workload struct {
	name string
	desc string
	// deps[i] lists the tasks task i depends on; tasks are t0..tN-1.
	deps [][]int
}

func main() {
	braid := flag.String("braid", "bin/braid", "the braid binary")
	runs := flag.Int("runs", 3, "runs of each measurement (the median is reported)")
	jobs := flag.Int("j", 2, "make -j")
	only := flag.String("only", "", "comma separated workloads to run (default all)")
	isolation := flag.String("isolation", "", "W1, W2, W5: braid run --isolation (none, auto or required; default braid's)")
	w6 := throughput{}
	flag.IntVar(&w6.count, "w6-count", 2000, "W6: workflows to submit")
	flag.IntVar(&w6.clients, "w6-clients", 8, "W6: clients submitting at once")
	flag.StringVar(&w6.profile, "w6-cpuprofile", "", "W6: write the server's CPU profile to this file (of the last run)")
	flag.StringVar(&w6.transports, "w6-transports", "grpc,rest", "W6: the client transports to measure, one report line each: grpc, rest (JSON over the HTTP/1 client)")
	w7 := flag.String("w7-steps", "10000,50000", "W7: sizes of the one-workflow runs")
	a1 := bigArtifact{}
	flag.Int64Var(&a1.size, "a1-size", 1<<30, "A1: the artifact's size in bytes")
	l1 := listMem{clients: 8}
	flag.IntVar(&l1.count, "l1-count", 10000, "L1: workflows stored before the whole list is read")
	l2 := logTail{}
	flag.Int64Var(&l2.size, "l2-size", 1<<30, "L2: bytes of the one log line whose tail is read")
	g1 := bigGet{}
	flag.IntVar(&g1.nodes, "g1-nodes", 10000, "G1: nodes of the workflow that is read")
	flag.IntVar(&g1.runs, "g1-runs", 20, "G1: GETs over each transport (the median is reported)")
	flag.BoolVar(&g1.restOnly, "g1-rest-only", false, "G1: measure REST alone (a build from before braid spoke Argo's gRPC wire format)")
	plain := flag.Bool("plain-server", false, "W6, W7: run braid server without TLS or client auth (--secure=false --auth-mode server), "+
		"as before they were its defaults; by default the server runs with its defaults and the clients pin its certificate and send its local token")
	flag.Parse()
	w6.plain, l1.plain, g1.plain = *plain, *plain, *plain
	l2.plain, l2.runs = *plain, *runs
	if err := run(*braid, *runs, *jobs, *only, *isolation, w6, *w7, *plain, a1, l1, l2, g1); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(braid string, runs, jobs int, only, isolation string, w6 throughput, w7 string, plain bool, a1 bigArtifact, l1 listMem, l2 logTail, g1 bigGet) error {
	bin, err := filepath.Abs(braid)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "braid-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	header := false
	for _, w := range workloads() {
		if only != "" && !strings.Contains(","+only+",", ","+w.name+",") {
			continue
		}
		if !header {
			fmt.Fprintf(tw, "workload\tnodes\tmake -j%d\tbraid\tratio\tbraid peak RSS\n", jobs)
			header = true
		}
		m, b, rss, err := measure(dir, bin, w, runs, jobs, isolation)
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		fmt.Fprintf(tw, "%s (%s)\t%d\t%s\t%s\t%.2f\t%.1f MiB\n", w.name, w.desc, len(w.deps), m.Round(time.Millisecond), b.Round(time.Millisecond), float64(b)/float64(m), float64(rss)/1024)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if only == "" || strings.Contains(","+only+",", ",W6,") {
		if err := runW6(bin, dir, runs, w6); err != nil {
			return err
		}
	}
	if only == "" || strings.Contains(","+only+",", ",W7,") {
		if err := runW7(bin, dir, w7, plain); err != nil {
			return err
		}
	}
	if only == "" || strings.Contains(","+only+",", ",L1,") {
		if err := runL1(bin, dir, l1); err != nil {
			return err
		}
	}
	if only == "" || strings.Contains(","+only+",", ",L2,") {
		if err := runL2(bin, dir, l2); err != nil {
			return err
		}
	}
	if only == "" || strings.Contains(","+only+",", ",G1,") {
		if err := runG1(bin, dir, g1); err != nil {
			return err
		}
	}
	if only == "" || strings.Contains(","+only+",", ",A1,") {
		return runA1(bin, dir, runs, a1)
	}
	return nil
}

// runW7 runs one big workflow of each size once.
func runW7(bin, dir, sizes string, plain bool) error {
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("W7: size %q: %w", f, err)
		}
		r, err := big{steps: n, plain: plain}.run(bin, dir)
		if err != nil {
			return fmt.Errorf("W7 %d: %w", n, err)
		}
		fmt.Printf("W7 (one workflow of %d parallel steps through the server): %s, written per finished step: %.0f B to write(2), %.0f B to disk; server peak RSS %.1f MiB\n",
			n, r.took.Round(time.Millisecond), r.wcharPerStep, r.wbPerStep, float64(r.peakKiB)/1024)
	}
	return nil
}

// runW6 measures W6 runs times over each transport (the transports take
// turns, so that drift of the machine hits them alike) and prints, per
// transport, the median rate and the largest peak RSS.
func runW6(bin, dir string, runs int, w6 throughput) error {
	var modes []bool // http1 of each transport, in the order asked
	for _, t := range strings.Split(w6.transports, ",") {
		switch strings.TrimSpace(t) {
		case "grpc":
			modes = append(modes, false)
		case "rest":
			modes = append(modes, true)
		default:
			return fmt.Errorf("W6: transport %q: want grpc or rest", t)
		}
	}
	took := make([][]time.Duration, len(modes))
	peak := make([]int64, len(modes))
	for range runs {
		for i, http1 := range modes {
			r, err := w6.run(bin, dir, http1)
			if err != nil {
				return fmt.Errorf("W6 over %s: %w", transportName(http1), err)
			}
			took[i] = append(took[i], r.took)
			peak[i] = max(peak[i], r.peakKiB)
		}
	}
	fmt.Printf("\nW6 (%d single-step workflows through the API, %d clients, %s; median of %d):\n", w6.count, w6.clients, serverKind(w6.plain), runs)
	for i, http1 := range modes {
		d := median(took[i])
		fmt.Printf("  over %-4s  %s, %.0f workflows/min, server peak RSS %.1f MiB\n",
			transportName(http1), d.Round(time.Millisecond), float64(w6.count)/d.Minutes(), float64(peak[i])/1024)
	}
	return nil
}

func workloads() []workload {
	chain := make([][]int, 1000)
	for i := 1; i < len(chain); i++ {
		chain[i] = []int{i - 1}
	}
	wide := make([][]int, 2002)
	for i := 1; i <= 2000; i++ {
		wide[i] = []int{0}
	}
	for i := 1; i <= 2000; i++ {
		wide[2001] = append(wide[2001], i)
	}
	const layers, width = 100, 20
	lattice := make([][]int, layers*width)
	for l := 1; l < layers; l++ {
		for k := 0; k < width; k++ {
			i := l*width + k
			prev := (l - 1) * width
			lattice[i] = []int{prev + k, prev + (k+1)%width}
		}
	}
	return []workload{
		{"W1", "1,000-step chain", chain},
		{"W2", "1 -> 2,000 -> 1", wide},
		{"W5", "lattice 100x20", lattice},
	}
}

// measure runs make and braid alternately and returns the median wall times
// and braid's largest peak RSS in KiB.
func measure(dir, bin string, w workload, runs, jobs int, isolation string) (time.Duration, time.Duration, int64, error) {
	mk := filepath.Join(dir, w.name+".mk")
	wf := filepath.Join(dir, w.name+".yaml")
	if err := os.WriteFile(mk, makefile(w), 0o644); err != nil {
		return 0, 0, 0, err
	}
	if err := os.WriteFile(wf, workflow(w), 0o644); err != nil {
		return 0, 0, 0, err
	}
	var makeTimes, braidTimes []time.Duration
	var peak int64
	for i := range runs {
		t, _, err := timed(exec.Command("make", "-s", fmt.Sprintf("-j%d", jobs), "-f", mk, "all"))
		if err != nil {
			return 0, 0, 0, fmt.Errorf("make: %w", err)
		}
		makeTimes = append(makeTimes, t)
		home := filepath.Join(dir, fmt.Sprintf("home-%s-%d", w.name, i))
		args := []string{"run", "--data-dir", home, "-o", "json", wf}
		if isolation != "" {
			args = append(args, "--isolation="+isolation)
		}
		t, rss, err := timed(exec.Command(bin, args...))
		if err != nil {
			return 0, 0, 0, fmt.Errorf("braid run: %w", err)
		}
		braidTimes = append(braidTimes, t)
		peak = max(peak, rss)
		_ = os.RemoveAll(home)
	}
	return median(makeTimes), median(braidTimes), peak, nil
}

func timed(cmd *exec.Cmd) (time.Duration, int64, error) {
	var stderr bytes.Buffer
	cmd.Stdout = nil
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %s", err, tail(stderr.String()))
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return took, rss, nil
}

func tail(s string) string {
	if len(s) > 400 {
		return s[len(s)-400:]
	}
	return s
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func makefile(w workload) []byte {
	var b bytes.Buffer
	b.WriteString(".PHONY: all")
	for i := range w.deps {
		fmt.Fprintf(&b, " t%d", i)
	}
	b.WriteString("\nall:")
	for i := range w.deps {
		fmt.Fprintf(&b, " t%d", i)
	}
	b.WriteString("\n")
	for i, deps := range w.deps {
		fmt.Fprintf(&b, "t%d:", i)
		for _, d := range deps {
			fmt.Fprintf(&b, " t%d", d)
		}
		b.WriteString("\n\t@true\n")
	}
	return b.Bytes()
}

func workflow(w workload) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: bench-%s
spec:
  entrypoint: main
  templates:
  - name: "true"
    container:
      image: busybox
      command: ["true"]
  - name: main
    dag:
      tasks:
`, strings.ToLower(w.name))
	for i, deps := range w.deps {
		fmt.Fprintf(&b, "      - name: t%d\n        template: \"true\"\n", i)
		if len(deps) > 0 {
			names := make([]string, len(deps))
			for j, d := range deps {
				names[j] = fmt.Sprintf("t%d", d)
			}
			fmt.Fprintf(&b, "        depends: %q\n", strings.Join(names, " && "))
		}
	}
	return b.Bytes()
}
