package kubeauth

import (
	"context"
	"fmt"

	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/internal/server/auth"
)

// Group is the API group of Argo's kinds.
const Group = "argoproj.io"

// Authorize implements auth.Authorizer. A server-mode identity has the
// server's own rights and may do everything. Otherwise each of the checks
// the attributes map to (see checks) is a SelfSubjectAccessReview sent with
// the caller's credential, and all must be allowed; a refusal is
// auth.Forbidden. Decisions are cached for DecisionTTL by the credential's
// SHA-256 and the attributes, so a removed RoleBinding still allows for up
// to 5 s (the default).
func (k *Kube) Authorize(ctx context.Context, id *auth.Identity, a auth.Attributes) error {
	if id != nil && id.Mode == auth.ModeServer {
		return nil
	}
	if id == nil || id.Credential == "" {
		return auth.Unauthenticated("no Kubernetes credential to authorize the request with")
	}
	cred, err := parseCredential(id.Credential)
	if err != nil {
		return err
	}
	key := decisionKey{cred: cred.hash(), attr: a}
	allowed, ok := k.decisions.get(key)
	if !ok {
		if allowed, err = k.allowed(ctx, cred, checks(a)); err != nil {
			return err
		}
		k.decisions.put(key, allowed)
	}
	if !allowed {
		return auth.Forbidden(id.Subject, a)
	}
	return nil
}

// allowed asks the apiserver about each check in turn, and stops at the
// first refusal.
func (k *Kube) allowed(ctx context.Context, cred credential, rs []authzv1.ResourceAttributes) (bool, error) {
	rctx, cancel := context.WithTimeout(withCredential(ctx, cred), k.opts.Timeout)
	defer cancel()
	for i := range rs {
		ssar := &authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &rs[i]}}
		got, err := k.authz.SelfSubjectAccessReviews().Create(rctx, ssar, metav1.CreateOptions{})
		switch {
		case apierrors.IsUnauthorized(err):
			return false, auth.Unauthenticated("the Kubernetes API server refused it")
		case err != nil:
			return false, fmt.Errorf("kubeauth: SelfSubjectAccessReview (%s %s in %q): %w",
				rs[i].Verb, resourceName(rs[i]), rs[i].Namespace, err)
		}
		if !got.Status.Allowed || got.Status.Denied {
			return false, nil
		}
	}
	return true, nil
}

func resourceName(r authzv1.ResourceAttributes) string {
	s := r.Resource
	if r.Subresource != "" {
		s += "/" + r.Subresource
	}
	if r.Group != "" {
		s += "." + r.Group
	}
	return s
}

// checks maps a request's attributes to the Kubernetes resource attributes
// the caller must be allowed, as argo-server's own calls with the caller's
// client need them (argoproj.io unless said otherwise):
//
//	workflows, workflowtemplates,        the verb, in the namespace
//	cronworkflows, workfloweventbindings
//	clusterworkflowtemplates             the verb, cluster-scoped (no namespace)
//	archivedworkflows                    the verb on workflows (Argo checks the archive
//	                                     against workflows); retry and resubmit are a
//	                                     create of workflows, as they make a new one
//	events, create (ReceiveEvent)        list workfloweventbindings, get
//	                                     workflowtemplates and create workflows: the
//	                                     calls argo-server makes with the caller's
//	                                     client to receive an event and submit its
//	                                     bindings' templates (Argo's documented
//	                                     submit-workflow-template Role)
//	events, another verb (WatchEvents)   the verb on events (group ""), the
//	                                     Kubernetes events argo-server watches
//	synclimits                           the verb on configmaps (group "")
//	logs                                 get workflows (by name), and get pods/log
//	                                     (group "")
//
// Verbs: get, list, watch, create, update, patch and delete as they are;
// the workflow actions retry, resume, suspend, stop, terminate and set are
// an update of the workflow; resubmit is a create, as argo-server makes the
// new workflow with the caller's client. Any other verb or resource is
// asked as it is, which only a wildcard rule allows. Namespace "" (all
// namespaces) asks with no namespace, which only a ClusterRole allows. The
// name goes in only for get, update, patch and delete, so that a Role's
// resourceNames apply as they would to argo-server's call.
func checks(a auth.Attributes) []authzv1.ResourceAttributes {
	ns := a.Namespace
	if a.Cluster {
		ns = ""
	}
	verb := kubeVerb(a.Verb)
	switch a.Resource {
	case "clusterworkflowtemplates":
		return []authzv1.ResourceAttributes{argo(verb, a.Resource, "", a.Name)}
	case "archivedworkflows":
		if a.Verb == "retry" || a.Verb == "resubmit" {
			verb = "create"
		}
		return []authzv1.ResourceAttributes{argo(verb, "workflows", ns, a.Name)}
	case "events":
		if a.Verb != "create" {
			// WatchEvents: the workflow's Kubernetes events.
			return []authzv1.ResourceAttributes{{Verb: verb, Group: "", Resource: "events", Namespace: ns}}
		}
		return []authzv1.ResourceAttributes{
			argo("list", "workfloweventbindings", ns, ""),
			argo("get", "workflowtemplates", ns, ""),
			argo("create", "workflows", ns, ""),
		}
	case "synclimits":
		// A ConfigMap key, as argo-server's sync service writes one (a
		// database limit is asked as the same right).
		return []authzv1.ResourceAttributes{{Verb: verb, Group: "", Resource: "configmaps", Namespace: ns, Name: a.Name}}
	case "logs":
		return []authzv1.ResourceAttributes{
			argo("get", "workflows", ns, a.Name),
			{Verb: "get", Group: "", Resource: "pods", Subresource: "log", Namespace: ns},
		}
	}
	return []authzv1.ResourceAttributes{argo(verb, a.Resource, ns, a.Name)}
}

// argo is a check on an argoproj.io resource.
func argo(verb, resource, ns, name string) authzv1.ResourceAttributes {
	switch verb {
	case "get", "update", "patch", "delete":
	default:
		name = ""
	}
	return authzv1.ResourceAttributes{Verb: verb, Group: Group, Resource: resource, Namespace: ns, Name: name}
}

// kubeVerb is the Kubernetes verb of a request's verb.
func kubeVerb(v string) string {
	switch v {
	case "retry", "resume", "suspend", "stop", "terminate", "set":
		return "update"
	case "resubmit":
		return "create"
	}
	return v
}
