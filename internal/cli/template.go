package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apiclient/workflowtemplate"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// `braid template` and `braid cluster-template`: the same verbs (create,
// get, list, delete, lint, update) over WorkflowTemplateService and
// ClusterWorkflowTemplateService. tmplKind holds what differs.

// tmplKind is one template kind and its API calls. Objects travel as the
// typed object (*v1alpha1.WorkflowTemplate or ...ClusterWorkflowTemplate).
type tmplKind struct {
	use, short string
	aliases    []string
	kind       string // "WorkflowTemplate"
	lintKind   string // the --kinds name of lint
	cluster    bool
	load       func(s streams, files []string, strict bool) ([]spec.Object, error)
	// create and update take an object load made (of the kind's type).
	create func(ctx context.Context, sess *session, obj spec.Object) (spec.Object, error)
	get    func(ctx context.Context, sess *session, name string) (spec.Object, error)
	update func(ctx context.Context, sess *session, name string, obj spec.Object) (spec.Object, error)
	remove func(ctx context.Context, sess *session, name string) error
	// list gives the names (with namespaces) of the templates; ns "" is
	// every namespace.
	list func(ctx context.Context, sess *session, ns, selector string) ([]spec.Object, error)
}

// workflowTemplateKind is WorkflowTemplate over WorkflowTemplateService.
func workflowTemplateKind() *tmplKind {
	return &tmplKind{
		use: "template", short: "manipulate workflow templates", aliases: []string{"tmpl"},
		kind: "WorkflowTemplate", lintKind: "workflowtemplates",
		load: loadAs[*v1alpha1.WorkflowTemplate]("WorkflowTemplate"),
		create: func(ctx context.Context, sess *session, obj spec.Object) (spec.Object, error) {
			t, err := typed[*v1alpha1.WorkflowTemplate](obj)
			if err != nil {
				return nil, err
			}
			return answer(sess.WorkflowTemplate.CreateWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateCreateRequest{
				Namespace: objectNamespace(obj, sess.namespace), Template: t, CreateOptions: &metav1.CreateOptions{}}))
		},
		get: func(ctx context.Context, sess *session, name string) (spec.Object, error) {
			return answer(sess.WorkflowTemplate.GetWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateGetRequest{Name: name, Namespace: sess.namespace}))
		},
		update: func(ctx context.Context, sess *session, name string, obj spec.Object) (spec.Object, error) {
			t, err := typed[*v1alpha1.WorkflowTemplate](obj)
			if err != nil {
				return nil, err
			}
			return answer(sess.WorkflowTemplate.UpdateWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateUpdateRequest{
				Name: name, Namespace: objectNamespace(obj, sess.namespace), Template: t}))
		},
		remove: func(ctx context.Context, sess *session, name string) error {
			_, err := sess.WorkflowTemplate.DeleteWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateDeleteRequest{Name: name, Namespace: sess.namespace})
			return err
		},
		list: func(ctx context.Context, sess *session, ns, selector string) ([]spec.Object, error) {
			res, err := sess.WorkflowTemplate.ListWorkflowTemplates(ctx, &workflowtemplate.WorkflowTemplateListRequest{
				Namespace: ns, ListOptions: &metav1.ListOptions{LabelSelector: selector}})
			if err != nil {
				return nil, err
			}
			out := make([]spec.Object, len(res.Items))
			for i := range res.Items {
				out[i] = &res.Items[i]
			}
			return out, nil
		},
	}
}

// answer is a typed API answer as a spec.Object: nil with the error, never
// a nil pointer in a non-nil interface.
func answer[P spec.Object](obj P, err error) (spec.Object, error) {
	if err != nil {
		return nil, err
	}
	return obj, nil
}

// typed is obj as the API type P; the loaders make objects of the kind's
// own type, so another type is a bug.
func typed[P spec.Object](obj spec.Object) (P, error) {
	p, ok := obj.(P)
	if !ok {
		return p, fmt.Errorf("internal error: a %T where a %T is expected", obj, p)
	}
	return p, nil
}

// loadAs reads the objects of kind T from files.
func loadAs[T spec.Object](kind string) func(streams, []string, bool) ([]spec.Object, error) {
	return func(s streams, files []string, strict bool) ([]spec.Object, error) {
		objs, err := loadKind[T](s, files, strict, kind)
		if err != nil {
			return nil, err
		}
		out := make([]spec.Object, len(objs))
		for i, o := range objs {
			out[i] = o
		}
		return out, nil
	}
}

// objectNamespace is the namespace of an object to send: its own, else def.
func objectNamespace(obj spec.Object, def string) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns
	}
	return def
}

func newTemplateCommand(s streams, g *globalFlags) *cobra.Command {
	return newTmplCommand(s, g, workflowTemplateKind())
}

func newTmplCommand(s streams, g *globalFlags, k *tmplKind) *cobra.Command {
	cmd := &cobra.Command{Use: k.use, Short: k.short, Aliases: k.aliases}
	cmd.AddCommand(k.createCommand(s, g), k.getCommand(s, g), k.listCommand(s, g),
		k.deleteCommand(s, g), k.lintCommand(s, g), k.updateCommand(s, g))
	return cmd
}

// print writes one template as -o says: name, json, yaml, or the header
// lines (default and wide).
func (k *tmplKind) print(s streams, obj spec.Object, output string) error {
	switch output {
	case "name":
		_, err := fmt.Fprintln(s.out, obj.GetName())
		return err
	case "json":
		return writeIndentedJSON(s.out, obj)
	case "yaml":
		return writeYAML(s, obj)
	}
	const format = "%-20s %v\n"
	fmt.Fprintf(s.out, format, "Name:", obj.GetName())
	if !k.cluster {
		fmt.Fprintf(s.out, format, "Namespace:", obj.GetNamespace())
	}
	_, err := fmt.Fprintf(s.out, format, "Created:", humanTimestamp(obj.GetCreationTimestamp().Time, time.Now()))
	return err
}

func (k *tmplKind) createCommand(s streams, g *globalFlags) *cobra.Command {
	var output string
	strict := true
	cmd := &cobra.Command{
		Use:   "create FILE1 FILE2...",
		Short: "create a " + k.kind,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "name", "json", "yaml", "wide"); err != nil {
				return err
			}
			objs, err := k.load(s, args, strict)
			if err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				for _, o := range objs {
					created, err := k.create(ctx, sess, o)
					if err != nil {
						return fmt.Errorf("failed to create %s: %w", lowerKind(k.kind), err)
					}
					if err := k.print(s, created, output); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: name, json, yaml or wide")
	cmd.Flags().BoolVar(&strict, "strict", true, "perform strict validation")
	return cmd
}

func (k *tmplKind) getCommand(s streams, g *globalFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get NAME...",
		Short: "display details about a " + k.kind,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "name", "json", "yaml", "wide"); err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				for _, name := range args {
					obj, err := k.get(ctx, sess, name)
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

func (k *tmplKind) listCommand(s streams, g *globalFlags) *cobra.Command {
	var output, selector string
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list " + k.kind + "s",
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
				return writeTmplList(s, objs, output, all && !k.cluster)
			})
		},
	}
	if !k.cluster {
		cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "show templates from all namespaces")
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: name or wide")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector, e.g. -l key1=value1,key2=value2")
	return cmd
}

// writeTmplList prints the names, or the NAME (NAMESPACE NAME) table.
func writeTmplList(s streams, objs []spec.Object, output string, namespaces bool) error {
	if output == "name" {
		for _, o := range objs {
			fmt.Fprintln(s.out, o.GetName())
		}
		return nil
	}
	tw := newTable(s.out)
	if namespaces {
		fmt.Fprint(tw, "NAMESPACE\t")
	}
	fmt.Fprint(tw, "NAME\n")
	for _, o := range objs {
		if namespaces {
			fmt.Fprintf(tw, "%s\t", o.GetNamespace())
		}
		fmt.Fprintf(tw, "%s\t\n", o.GetName())
	}
	return tw.Flush()
}

func (k *tmplKind) deleteCommand(s streams, g *globalFlags) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "delete NAME... | --all",
		Short: "delete " + k.kind + "s",
		RunE: func(cmd *cobra.Command, args []string) error {
			if !all && len(args) == 0 {
				return errors.New("name the templates to delete, or use --all")
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
					fmt.Fprintf(s.out, "%s '%s' deleted\n", k.kind, name)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "delete all "+k.kind+"s")
	return cmd
}

func (k *tmplKind) lintCommand(s streams, g *globalFlags) *cobra.Command {
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

func (k *tmplKind) updateCommand(s streams, g *globalFlags) *cobra.Command {
	var output string
	strict := true
	cmd := &cobra.Command{
		Use:   "update FILE1 FILE2...",
		Short: "update " + k.kind + "s",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "name", "json", "yaml", "wide"); err != nil {
				return err
			}
			objs, err := k.load(s, args, strict)
			if err != nil {
				return err
			}
			return g.withSession(cmd, func(ctx context.Context, sess *session) error {
				for _, o := range objs {
					updated, err := k.replace(ctx, sess, o)
					if err != nil {
						return fmt.Errorf("failed to update %s: %w", lowerKind(k.kind), err)
					}
					if err := k.print(s, updated, output); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: name, json, yaml or wide")
	cmd.Flags().BoolVar(&strict, "strict", true, "perform strict validation")
	return cmd
}

// replace updates the stored object named as o, at its current
// resourceVersion, and returns the result.
func (k *tmplKind) replace(ctx context.Context, sess *session, o spec.Object) (spec.Object, error) {
	cur, err := k.get(ctx, sess, o.GetName())
	if err != nil {
		return nil, err
	}
	o.SetResourceVersion(cur.GetResourceVersion())
	return k.update(ctx, sess, o.GetName(), o)
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
