package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/app"
	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

type runFlags struct {
	parameters    []string
	parameterFile string
	entrypoint    string
	output        string
	dataDir       string
	configFile    string
	namespace     string
	name          string
	generateName  string
	labels        string
	noColor       bool
	cpuProfile    string
	templates     []string
	isolation     string
}

func newRunCommand(s streams) *cobra.Command {
	f := runFlags{}
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run one workflow on this machine, with nothing else installed",
		Long: `Run one Argo Workflow in this process: steps run as host processes, state is kept
in an embedded SQLite store under $BRAID_HOME (default ~/.braid, or --data-dir),
with the step logs. Progress is shown as a tree; the final status and outputs
are printed at the end. With -o json or -o yaml, stdout carries only the final
Workflow object and progress goes to stderr.

Exit codes: 0 Succeeded, 1 Failed or Error, 2 invalid input.
Ctrl-C stops the workflow (exit handlers still run); a second Ctrl-C terminates it.`,
		Example: `  braid run examples/hello-world.yaml
  braid run wf.yaml -p message=hi --entrypoint main -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), s, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.parameters, "parameter", "p", nil, "input parameter name=value (repeatable)")
	fl.StringVarP(&f.parameterFile, "parameter-file", "f", "", "a YAML or JSON file of input parameters")
	fl.StringVar(&f.entrypoint, "entrypoint", "", "override spec.entrypoint")
	fl.StringVarP(&f.output, "output", "o", "", "print the final Workflow as json or yaml (progress goes to stderr)")
	fl.StringVar(&f.dataDir, "data-dir", "", "where the store, logs and artifacts live (default $BRAID_HOME or ~/.braid)")
	fl.StringVar(&f.configFile, "config", "", "config file (default <data dir>/config.yaml)")
	fl.StringVarP(&f.namespace, "namespace", "n", "default", "namespace to run the workflow in")
	fl.StringVar(&f.name, "name", "", "override metadata.name")
	fl.StringVar(&f.generateName, "generate-name", "", "override metadata.generateName")
	fl.StringVarP(&f.labels, "labels", "l", "", "comma separated labels to add: key1=val1,key2=val2")
	fl.BoolVar(&f.noColor, "no-color", false, "disable colour in the progress tree")
	fl.StringArrayVar(&f.templates, "templates", nil, "files or directories of WorkflowTemplates and ClusterWorkflowTemplates that templateRef and workflowTemplateRef may name (repeatable)")
	fl.StringVar(&f.isolation, "isolation", "", "give each step a root file system of its own: none, auto or required (default: the config file's isolation, else auto)")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of braid itself to this file")
	_ = fl.MarkHidden("cpuprofile")
	return cmd
}

// runRun loads, checks and runs the workflow, then prints the outcome.
func runRun(ctx context.Context, s streams, f runFlags, file string) error {
	if f.output != "" && f.output != "json" && f.output != "yaml" {
		return &exitError{code: 2, err: fmt.Errorf("unknown output format %q: use json or yaml", f.output)}
	}
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return &exitError{code: 2, err: err}
		}
		defer stop()
	}
	if err := config.CheckIsolation(f.isolation); err != nil {
		return &exitError{code: 2, err: err}
	}
	wf, cat, err := loadRunWorkflow(f, file)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	env, err := app.OpenEmbedded(ctx, app.EmbeddedConfig{DataDir: f.dataDir, ConfigFile: f.configFile, Isolation: f.isolation})
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	defer env.Close()
	progress := s.out
	if f.output != "" {
		progress = s.err
	}
	view := newProgressView(progress, f.noColor)
	shutdown, stopSignals := shutdownOnSignals(view)
	defer stopSignals()
	final, err := env.Run(ctx, wf, cat, view.observe, shutdown)
	view.finish(final)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("run %s: %w", wf.Name, err)}
	}
	if err := printFinal(s, f.output, final); err != nil {
		return err
	}
	if final.Status.Phase != v1alpha1.WorkflowSucceeded {
		return &exitError{code: 1}
	}
	return nil
}

// loadRunWorkflow reads FILE, applies the submit options, resolves a
// workflowTemplateRef and validates; any problem is the user's (exit 2).
func loadRunWorkflow(f runFlags, file string) (*v1alpha1.Workflow, *spec.Catalog, error) {
	docs, err := spec.LoadFile(file, spec.Strict)
	if err != nil {
		return nil, nil, err
	}
	var wfs []*v1alpha1.Workflow
	var wfDoc *spec.Document
	for _, d := range docs {
		if w, ok := d.Object.(*v1alpha1.Workflow); ok {
			wfs = append(wfs, w)
			wfDoc = d
		}
	}
	if len(wfs) != 1 {
		return nil, nil, fmt.Errorf("%s: braid run needs exactly one Workflow, found %d", file, len(wfs))
	}
	wf := wfs[0]
	so := spec.SubmitOptions{Parameters: f.parameters, Entrypoint: f.entrypoint, Name: f.name, GenerateName: f.generateName, Labels: f.labels}
	if f.parameterFile != "" {
		if so.ParameterFile, err = os.ReadFile(f.parameterFile); err != nil {
			return nil, nil, fmt.Errorf("read parameter file: %w", err)
		}
	}
	if err := spec.ApplySubmitOptions(wf, so); err != nil {
		return nil, nil, err
	}
	lib, err := loadTemplateDocs(f.templates)
	if err != nil {
		return nil, nil, err
	}
	cat := spec.NewCatalog(append(lib, docs...)) // the file's own templates win
	if errs, _ := spec.Validate(wfDoc, cat).Split(); len(errs) > 0 {
		return nil, nil, errs
	}
	if err := spec.ResolveWorkflowTemplateRef(wf, cat); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	wf.Namespace = f.namespace
	return wf, cat, nil
}

// shutdownOnSignals turns the first Ctrl-C into Stop and the second into
// Terminate; a third one ends the process at once.
func shutdownOnSignals(view *progressView) (<-chan v1alpha1.ShutdownStrategy, func()) {
	sig := make(chan os.Signal, 3)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	out := make(chan v1alpha1.ShutdownStrategy, 2)
	done := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			select {
			case <-sig:
			case <-done:
				return
			}
			switch n {
			case 0:
				view.note("stopping the workflow (exit handlers still run); press Ctrl-C again to terminate")
				out <- v1alpha1.ShutdownStop
			case 1:
				view.note("terminating the workflow")
				out <- v1alpha1.ShutdownTerminate
			default:
				os.Exit(130)
			}
		}
	}()
	return out, func() { signal.Stop(sig); close(done) }
}

func printFinal(s streams, output string, wf *v1alpha1.Workflow) error {
	switch output {
	case "json":
		data, err := json.MarshalIndent(wf, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(s.out, string(data))
		return err
	case "yaml":
		data, err := yaml.Marshal(wf)
		if err != nil {
			return err
		}
		_, err = s.out.Write(data)
		return err
	}
	return nil
}

func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// loadTemplateDocs loads the WorkflowTemplates and ClusterWorkflowTemplates
// under paths, as if they had been created before the run.
func loadTemplateDocs(paths []string) ([]*spec.Document, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	files, err := spec.SpecFiles(paths)
	if err != nil {
		return nil, fmt.Errorf("--templates: %w", err)
	}
	var out []*spec.Document
	for _, file := range files {
		docs, err := spec.LoadFile(file, spec.Strict)
		if err != nil {
			return nil, fmt.Errorf("--templates: %w", err)
		}
		for _, d := range docs {
			switch d.Object.(type) {
			case *v1alpha1.WorkflowTemplate, *v1alpha1.ClusterWorkflowTemplate:
				out = append(out, d)
			}
		}
	}
	return out, nil
}
