package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/braidwf/braid/internal/spec"
)

// The verbs every stored kind shares (create, get, list, delete, lint,
// update), written once over objKind: `braid template`,
// `braid cluster-template` (template.go, clustertemplate.go) and
// `braid cron` (cron.go), which adds its own verbs.

// objKind is one kind of stored object and its API calls. Objects travel
// as the typed object (*v1alpha1.WorkflowTemplate, ...CronWorkflow).
type objKind struct {
	use, short string
	aliases    []string
	kind       string // "WorkflowTemplate"
	lintKind   string // the --kinds name of lint
	cluster    bool
	help       kindHelp
	load       func(s streams, files []string, strict bool) ([]spec.Object, error)
	// create and update take an object load made (of the kind's type).
	create func(ctx context.Context, sess *session, obj spec.Object) (spec.Object, error)
	// get reads the object name of namespace ns (ignored by a cluster kind).
	get    func(ctx context.Context, sess *session, ns, name string) (spec.Object, error)
	update func(ctx context.Context, sess *session, name string, obj spec.Object) (spec.Object, error)
	remove func(ctx context.Context, sess *session, name string) error
	// list gives the objects of ns ("" is every namespace).
	list func(ctx context.Context, sess *session, ns, selector string) ([]spec.Object, error)
	// print writes one object as -o says: name, json, yaml, or the kind's
	// own view (default and wide).
	print func(s streams, obj spec.Object, output string) error
	// table writes the list view (-o wide or none); namespaces adds the
	// NAMESPACE column of --all-namespaces.
	table func(w io.Writer, objs []spec.Object, namespaces bool) error
	// editFlags, when set, adds the flags of verb ("create" or "update")
	// that change the objects read from the files, and returns the edit
	// to apply to each before it is sent.
	editFlags func(verb string, fs *pflag.FlagSet) func(spec.Object) error
}

// kindHelp is what a kind's commands say about it, which differs between
// the kinds as it does in argo.
type kindHelp struct {
	one, many string // "a WorkflowTemplate", "WorkflowTemplates": the Shorts
	plural    string // "templates": the -A help and the delete error
	getUse    string // "get NAME..."
	deleteUse string // "delete NAME... | --all"
	// createExample and updateExample are the commands' Examples.
	createExample, updateExample string
	// createOutput, when set, is the help of create's -o, which then
	// accepts any value and always prints the default view (argo cron
	// create does so).
	createOutput string
	// quietDelete: delete prints nothing, as argo cron delete.
	quietDelete bool
}

// newKindCommand is the command of k with the shared verbs, and extra.
func newKindCommand(s streams, g *globalFlags, k *objKind, extra ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: k.use, Short: k.short, Aliases: k.aliases}
	cmd.AddCommand(k.createCommand(s, g), k.getCommand(s, g), k.listCommand(s, g),
		k.deleteCommand(s, g), k.lintCommand(s, g), k.updateCommand(s, g))
	cmd.AddCommand(extra...)
	return cmd
}

// loadEdited reads the objects of the files and applies edit to each.
func (k *objKind) loadEdited(s streams, files []string, strict bool, edit func(spec.Object) error) ([]spec.Object, error) {
	objs, err := k.load(s, files, strict)
	if err != nil {
		return nil, err
	}
	if edit != nil {
		for _, o := range objs {
			if err := edit(o); err != nil {
				return nil, err
			}
		}
	}
	return objs, nil
}

// addEditFlags registers the kind's extra flags of verb and returns the
// edit they make (nil when the kind has none).
func (k *objKind) addEditFlags(verb string, fs *pflag.FlagSet) func(spec.Object) error {
	if k.editFlags == nil {
		return nil
	}
	return k.editFlags(verb, fs)
}

func (k *objKind) createCommand(s streams, g *globalFlags) *cobra.Command {
	var output string
	strict := true
	var edit func(spec.Object) error
	cmd := &cobra.Command{
		Use:     "create FILE1 FILE2...",
		Short:   "create " + k.help.one,
		Example: k.help.createExample,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			shown := output
			if k.help.createOutput != "" {
				shown = ""
			} else if err := checkOutput(output, "name", "json", "yaml", "wide"); err != nil {
				return err
			}
			objs, err := k.loadEdited(s, args, strict, edit)
			if err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				return k.each(ctx, s, sess, objs, "create", k.create, shown)
			})
		},
	}
	outputHelp := "output format: name, json, yaml or wide"
	if k.help.createOutput != "" {
		outputHelp = k.help.createOutput
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", outputHelp)
	cmd.Flags().BoolVar(&strict, "strict", true, "perform strict validation")
	edit = k.addEditFlags("create", cmd.Flags())
	return cmd
}

func (k *objKind) getCommand(s streams, g *globalFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   k.help.getUse,
		Short: "display details about " + k.help.one,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "name", "json", "yaml", "wide"); err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				for _, name := range args {
					obj, err := k.get(ctx, sess, sess.namespace, name)
					if err != nil {
						return err
					}
					if err := k.print(s, obj, output); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: name, json, yaml or wide")
	return cmd
}

func (k *objKind) listCommand(s streams, g *globalFlags) *cobra.Command {
	var output, selector string
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list " + k.help.many,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "name", "wide"); err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				ns := sess.namespace
				if all {
					ns = ""
				}
				objs, err := k.list(ctx, sess, ns, selector)
				if err != nil {
					return err
				}
				if output == "name" {
					for _, o := range objs {
						fmt.Fprintln(s.out, o.GetName())
					}
					return nil
				}
				return k.table(s.out, objs, all && !k.cluster)
			})
		},
	}
	if !k.cluster {
		cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "show "+k.help.plural+" from all namespaces")
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: name or wide")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector, e.g. -l key1=value1,key2=value2")
	return cmd
}

func (k *objKind) deleteCommand(s streams, g *globalFlags) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   k.help.deleteUse,
		Short: "delete " + k.help.many,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !all && len(args) == 0 {
				return fmt.Errorf("name the %s to delete, or use --all", k.help.plural)
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				names := args
				if all {
					objs, err := k.list(ctx, sess, sess.namespace, "")
					if err != nil {
						return err
					}
					names = nil
					for _, o := range objs {
						names = append(names, o.GetName())
					}
				}
				for _, name := range names {
					if err := k.remove(ctx, sess, name); err != nil {
						return err
					}
					if !k.help.quietDelete {
						fmt.Fprintf(s.out, "%s '%s' deleted\n", k.kind, name)
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "delete all "+k.help.many)
	return cmd
}

func (k *objKind) lintCommand(s streams, g *globalFlags) *cobra.Command {
	return kindLintCommand(s, g, k.kind, k.lintKind)
}

// kindLintCommand is `<kind> lint FILE...`: braid lint restricted to one
// kind, through the server's lint API when a server is in use.
func kindLintCommand(s streams, g *globalFlags, kind, lintKind string) *cobra.Command {
	f := lintFlags{kinds: []string{lintKind}}
	cmd := &cobra.Command{
		Use:   "lint FILE...",
		Short: "validate files or directories of " + kind + " manifests",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sess, err := g.connectServer(cmd.Context())
			if err != nil {
				return err
			}
			if sess == nil {
				return runLint(cmd.Context(), s, f, args, nil)
			}
			defer sess.Close()
			return runLint(cmd.Context(), s, f, args, sess)
		},
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "pretty", "output format: pretty, simple or json")
	cmd.Flags().BoolVar(&f.strict, "strict", true, "perform strict validation")
	return cmd
}

func (k *objKind) updateCommand(s streams, g *globalFlags) *cobra.Command {
	var output string
	strict := true
	var edit func(spec.Object) error
	cmd := &cobra.Command{
		Use:     "update FILE1 FILE2...",
		Short:   "update " + k.help.many,
		Example: k.help.updateExample,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "name", "json", "yaml", "wide"); err != nil {
				return err
			}
			objs, err := k.loadEdited(s, args, strict, edit)
			if err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				return k.each(ctx, s, sess, objs, "update", k.replace, output)
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: name, json, yaml or wide")
	cmd.Flags().BoolVar(&strict, "strict", true, "perform strict validation")
	edit = k.addEditFlags("update", cmd.Flags())
	return cmd
}

// replace updates the stored object named as o, in its namespace (the
// session's when it has none), at its current resourceVersion, and
// returns the result.
func (k *objKind) replace(ctx context.Context, sess *session, o spec.Object) (spec.Object, error) {
	cur, err := k.get(ctx, sess, objectNamespace(o, sess.namespace), o.GetName())
	if err != nil {
		return nil, err
	}
	o.SetResourceVersion(cur.GetResourceVersion())
	return k.update(ctx, sess, o.GetName(), o)
}

// printObject writes obj as -o name, json or yaml says, and reports
// whether output was one of those.
func printObject(s streams, obj spec.Object, output string) (bool, error) {
	switch output {
	case "name":
		_, err := fmt.Fprintln(s.out, obj.GetName())
		return true, err
	case "json":
		return true, writeIndentedJSON(s.out, obj)
	case "yaml":
		return true, writeYAML(s, obj)
	}
	return false, nil
}

// lowerKind is "workflow template" for "WorkflowTemplate", as argo's
// messages say.
func lowerKind(kind string) string {
	switch kind {
	case "WorkflowTemplate":
		return "workflow template"
	case "ClusterWorkflowTemplate":
		return "cluster workflow template"
	case "CronWorkflow":
		return "cron workflow"
	}
	return kind
}

// each applies op (create or replace) to every object in order and prints
// each result with output; the first failure stops it, named by verb.
func (k *objKind) each(ctx context.Context, s streams, sess *session, objs []spec.Object, verb string,
	op func(context.Context, *session, spec.Object) (spec.Object, error), output string) error {
	for _, o := range objs {
		got, err := op(ctx, sess, o)
		if err != nil {
			return fmt.Errorf("failed to %s %s: %w", verb, lowerKind(k.kind), err)
		}
		if err := k.print(s, got, output); err != nil {
			return err
		}
	}
	return nil
}
