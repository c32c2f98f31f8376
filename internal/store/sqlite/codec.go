package sqlite

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kindInfo is what the store needs to know about a kind.
type kindInfo struct {
	kind       store.Kind
	namespaced bool
}

// lookupKind checks a kind named by a caller.
func lookupKind(k store.Kind) (kindInfo, error) {
	switch k {
	case store.KindWorkflow, store.KindWorkflowTemplate, store.KindCronWorkflow, store.KindWorkflowEventBinding:
		return kindInfo{kind: k, namespaced: true}, nil
	case store.KindClusterWorkflowTemplate:
		return kindInfo{kind: k}, nil
	}
	return kindInfo{}, fmt.Errorf("unknown kind %q: %w", k, ErrInvalid)
}

// kindOf returns the kind of a typed object; the Go type decides, not TypeMeta.
func kindOf(obj store.Object) (kindInfo, error) {
	switch obj.(type) {
	case *v1alpha1.Workflow:
		return lookupKind(store.KindWorkflow)
	case *v1alpha1.WorkflowTemplate:
		return lookupKind(store.KindWorkflowTemplate)
	case *v1alpha1.ClusterWorkflowTemplate:
		return lookupKind(store.KindClusterWorkflowTemplate)
	case *v1alpha1.CronWorkflow:
		return lookupKind(store.KindCronWorkflow)
	case *v1alpha1.WorkflowEventBinding:
		return lookupKind(store.KindWorkflowEventBinding)
	}
	return kindInfo{}, fmt.Errorf("object of type %T: %w", obj, ErrInvalid)
}

// scope maps a namespace argument to the stored one: cluster-scoped kinds
// live in namespace "" whatever the caller passed.
func (k kindInfo) scope(ns string) string {
	if !k.namespaced {
		return ""
	}
	return ns
}

// key names an object in errors and logs.
func (k kindInfo) key(ns, name string) string {
	if ns == "" {
		return string(k.kind) + " " + name
	}
	return string(k.kind) + " " + ns + "/" + name
}

func typeMeta(k store.Kind) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: string(k)}
}

// newObject returns an empty object of kind k and a pointer to its spec.
func newObject(k store.Kind) (store.Object, any) {
	switch k {
	case store.KindWorkflow:
		o := &v1alpha1.Workflow{TypeMeta: typeMeta(k)}
		return o, &o.Spec
	case store.KindWorkflowTemplate:
		o := &v1alpha1.WorkflowTemplate{TypeMeta: typeMeta(k)}
		return o, &o.Spec
	case store.KindClusterWorkflowTemplate:
		o := &v1alpha1.ClusterWorkflowTemplate{TypeMeta: typeMeta(k)}
		return o, &o.Spec
	case store.KindCronWorkflow:
		o := &v1alpha1.CronWorkflow{TypeMeta: typeMeta(k)}
		return o, &o.Spec
	case store.KindWorkflowEventBinding:
		o := &v1alpha1.WorkflowEventBinding{TypeMeta: typeMeta(k)}
		return o, &o.Spec
	}
	return nil, nil // unreachable: kinds are checked by lookupKind first
}

// split returns the parts stored apart: the spec, and a shallow copy of the
// object with an empty spec and no status.nodes (the body row). phase is
// status.phase where the kind has one.
func split(obj store.Object) (spec, body any, phase string) {
	switch o := obj.(type) {
	case *v1alpha1.Workflow:
		c := *o
		c.TypeMeta = typeMeta(store.KindWorkflow)
		c.Spec = v1alpha1.WorkflowSpec{}
		c.Status.Nodes = nil
		return &o.Spec, &c, string(o.Status.Phase)
	case *v1alpha1.WorkflowTemplate:
		c := *o
		c.TypeMeta = typeMeta(store.KindWorkflowTemplate)
		c.Spec = v1alpha1.WorkflowSpec{}
		return &o.Spec, &c, ""
	case *v1alpha1.ClusterWorkflowTemplate:
		c := *o
		c.TypeMeta = typeMeta(store.KindClusterWorkflowTemplate)
		c.Spec = v1alpha1.WorkflowSpec{}
		return &o.Spec, &c, ""
	case *v1alpha1.CronWorkflow:
		c := *o
		c.TypeMeta = typeMeta(store.KindCronWorkflow)
		c.Spec = v1alpha1.CronWorkflowSpec{}
		return &o.Spec, &c, string(o.Status.Phase)
	case *v1alpha1.WorkflowEventBinding:
		c := *o
		c.TypeMeta = typeMeta(store.KindWorkflowEventBinding)
		c.Spec = v1alpha1.WorkflowEventBindingSpec{}
		return &o.Spec, &c, ""
	}
	return nil, nil, "" // unreachable: kindOf checked the type
}

// encodedSpec is an object's spec as stored.
type encodedSpec struct {
	json []byte
	hash []byte
}

func encodeSpec(obj store.Object) (encodedSpec, error) {
	spec, _, _ := split(obj)
	b, err := json.Marshal(spec)
	if err != nil {
		return encodedSpec{}, fmt.Errorf("encode spec: %w", err)
	}
	h := sha256.Sum256(b)
	return encodedSpec{json: b, hash: h[:]}, nil
}

// encodedBody is the object row as stored, apart from the spec.
type encodedBody struct {
	json   []byte
	phase  string
	labels any // string (JSON) or nil
	// unfinished (1, or 0 once a Workflow's status.finishedAt is set) and
	// orderAt (unix seconds of finishedAt, or else of creationTimestamp)
	// are the columns of store.OrderArgo.
	unfinished, orderAt int64
}

// encodeBody encodes obj after its metadata has been set for the write.
func encodeBody(obj store.Object) (encodedBody, error) {
	_, body, phase := split(obj)
	b, err := json.Marshal(body)
	if err != nil {
		return encodedBody{}, fmt.Errorf("encode object: %w", err)
	}
	e := encodedBody{json: b, phase: phase, unfinished: 1, orderAt: obj.GetCreationTimestamp().Unix()}
	if wf, ok := obj.(*v1alpha1.Workflow); ok && !wf.Status.FinishedAt.IsZero() {
		e.unfinished, e.orderAt = 0, wf.Status.FinishedAt.Unix()
	}
	if l := obj.GetLabels(); len(l) > 0 {
		lb, err := json.Marshal(l)
		if err != nil {
			return encodedBody{}, fmt.Errorf("encode labels: %w", err)
		}
		e.labels = string(lb)
	}
	return e, nil
}

// decode rebuilds an object from its row. The columns are the authority for
// resourceVersion and generation. A nil spec is left empty.
func decode(k kindInfo, body, spec []byte, rv, generation int64) (store.Object, error) {
	obj, specPtr := newObject(k.kind)
	if err := json.Unmarshal(body, obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", k.kind, err)
	}
	if spec != nil { // nil: a projection, whose body holds what it has of the spec
		if err := json.Unmarshal(spec, specPtr); err != nil {
			return nil, fmt.Errorf("decode %s spec: %w", k.kind, err)
		}
	}
	obj.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(string(k.kind)))
	obj.SetResourceVersion(formatRV(rv))
	obj.SetGeneration(generation)
	return obj, nil
}

// watchCopy is the object an event carries: a deep copy, and for a Workflow
// one without status.nodes (like List).
func watchCopy(k kindInfo, obj store.Object) store.Object {
	var c store.Object
	if wf, ok := obj.(*v1alpha1.Workflow); ok {
		shallow := *wf
		shallow.Status.Nodes = nil
		c = shallow.DeepCopy()
	} else if dc, ok := obj.DeepCopyObject().(store.Object); ok {
		c = dc
	} else {
		return obj // unreachable: every kind's DeepCopyObject returns its own type
	}
	c.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(string(k.kind)))
	return c
}
