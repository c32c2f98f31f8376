package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/printer"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func newListCommand(s streams) *cobra.Command {
	var f directFlags
	var all, noHeaders bool
	var output, selector string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List workflows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, _, err := openDirect(cmd.Context(), f)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer st.Close()
			ns := f.namespace
			if all {
				ns = ""
			}
			objs, _, err := st.List(cmd.Context(), store.KindWorkflow, ns, store.ListOptions{LabelSelector: selector})
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			wfs := make([]*v1alpha1.Workflow, 0, len(objs))
			for _, o := range objs {
				wfs = append(wfs, o.(*v1alpha1.Workflow))
			}
			if output == "yaml" {
				return writeYAML(s, wfs)
			}
			return printer.WriteList(s.out, wfs, printer.ListOptions{AllNamespaces: all, NoHeaders: noHeaders, Output: output})
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "show workflows from all namespaces")
	cmd.Flags().BoolVar(&noHeaders, "no-headers", false, "don't print headers")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: name, wide, json or yaml")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector to filter by, e.g. -l key1=value1,key2=value2")
	return cmd
}

func newGetCommand(s streams) *cobra.Command {
	var f directFlags
	var output string
	var noColor, noUTF8 bool
	cmd := &cobra.Command{
		Use:   "get WORKFLOW...",
		Short: "Display details about workflows",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, err := openDirect(cmd.Context(), f)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer st.Close()
			for _, name := range args {
				wf, err := getWorkflow(cmd, st, f.namespace, name)
				if err != nil {
					return err
				}
				switch output {
				case "json":
					data, err := json.MarshalIndent(wf, "", "    ")
					if err != nil {
						return err
					}
					fmt.Fprintln(s.out, string(data))
				case "yaml":
					if err := writeYAML(s, wf); err != nil {
						return err
					}
				case "name":
					fmt.Fprintln(s.out, wf.Name)
				default:
					if err := printer.WriteGet(s.out, wf, printer.Options{Output: output, NoColor: noColor || !isTerminal(s.out), NoUTF8: noUTF8}); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: name, json, yaml, short or wide")
	cmd.Flags().BoolVar(&noColor, "no-color", false, "disable colorized output")
	cmd.Flags().BoolVar(&noUTF8, "no-utf8", false, "use plain 7-bit characters only")
	return cmd
}

func getWorkflow(cmd *cobra.Command, st *sqlite.Store, ns, name string) (*v1alpha1.Workflow, error) {
	obj, err := st.Get(cmd.Context(), store.KindWorkflow, ns, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &exitError{code: 1, err: fmt.Errorf("workflows.argoproj.io %q not found", name)}
	}
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	return obj.(*v1alpha1.Workflow), nil
}

func newDeleteCommand(s streams) *cobra.Command {
	var f directFlags
	cmd := &cobra.Command{
		Use:   "delete WORKFLOW...",
		Short: "Delete workflows",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, _, err := openDirect(cmd.Context(), f)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer st.Close()
			for _, name := range args {
				err := st.Delete(cmd.Context(), store.KindWorkflow, f.namespace, name)
				switch {
				case errors.Is(err, store.ErrNotFound):
					fmt.Fprintf(s.out, "Workflow '%s' not found\n", name)
				case err != nil:
					return &exitError{code: 1, err: err}
				default:
					fmt.Fprintf(s.out, "Workflow '%s' deleted\n", name)
				}
			}
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

func newLogsCommand(s streams) *cobra.Command {
	var f directFlags
	var noColor, follow bool
	cmd := &cobra.Command{
		Use:   "logs WORKFLOW [POD]",
		Short: "View the logs of a workflow's steps, kept after they end",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, cfg, err := openDirect(cmd.Context(), f)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer st.Close()
			wf, err := getWorkflow(cmd, st, f.namespace, args[0])
			if err != nil {
				return err
			}
			pod := ""
			if len(args) == 2 {
				pod = args[1]
			}
			color := !noColor && isTerminal(s.out)
			if follow {
				return followLogs(cmd, s, st, cfg.DataDir, wf, pod, color)
			}
			return writeLogs(s, cfg.DataDir, wf, pod, color)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&noColor, "no-color", false, "disable colorized output")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new lines until the workflow ends")
	return cmd
}

// followLogs prints each pod's log as it grows, and the logs of pods that
// start later, until the workflow is complete and every log is read.
func followLogs(cmd *cobra.Command, s streams, st *sqlite.Store, dataDir string, wf *v1alpha1.Workflow, only string, color bool) error {
	offsets := map[string]int64{}
	for {
		done := wf.Status.Phase.Completed()
		for _, n := range podsInOrder(wf) {
			pod := printer.PodName(wf, &n)
			if only != "" && pod != only && n.ID != only {
				continue
			}
			off, err := tailPodLog(s, local.LogPath(dataDir, wf.Namespace, wf.Name, pod), pod, offsets[pod], done || n.Phase.Completed(), color)
			if err != nil {
				return err
			}
			offsets[pod] = off
		}
		if done {
			return nil
		}
		select {
		case <-cmd.Context().Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
		next, err := getWorkflow(cmd, st, wf.Namespace, wf.Name)
		if err != nil {
			return err
		}
		wf = next
	}
}

// tailPodLog prints the lines of path after offset and returns the offset
// after the last line printed. An unfinished last line is printed only when
// final; otherwise it waits for the next round.
func tailPodLog(s streams, path, pod string, offset int64, final, color bool) (int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return offset, nil
	}
	if err != nil {
		return offset, &exitError{code: 1, err: err}
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset, &exitError{code: 1, err: err}
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err != nil && (!final || line == "") {
			return offset, nil
		}
		offset += int64(len(line))
		fmt.Fprintln(s.out, printer.LogLine(pod, strings.TrimRight(line, "\r\n"), color))
	}
}

// writeLogs prints the kept logs of the workflow's pods, in the order they
// started, each line prefixed by its pod name.
func writeLogs(s streams, dataDir string, wf *v1alpha1.Workflow, only string, color bool) error {
	nodes := podsInOrder(wf)
	for i := range nodes {
		pod := printer.PodName(wf, &nodes[i])
		if only != "" && pod != only && nodes[i].ID != only {
			continue
		}
		if _, err := tailPodLog(s, local.LogPath(dataDir, wf.Namespace, wf.Name, pod), pod, 0, true, color); err != nil {
			return err
		}
	}
	return nil
}

// podsInOrder lists the workflow's pod nodes in the order they started.
func podsInOrder(wf *v1alpha1.Workflow) []v1alpha1.NodeStatus {
	var nodes []v1alpha1.NodeStatus
	for _, n := range wf.Status.Nodes {
		if n.Type == v1alpha1.NodeTypePod {
			nodes = append(nodes, n)
		}
	}
	sort.Slice(nodes, func(i, j int) bool {
		a, b := nodes[i], nodes[j]
		switch {
		case !a.StartedAt.Equal(&b.StartedAt):
			return a.StartedAt.Before(&b.StartedAt)
		case !a.FinishedAt.Equal(&b.FinishedAt):
			return a.FinishedAt.Before(&b.FinishedAt)
		}
		return a.ID < b.ID
	})
	return nodes
}

func writeYAML(s streams, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.out.Write(data)
	return err
}
