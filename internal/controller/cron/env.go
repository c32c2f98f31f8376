package cron

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// cronVars are the cronworkflow.* variables (ARGO-FEATURES, cron-eval):
// name, namespace, labels, annotations, succeeded, failed and
// lastScheduledTime (a time.Time, or nil before the first run).
func cronVars(cw *v1alpha1.CronWorkflow) map[string]any {
	var last any
	if t := cw.Status.LastScheduledTime; t != nil {
		last = t.Time
	}
	return map[string]any{
		"name":              cw.Name,
		"namespace":         cw.Namespace,
		"labels":            stringMap(cw.Labels),
		"annotations":       stringMap(cw.Annotations),
		"succeeded":         cw.Status.Succeeded,
		"failed":            cw.Status.Failed,
		"lastScheduledTime": last,
	}
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// cronEnv is the environment of a stopStrategy expression: cronworkflow.*
// and, as Argo 3.6 documented them first, bare succeeded and failed.
func cronEnv(cw *v1alpha1.CronWorkflow) map[string]any {
	return map[string]any{
		"cronworkflow": cronVars(cw),
		"succeeded":    cw.Status.Succeeded,
		"failed":       cw.Status.Failed,
	}
}

// cronTagValues are the values a simple {{cronworkflow.x}} tag inserts.
func cronTagValues(cw *v1alpha1.CronWorkflow) map[string]string {
	out := map[string]string{
		"cronworkflow.name":      cw.Name,
		"cronworkflow.namespace": cw.Namespace,
		"cronworkflow.succeeded": strconv.FormatInt(cw.Status.Succeeded, 10),
		"cronworkflow.failed":    strconv.FormatInt(cw.Status.Failed, 10),
	}
	if t := cw.Status.LastScheduledTime; t != nil {
		out["cronworkflow.lastScheduledTime"] = t.Format(time.RFC3339)
	}
	for prefix, m := range map[string]map[string]string{"labels": cw.Labels, "annotations": cw.Annotations} {
		for k, v := range m {
			out["cronworkflow."+prefix+"."+k] = v
		}
		data, _ := json.Marshal(m)
		out["cronworkflow."+prefix+".json"] = string(data)
	}
	return out
}

// evalWhen evaluates spec.when: its tags are replaced ({{= }} expressions
// see cronworkflow.* and now(), which is the scheduler's clock), then the
// text is evaluated with govaluate, as Argo does. An empty when is true.
func evalWhen(cw *v1alpha1.CronWorkflow, now time.Time) (bool, error) {
	when := cw.Spec.When
	if strings.TrimSpace(when) == "" {
		return true, nil
	}
	values := cronTagValues(cw)
	env := map[string]any{"cronworkflow": cronVars(cw), "now": func() time.Time { return now }}
	var b strings.Builder
	pos := 0
	for _, t := range expr.Tags(when) {
		b.WriteString(when[pos:t.Start])
		pos = t.End
		if !t.Expr {
			v, ok := values[t.Body]
			if !ok {
				v = when[t.Start:t.End]
			}
			b.WriteString(v)
			continue
		}
		v, err := expr.Eval(t.Body, env)
		if err != nil {
			return false, err
		}
		switch v := v.(type) {
		case string:
			b.WriteString(v)
		default:
			data, err := json.Marshal(v)
			if err != nil {
				return false, fmt.Errorf("the value of {{=%s}}: %w", t.Body, err)
			}
			b.Write(data)
		}
	}
	b.WriteString(when[pos:])
	return expr.EvalWhen(b.String())
}
