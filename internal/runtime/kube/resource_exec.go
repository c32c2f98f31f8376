package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// FieldManager is the field manager of server-side apply.
const FieldManager = "braid"

// resJob is one resource run, prepared: what to do to which object, as whom.
type resJob struct {
	r                *resources
	run              runtime.Run
	action           string
	obj              *unstructured.Unstructured // the manifest's object; nil for a json patch
	patch            []byte                     // the body of a patch
	patchType        types.PatchType
	mapping          *meta.RESTMapping
	ns, name         string
	sa               string // "namespace/name" of the service account acted as
	success, failure condition
	client           dynamic.ResourceInterface
}

// nodeErr ends a run with a phase and a message.
type nodeErr struct {
	phase v1alpha1.NodePhase
	msg   string
}

func (e nodeErr) Error() string { return e.msg }

func failed(format string, a ...any) error {
	return nodeErr{v1alpha1.NodeFailed, fmt.Sprintf(format, a...)}
}

// exec carries out the run: its action, the wait on its conditions and its
// outputs. It returns the final phase, message and outputs.
func (r *resources) exec(ctx context.Context, run runtime.Run) (v1alpha1.NodePhase, string, *v1alpha1.Outputs) {
	if run.Template.Data != nil {
		return r.rt.execData(ctx, run)
	}
	j, err := r.prepare(ctx, run)
	if err == nil {
		var obj *unstructured.Unstructured
		if obj, err = j.act(ctx); err == nil && obj != nil {
			if obj, err = j.wait(ctx, obj); err == nil {
				var outs *v1alpha1.Outputs
				if outs, err = outputs(run.Template, obj); err == nil {
					return v1alpha1.NodeSucceeded, "", outs
				}
			}
		}
		if err == nil { // delete: nothing to wait for
			return v1alpha1.NodeSucceeded, "", nil
		}
	}
	var ne nodeErr
	if errors.As(err, &ne) {
		return ne.phase, ne.msg, nil
	}
	var ue userError
	if errors.As(err, &ue) {
		return v1alpha1.NodeFailed, ue.Error(), nil
	}
	if ctx.Err() != nil {
		return v1alpha1.NodeFailed, causeMessage(context.Cause(ctx)), nil
	}
	return v1alpha1.NodeError, err.Error(), nil
}

var resourceActions = []string{"get", "create", "apply", "delete", "replace", "patch"}

// prepare checks the template and resolves the object, its resource and the
// client, before anything is changed.
func (r *resources) prepare(ctx context.Context, run runtime.Run) (*resJob, error) {
	if r.rest == nil {
		return nil, nodeErr{v1alpha1.NodeError, MsgNoRestConfig}
	}
	tmpl := run.Template.Resource
	j := &resJob{r: r, run: run, action: tmpl.Action}
	if !slices.Contains(resourceActions, j.action) {
		return nil, failed("resource action %q: want one of %s", tmpl.Action, strings.Join(resourceActions, ", "))
	}
	for _, p := range run.Template.Outputs.Parameters {
		if p.ValueFrom != nil && p.ValueFrom.JQFilter != "" {
			if _, err := parseJQ(p.ValueFrom.JQFilter); err != nil {
				return nil, failed("output parameter %q: jqFilter: %v", p.Name, err)
			}
		}
	}
	var err error
	if j.success, err = parseCondition(tmpl.SuccessCondition); err != nil {
		return nil, failed("successCondition: %v", err)
	}
	if j.failure, err = parseCondition(tmpl.FailureCondition); err != nil {
		return nil, failed("failureCondition: %v", err)
	}
	text, err := r.manifest(ctx, run)
	if err != nil {
		return nil, err
	}
	target := parseFlags(tmpl.Flags)
	if err := j.parseManifest(text, target); err != nil {
		return nil, err
	}
	if err := j.resolve(ctx, target); err != nil {
		return nil, err
	}
	sa := serviceAccountOf(run)
	j.sa = run.Namespace + "/" + sa
	c, err := r.client("system:serviceaccount:" + run.Namespace + ":" + sa)
	if err != nil {
		return nil, err
	}
	ri := c.Resource(j.mapping.Resource)
	if j.ns != "" {
		j.client = ri.Namespace(j.ns)
	} else {
		j.client = ri
	}
	return j, nil
}

// serviceAccountOf is the account Argo's executor would act as: the
// executor's (template, then workflow), else the pod's (template, then
// workflow), else "default".
func serviceAccountOf(run runtime.Run) string {
	t := run.Template
	var spec v1alpha1.WorkflowSpec
	if run.Spec != nil {
		spec = *run.Spec
	}
	var names []string
	if t.Executor != nil {
		names = append(names, t.Executor.ServiceAccountName)
	}
	if spec.Executor != nil {
		names = append(names, spec.Executor.ServiceAccountName)
	}
	names = append(names, t.ServiceAccountName, spec.ServiceAccountName, "default")
	for _, n := range names {
		if n != "" {
			return n
		}
	}
	return "default"
}

// flagTarget is what a template's kubectl flags name: a resource type, an
// object name, a namespace. Other flags are ignored.
type flagTarget struct {
	resource, name, namespace string
}

// flagsWithValue are kubectl flags whose value is the next word.
var flagsWithValue = []string{"-n", "--namespace", "-l", "--selector", "-o", "--output", "-p", "--patch",
	"--type", "-f", "--filename", "--field-manager", "--context", "--cluster", "--user"}

// parseFlags reads the target of `kubectl patch TYPE NAME` or TYPE/NAME.
func parseFlags(flags []string) flagTarget {
	var t flagTarget
	var pos []string
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		switch {
		case f == "-n" || f == "--namespace":
			if i+1 < len(flags) {
				t.namespace = flags[i+1]
			}
			i++
		case strings.HasPrefix(f, "--namespace="):
			t.namespace = strings.TrimPrefix(f, "--namespace=")
		case slices.Contains(flagsWithValue, f):
			i++
		case strings.HasPrefix(f, "-"):
		default:
			pos = append(pos, f)
		}
	}
	if len(pos) > 0 {
		if typ, name, ok := strings.Cut(pos[0], "/"); ok {
			t.resource, t.name = typ, name
		} else {
			t.resource = pos[0]
			if len(pos) > 1 {
				t.name = pos[1]
			}
		}
	}
	return t
}

// parseManifest reads the manifest: one object, or for a json patch a list
// of operations.
func (j *resJob) parseManifest(text string, target flagTarget) error {
	tmpl := j.run.Template.Resource
	if j.action == "patch" {
		switch tmpl.MergeStrategy {
		case "", "strategic":
			j.patchType = types.StrategicMergePatchType
		case "merge":
			j.patchType = types.MergePatchType
		case "json":
			j.patchType = types.JSONPatchType
		default:
			return failed("mergeStrategy %q: want strategic, merge or json", tmpl.MergeStrategy)
		}
	}
	data, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return failed("the manifest is not YAML or JSON: %v", err)
	}
	if multiDoc(text) {
		return failed("the manifest holds more than one document; a resource template acts on one object")
	}
	if j.patchType == types.JSONPatchType {
		var ops []map[string]any
		if err := json.Unmarshal(data, &ops); err != nil {
			return failed("mergeStrategy json needs a JSON patch: a list of operations ({op, path, value}): %v", err)
		}
		if target.resource == "" || target.name == "" {
			return failed("a json patch names its object in flags: [TYPE, NAME] or [TYPE/NAME]")
		}
		j.patch = data
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return failed("the manifest must be one object (apiVersion, kind, metadata, ...)")
	}
	j.obj = &unstructured.Unstructured{Object: m}
	if j.action == "patch" {
		j.patch = data
		if target.resource != "" {
			return nil
		}
	}
	if j.obj.GetAPIVersion() == "" || j.obj.GetKind() == "" {
		return failed("the manifest's object has no apiVersion or kind")
	}
	if j.obj.GetName() == "" && (j.action != "create" || j.obj.GetGenerateName() == "") {
		return failed("the manifest's object has no metadata.name (only create may use generateName)")
	}
	return nil
}

// multiDoc reports whether text holds a second YAML document.
func multiDoc(text string) bool {
	docs := 0
	for part := range strings.SplitSeq("\n"+text, "\n---") {
		if s := strings.TrimSpace(part); s != "" && !strings.HasPrefix(s, "#") {
			docs++
		}
	}
	return docs > 1
}

// resolve finds the resource, the namespace and the name.
func (j *resJob) resolve(ctx context.Context, target flagTarget) error {
	var err error
	if target.resource != "" && j.action == "patch" {
		j.mapping, err = j.r.mappingOf(ctx, target.resource)
		j.name = target.name
		j.ns = target.namespace
	} else {
		j.mapping, err = j.r.mapping(ctx, j.obj.GroupVersionKind())
		j.name = j.obj.GetName()
		j.ns = j.obj.GetNamespace()
	}
	if err != nil {
		var ue userError
		if errors.As(err, &ue) {
			return failed("%s", ue.Error())
		}
		return fmt.Errorf("find the resource of the manifest: %w", err)
	}
	if j.name == "" && j.action == "patch" {
		return failed("the object to patch has no name")
	}
	if j.mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		j.ns = ""
		return nil
	}
	if j.ns == "" {
		j.ns = j.run.Namespace
	}
	if j.obj != nil && j.action != "patch" {
		j.obj.SetNamespace(j.ns)
	}
	return nil
}

// act carries out the action and returns the object; nil after delete.
func (j *resJob) act(ctx context.Context) (*unstructured.Unstructured, error) {
	var obj *unstructured.Unstructured
	verb := j.action
	err := retryTransient(ctx, func() error {
		var err error
		switch j.action {
		case "get":
			obj, err = j.client.Get(ctx, j.name, metav1.GetOptions{})
		case "create":
			obj, err = j.create(ctx)
		case "apply":
			j.own()
			obj, err = j.client.Apply(ctx, j.name, j.obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		case "replace":
			obj, err = j.replace(ctx)
		case "patch":
			obj, err = j.client.Patch(ctx, j.name, j.patchType, j.patch, metav1.PatchOptions{FieldManager: FieldManager})
		case "delete":
			bg := metav1.DeletePropagationBackground
			err = j.client.Delete(ctx, j.name, metav1.DeleteOptions{PropagationPolicy: &bg})
			if apierrors.IsNotFound(err) {
				err = nil // as kubectl delete --ignore-not-found
			}
		}
		return err
	})
	if err != nil {
		return nil, j.describe(verb, err)
	}
	if obj != nil {
		j.name = obj.GetName() // generateName
	}
	return obj, nil
}

// own adds the run's ownerReference to the Workflow when asked.
func (j *resJob) own() {
	if !j.run.Template.Resource.SetOwnerReference || j.run.WorkflowUID == "" {
		return
	}
	yes := true
	ref := metav1.OwnerReference{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Workflow",
		Name: j.run.Workflow, UID: types.UID(j.run.WorkflowUID), Controller: &yes}
	refs := j.obj.GetOwnerReferences()
	if !slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == ref.UID }) {
		j.obj.SetOwnerReferences(append(refs, ref))
	}
}

// create creates the object, labelled with the run. An object that exists
// already and carries the run's label was created by this run before a
// restart: it is taken as created.
func (j *resJob) create(ctx context.Context) (*unstructured.Unstructured, error) {
	j.own()
	labels := j.obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelRunID] = runLabel(j.run.ID)
	j.obj.SetLabels(labels)
	if j.obj.GetName() == "" { // generateName: look for this run's object first
		list, err := j.client.List(ctx, metav1.ListOptions{LabelSelector: LabelRunID + "=" + runLabel(j.run.ID)})
		if err == nil && len(list.Items) > 0 {
			return &list.Items[0], nil
		}
	}
	obj, err := j.client.Create(ctx, j.obj, metav1.CreateOptions{FieldManager: FieldManager})
	if !apierrors.IsAlreadyExists(err) {
		return obj, err
	}
	old, gerr := j.client.Get(ctx, j.name, metav1.GetOptions{})
	if gerr == nil && old.GetLabels()[LabelRunID] == runLabel(j.run.ID) {
		return old, nil
	}
	return nil, err
}

// replace puts the object in place of the existing one, as kubectl replace.
func (j *resJob) replace(ctx context.Context) (*unstructured.Unstructured, error) {
	j.own()
	for attempt := 0; ; attempt++ {
		cur, err := j.client.Get(ctx, j.name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		j.obj.SetResourceVersion(cur.GetResourceVersion())
		obj, err := j.client.Update(ctx, j.obj, metav1.UpdateOptions{FieldManager: FieldManager})
		if !apierrors.IsConflict(err) || attempt >= 5 {
			return obj, err
		}
	}
}

// describe words an API error: who was denied what, or what failed.
func (j *resJob) describe(verb string, err error) error {
	res := j.mapping.Resource.Resource
	where := ""
	if j.ns != "" {
		where = fmt.Sprintf(" in namespace %q", j.ns)
	}
	switch {
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "cannot impersonate"):
		return failed("the controller cannot act as service account %q (its ClusterRole needs the verb impersonate on serviceaccounts): %v", j.sa, err)
	case apierrors.IsForbidden(err):
		ns, name, _ := strings.Cut(j.sa, "/")
		return failed("serviceaccounts %q (namespace %q) cannot %s %s%s: %v", name, ns, verb, res, where, err)
	case isUserFault(err) || apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) ||
		apierrors.IsUnsupportedMediaType(err) || apierrors.IsMethodNotSupported(err):
		return failed("%s %s %q%s: %v", verb, res, j.name, where, err)
	}
	return fmt.Errorf("%s %s %q%s: %w", verb, res, j.name, where, err)
}

// nameOf is the object's namespace/name.
func nameOf(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() != "" {
		return obj.GetNamespace() + "/" + obj.GetName()
	}
	return obj.GetName()
}
