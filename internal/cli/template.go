package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/spec"
	"github.com/braidwf/braid/pkg/apiclient/workflowtemplate"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// `braid template` and `braid cluster-template`: the shared verbs
// (kindcmd.go) over WorkflowTemplateService and
// ClusterWorkflowTemplateService.

// workflowTemplateKind is WorkflowTemplate over WorkflowTemplateService.
func workflowTemplateKind() *objKind {
	return &objKind{
		use: "template", short: "manipulate workflow templates", aliases: []string{"tmpl"},
		kind: "WorkflowTemplate", lintKind: "workflowtemplates", help: templateHelp("WorkflowTemplate"),
		print: templatePrinter(false), table: writeTmplTable,
		load: loadAs[*v1alpha1.WorkflowTemplate]("WorkflowTemplate"),
		create: func(ctx context.Context, sess *session, obj spec.Object) (spec.Object, error) {
			t, err := typed[*v1alpha1.WorkflowTemplate](obj)
			if err != nil {
				return nil, err
			}
			return answer(sess.WorkflowTemplate.CreateWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateCreateRequest{
				Namespace: objectNamespace(obj, sess.namespace), Template: t, CreateOptions: &metav1.CreateOptions{}}))
		},
		get: func(ctx context.Context, sess *session, ns, name string) (spec.Object, error) {
			return answer(sess.WorkflowTemplate.GetWorkflowTemplate(ctx, &workflowtemplate.WorkflowTemplateGetRequest{Name: name, Namespace: ns}))
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
	return newKindCommand(s, g, workflowTemplateKind())
}

// templateHelp is what the commands of a template kind say about it.
func templateHelp(kind string) kindHelp {
	return kindHelp{one: "a " + kind, many: kind + "s", plural: "templates",
		getUse: "get NAME...", deleteUse: "delete NAME... | --all"}
}

// templatePrinter writes one template as -o says: name, json, yaml, or the
// header lines (default and wide); a cluster kind has no Namespace line.
func templatePrinter(cluster bool) func(streams, spec.Object, string) error {
	return func(s streams, obj spec.Object, output string) error {
		if done, err := printObject(s, obj, output); done {
			return err
		}
		const format = "%-20s %v\n"
		fmt.Fprintf(s.out, format, "Name:", obj.GetName())
		if !cluster {
			fmt.Fprintf(s.out, format, "Namespace:", obj.GetNamespace())
		}
		_, err := fmt.Fprintf(s.out, format, "Created:", humanTimestamp(obj.GetCreationTimestamp().Time, time.Now()))
		return err
	}
}

// writeTmplList prints the names, or the NAME (NAMESPACE NAME) table.
func writeTmplList(s streams, objs []spec.Object, output string, namespaces bool) error {
	if output == "name" {
		for _, o := range objs {
			fmt.Fprintln(s.out, o.GetName())
		}
		return nil
	}
	return writeTmplTable(s.out, objs, namespaces)
}

// writeTmplTable prints the NAME (NAMESPACE NAME) table of templates.
func writeTmplTable(w io.Writer, objs []spec.Object, namespaces bool) error {
	tw := newTable(w)
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
