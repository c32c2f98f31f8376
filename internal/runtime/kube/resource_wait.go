package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/jsonpath"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/runtime"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// maxManifest bounds a manifest read from an artifact.
const maxManifest = 8 << 20

// transientFor bounds the retries of an API call that keeps failing for a
// passing reason (a timeout, a dropped connection, an overloaded server).
const transientFor = 2 * time.Minute

// wait watches the object until a condition decides the run: the failure
// condition first, then the success condition. Without conditions, or
// after delete, it returns at once.
func (j *resJob) wait(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if j.action == "delete" || (j.success == nil && j.failure == nil) {
		return obj, nil
	}
	if done, err := j.check(obj); done {
		return obj, err
	}
	rv := obj.GetResourceVersion()
	for {
		if rv == "" { // the watch fell too far behind: read the object again
			cur, err := j.get(ctx)
			if err != nil {
				return nil, err
			}
			obj, rv = cur, cur.GetResourceVersion()
			if done, err := j.check(obj); done {
				return obj, err
			}
		}
		var w watch.Interface
		err := retryTransient(ctx, func() (err error) {
			w, err = j.client.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + j.name,
				ResourceVersion: rv, AllowWatchBookmarks: true})
			return err
		})
		if err != nil {
			return nil, j.describe("watch", err)
		}
		opened := time.Now()
		last, newRV, done, err := j.follow(ctx, w)
		w.Stop()
		if last != nil {
			obj = last
		}
		if done {
			return obj, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rv = newRV
		if time.Since(opened) < time.Second { // a watch that keeps ending at once
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Second):
			}
		}
	}
}

// follow reads a watch until a condition decides (done), the watch ends
// (the resourceVersion to go on from; "" when it expired) or ctx ends.
func (j *resJob) follow(ctx context.Context, w watch.Interface) (last *unstructured.Unstructured, rv string, done bool, err error) {
	for {
		select {
		case <-ctx.Done():
			return last, rv, false, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return last, rv, false, nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				o, isObj := ev.Object.(*unstructured.Unstructured)
				if !isObj {
					continue
				}
				last, rv = o, o.GetResourceVersion()
				if done, err := j.check(o); done {
					return last, rv, true, err
				}
			case watch.Bookmark:
				if o, isObj := ev.Object.(*unstructured.Unstructured); isObj {
					rv = o.GetResourceVersion()
				}
			case watch.Deleted:
				return last, rv, true, failed("%s %q was deleted while waiting for its success or failure condition",
					j.mapping.Resource.Resource, j.name)
			case watch.Error:
				if e := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(e) || apierrors.IsGone(e) {
					return last, "", false, nil
				}
				return last, rv, false, nil
			}
		}
	}
}

// get reads the object again.
func (j *resJob) get(ctx context.Context) (*unstructured.Unstructured, error) {
	var obj *unstructured.Unstructured
	err := retryTransient(ctx, func() (err error) {
		obj, err = j.client.Get(ctx, j.name, metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, failed("%s %q was deleted while waiting for its success or failure condition", j.mapping.Resource.Resource, j.name)
	}
	if err != nil {
		return nil, j.describe("get", err)
	}
	return obj, nil
}

// check applies the conditions: the failure condition wins; with only a
// failure condition, an object it does not hold for succeeds.
func (j *resJob) check(obj *unstructured.Unstructured) (bool, error) {
	if j.failure != nil {
		if ok, _ := j.failure.matches(obj.Object); ok {
			return true, failed("failure condition '%s' holds for %s %s", j.failure, j.mapping.Resource.Resource, nameOf(obj))
		}
	}
	if j.success == nil {
		return true, nil
	}
	ok, _ := j.success.matches(obj.Object)
	return ok, nil
}

// outputs are the template's output parameters, valueFrom.jsonPath read
// from obj (as kubectl get -o jsonpath: a missing key gives ""; an error
// takes valueFrom.default, else fails the run).
func outputs(tmpl *v1alpha1.Template, obj *unstructured.Unstructured) (*v1alpha1.Outputs, error) {
	if len(tmpl.Outputs.Parameters) == 0 {
		return nil, nil
	}
	out := make([]v1alpha1.Parameter, len(tmpl.Outputs.Parameters))
	for i, p := range tmpl.Outputs.Parameters {
		out[i] = *p.DeepCopy()
		if p.ValueFrom == nil || (p.ValueFrom.JSONPath == "" && p.ValueFrom.JQFilter == "") {
			continue
		}
		what, expr, eval := "jsonPath", p.ValueFrom.JSONPath, evalJSONPath
		if expr == "" {
			what, expr, eval = "jqFilter", p.ValueFrom.JQFilter, evalJQ
		}
		v, err := eval(expr, obj.Object)
		switch {
		case err == nil:
			out[i].Value = v1alpha1.AnyStringPtr(v)
		case p.ValueFrom.Default != nil:
			out[i].Value = v1alpha1.AnyStringPtr(p.ValueFrom.Default.String())
		default:
			return nil, failed("output parameter %q: %s %q: %v", p.Name, what, expr, err)
		}
	}
	return &v1alpha1.Outputs{Parameters: out}, nil
}

// evalJSONPath runs a kubectl JSONPath template ("{.metadata.name}"; a
// bare ".metadata.name" is taken as "{.metadata.name}") over obj.
func evalJSONPath(expr string, obj map[string]any) (string, error) {
	if !strings.Contains(expr, "{") {
		expr = "{" + expr + "}"
	}
	jp := jsonpath.New("output")
	jp.AllowMissingKeys(true)
	if err := jp.Parse(expr); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := jp.Execute(&buf, obj); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// manifest is the template's manifest, or the content of the input
// artifact manifestFrom.artifact names (unpacked when it is a tarball).
func (r *resources) manifest(ctx context.Context, run runtime.Run) (string, error) {
	tmpl := run.Template.Resource
	if tmpl.Manifest != "" || tmpl.ManifestFrom == nil || tmpl.ManifestFrom.Artifact == nil {
		if strings.TrimSpace(tmpl.Manifest) == "" {
			return "", failed("the resource template has no manifest (manifest or manifestFrom.artifact)")
		}
		return tmpl.Manifest, nil
	}
	want := tmpl.ManifestFrom.Artifact
	art := want.DeepCopy()
	for _, in := range run.Template.Inputs.Artifacts {
		if in.Name == want.Name && artifact.Kind(&in.ArtifactLocation) != "" {
			art = in.DeepCopy()
		}
	}
	if artifact.Kind(&art.ArtifactLocation) == "" {
		return "", failed("manifestFrom.artifact %q: no input artifact of that name has a location", want.Name)
	}
	drv, err := r.rt.cfg.Artifacts.For(&art.ArtifactLocation)
	if err != nil {
		return "", failed("manifestFrom.artifact %q: %v", want.Name, err)
	}
	dir, err := os.MkdirTemp("", "braid-manifest-")
	if err != nil {
		return "", fmt.Errorf("manifestFrom.artifact %q: %w", want.Name, err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "manifest")
	if err := drv.Load(artifact.WithNamespace(ctx, run.Namespace), art, path); err != nil {
		return "", failed("manifestFrom.artifact %q: %v", want.Name, err)
	}
	if artifact.IsTarGz(path) {
		f, err := os.Open(path)
		if err != nil {
			return "", fmt.Errorf("manifestFrom.artifact %q: %w", want.Name, err)
		}
		path = filepath.Join(dir, "unpacked")
		err = artifact.UnpackInput(f, path)
		f.Close()
		if err != nil {
			return "", failed("manifestFrom.artifact %q: %v", want.Name, err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("manifestFrom.artifact %q: %w", want.Name, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.IsDir() {
		return "", failed("manifestFrom.artifact %q: not a file", want.Name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return "", fmt.Errorf("manifestFrom.artifact %q: %w", want.Name, err)
	}
	if len(data) > maxManifest {
		return "", failed("manifestFrom.artifact %q: larger than %d bytes", want.Name, maxManifest)
	}
	return string(data), nil
}

// retryTransient calls fn until it succeeds, fails for good, ctx ends, or
// transientFor passes, backing off between tries.
func retryTransient(ctx context.Context, fn func() error) error {
	end := time.Now().Add(transientFor)
	wait := 250 * time.Millisecond
	for {
		err := fn()
		if err == nil || !isTransient(err) || time.Now().After(end) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// isTransient: the request may succeed if tried again.
func isTransient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err) {
		return true
	}
	var ue *url.Error
	return errors.As(err, &ue) || utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err)
}
