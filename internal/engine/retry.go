package engine

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// maxAttemptsPerPass bounds how many attempts one pass creates for one
// Retry node when attempts fail at once (a template error, say); the next
// pass, requested at once, carries on.
const maxAttemptsPerPass = 32

// executeRetry runs a template that has a retryStrategy: a Retry node whose
// children are the attempts R(0), R(1), ... (rules 7.1-7.8).
func (r *pass) executeRetry(in invocation, existing *v1alpha1.NodeStatus, rs *v1alpha1.RetryStrategy, opts execOpts) (outcome, error) {
	var retry v1alpha1.NodeStatus
	if existing != nil {
		retry = *existing
	} else {
		n, ok := r.newNode(nodeInit{name: in.name, typ: v1alpha1.NodeTypeRetry, h: in.h, scope: in.scope,
			boundaryID: opts.boundaryID, phase: v1alpha1.NodeRunning, flag: copyFlag(opts.flag), inputs: in.inputs})
		if !ok {
			return outcome{hold: holdNodeLimit}, nil
		}
		retry = n
	}
	strategy, err := substitute(in.v, rs, expr.Lenient)
	if err != nil {
		return outcome{node: r.markError(retry.ID, err)}, err
	}
	for i := 0; i < maxAttemptsPerPass; i++ {
		o, more, err := r.retryStep(in, retry.ID, strategy, opts)
		if !more {
			return o, err
		}
	}
	r.again()
	return outcome{node: r.nodes[retry.ID]}, nil
}

// retryStep decides on the last attempt and runs (or creates) the next one.
// more is true when an attempt finished during this call, so the Retry node
// must be looked at again in this pass.
func (r *pass) retryStep(in invocation, retryID string, rs *v1alpha1.RetryStrategy, opts execOpts) (o outcome, more bool, err error) {
	cont, err := r.processRetries(retryID, rs, &opts)
	retry := r.nodes[retryID]
	if err != nil {
		return outcome{node: r.markError(retryID, err)}, false, err
	}
	ids, last := r.attempts(retry)
	if fulfilled(retry) {
		if last != nil && retry.Phase.Fulfilled() {
			retry.Outputs = last.Outputs.DeepCopy()
			r.put(retry)
		}
		return outcome{node: retry}, false, nil
	}
	if !cont {
		return outcome{node: retry}, false, nil
	}
	num := len(ids)
	var prev *v1alpha1.NodeStatus
	name := fmt.Sprintf("%s(%d)", in.name, num)
	if last != nil && !fulfilled(*last) {
		num, name = len(ids)-1, last.Name
		if len(ids) > 1 {
			p := r.nodes[ids[len(ids)-2]]
			prev = &p
		}
	} else {
		if limit, ok := limitValue(r.spec.Parallelism); ok && r.workflowActivePods(r.nodes) >= limit {
			return outcome{node: retry, hold: holdParallelism}, false, nil // a new attempt waits for a free slot (rule 10.1)
		}
		prev = last
		r.addChild(retryID, r.id(name))
	}
	attempt := in
	attempt.name = name
	attempt.v = r.attemptVars(in, name, num, prev)
	aopts := opts
	aopts.flag = &v1alpha1.NodeFlag{Hooked: opts.flag != nil && opts.flag.Hooked, Retried: true}
	o, err = r.dispatch(attempt, aopts)
	if o.hold != holdNone || ((err != nil || o.timeout) && !retriesErrors(rs)) {
		return o, false, err
	}
	if o.node.ID == "" || !fulfilled(o.node) {
		return outcome{node: r.nodes[retryID]}, false, nil
	}
	return outcome{}, true, nil
}

func copyFlag(f *v1alpha1.NodeFlag) *v1alpha1.NodeFlag {
	if f == nil {
		return nil
	}
	c := *f
	return &c
}

// retriesErrors reports whether the policy retries an attempt that errored
// while it was being created (rule 7.9).
func retriesErrors(rs *v1alpha1.RetryStrategy) bool {
	switch policyOf(rs) {
	case v1alpha1.RetryPolicyAlways, v1alpha1.RetryPolicyOnError, v1alpha1.RetryPolicyOnTransientError:
		return true
	}
	return false
}

func policyOf(rs *v1alpha1.RetryStrategy) v1alpha1.RetryPolicy {
	if rs.RetryPolicy != "" {
		return rs.RetryPolicy
	}
	if rs.Expression != "" {
		return v1alpha1.RetryPolicyAlways
	}
	return v1alpha1.RetryPolicyOnFailure
}

// attemptVars are the variables of attempt num (rule 7.7): retries,
// lastRetry.* from the previous attempt, and the attempt's pod.name.
func (r *pass) attemptVars(in invocation, name string, num int, prev *v1alpha1.NodeStatus) *vars {
	v := r.newVars(in.v)
	v.set("retries", strconv.Itoa(num))
	exitCode, duration, status, message := "0", "0", "", ""
	if prev != nil {
		if prev.Outputs != nil && prev.Outputs.ExitCode != nil {
			exitCode = *prev.Outputs.ExitCode
		}
		status, message = string(prev.Phase), prev.Message
		duration = fmt.Sprint(nodeDuration(*prev, r.now).Seconds())
	}
	v.set("lastRetry.exitCode", exitCode)
	v.set("lastRetry.duration", duration)
	v.set("lastRetry.status", status)
	v.set("lastRetry.message", message)
	if isLeafTemplate(in.tmpl) {
		v.set("pod.name", podName(r.wf.Name, name, in.tmpl.Name))
	}
	return v
}

func nodeDuration(n v1alpha1.NodeStatus, now time.Time) time.Duration {
	end := now
	if !n.FinishedAt.IsZero() {
		end = n.FinishedAt.Time
	}
	return end.Sub(n.StartedAt.Time)
}

// processRetries settles the Retry node from its last attempt, in the order
// of rule 7.4. It returns false when no new attempt may start this pass
// (backing off, or the Retry node is done).
func (r *pass) processRetries(id string, rs *v1alpha1.RetryStrategy, opts *execOpts) (bool, error) {
	node := r.nodes[id]
	if fulfilled(node) {
		return true, nil
	}
	ids, last := r.attempts(node)
	if last == nil {
		return true, nil
	}
	if !last.Phase.Fulfilled() {
		if isDaemoned(*last) && !isDaemoned(node) {
			yes := true
			node.Daemoned = &yes
			r.put(node)
			r.setPhase(id, last.Phase)
		}
		return true, nil
	}
	if !last.Phase.FailedOrError() {
		node.Outputs = last.Outputs.DeepCopy()
		r.put(node)
		r.setPhase(id, v1alpha1.NodeSucceeded)
		return true, nil
	}
	if r.shutdown != "" {
		r.setPhase(id, last.Phase, fmt.Sprintf("Stopped with strategy '%s'", r.shutdown))
		return true, nil
	}
	if r.pastDeadline {
		r.setPhase(id, last.Phase, fmt.Sprintf("retry exceeded workflow deadline %s", r.deadline))
		return true, nil
	}
	if rs.Backoff != nil {
		if done, wait, err := r.backoff(id, ids, *last, rs, opts); err != nil || done || wait {
			return !wait, err
		}
	}
	return r.retryPolicy(id, ids, *last, rs)
}

// retryPolicy applies the policy, the limit and the expression (rules 7.2,
// 7.3, 7.6).
func (r *pass) retryPolicy(id string, ids []string, last v1alpha1.NodeStatus, rs *v1alpha1.RetryStrategy) (bool, error) {
	onFailed, onError := false, false
	switch p := policyOf(rs); p {
	case v1alpha1.RetryPolicyAlways:
		onFailed, onError = true, true
	case v1alpha1.RetryPolicyOnError:
		onError = true
	case v1alpha1.RetryPolicyOnFailure:
		onFailed = true
	case v1alpha1.RetryPolicyOnTransientError:
		if last.Phase.FailedOrError() && r.isTransient(last.Message) {
			onFailed, onError = true, true
		}
	default:
		return false, fmt.Errorf("%s is not a valid RetryPolicy", p)
	}
	failed := last.Phase == v1alpha1.NodeFailed || (isDaemoned(last) && last.Phase == v1alpha1.NodeSucceeded)
	if (failed && !onFailed) || (last.Phase == v1alpha1.NodeError && !onError) {
		r.setPhase(id, last.Phase, last.Message)
		return true, nil
	}
	if rs.Limit != nil {
		limit, err := intOrStringInt(rs.Limit)
		if err != nil {
			return false, fmt.Errorf("invalid retryStrategy.limit: %w", err)
		}
		if len(ids) > limit {
			r.setPhase(id, last.Phase, "No more retries left")
			return true, nil
		}
	}
	if rs.Expression != "" {
		ok, err := r.lim.Expression.EvalBool(rs.Expression, retryEnv(ids, last, r.now))
		if err != nil {
			return false, err
		}
		if !ok {
			r.setPhase(id, last.Phase, "retryStrategy.expression evaluated to false")
			return true, nil
		}
	}
	return true, nil
}

// retryEnv is the only scope of retryStrategy.expression (rule 7.6).
func retryEnv(ids []string, last v1alpha1.NodeStatus, now time.Time) map[string]any {
	exitCode := "-1"
	if last.Outputs != nil && last.Outputs.ExitCode != nil {
		exitCode = *last.Outputs.ExitCode
	}
	return map[string]any{
		"retries": strconv.Itoa(len(ids) - 1),
		"lastRetry": map[string]any{
			"exitCode": exitCode,
			"status":   string(last.Phase),
			"duration": fmt.Sprint(nodeDuration(last, now).Seconds()),
			"message":  last.Message,
		},
	}
}

// backoff applies retryStrategy.backoff (rule 7.5). done means the Retry
// node is settled; wait means the next attempt must wait.
func (r *pass) backoff(id string, ids []string, last v1alpha1.NodeStatus, rs *v1alpha1.RetryStrategy, opts *execOpts) (done, wait bool, err error) {
	b := rs.Backoff
	var maxDeadline time.Time
	if b.MaxDuration != "" {
		d, err := parseStringDuration(b.MaxDuration)
		if err != nil {
			return false, false, fmt.Errorf("invalid backoff.maxDuration: %w", err)
		}
		first := r.nodes[ids[0]]
		maxDeadline = first.StartedAt.Add(d)
		if r.now.After(maxDeadline) {
			r.setPhase(id, last.Phase, "Max duration limit exceeded")
			return true, false, nil
		}
	}
	if b.Duration == "" {
		return false, false, errors.New("no base duration specified for retryStrategy")
	}
	delay, err := backoffWait(b, len(ids))
	if err != nil {
		return false, false, err
	}
	until := last.FinishedAt.Add(delay)
	if !maxDeadline.IsZero() && until.After(maxDeadline) {
		r.setPhase(id, last.Phase, "Backoff would exceed max duration limit")
		return true, false, nil
	}
	if rs.Limit != nil {
		limit, lerr := intOrStringInt(rs.Limit)
		if lerr == nil && r.now.Before(until) && len(ids) <= limit {
			r.setPhase(id, v1alpha1.NodeRunning, "Backoff for "+humanizeDuration(delay))
			r.wake(until)
			return false, true, nil
		}
	}
	opts.execDeadline = maxDeadline
	r.setPhase(id, v1alpha1.NodeRunning, "")
	return false, false, nil
}

// backoffWait is duration × factor^(attempts−1), clamped to cap.
func backoffWait(b *v1alpha1.Backoff, attempts int) (time.Duration, error) {
	base, err := parseStringDuration(b.Duration)
	if err != nil {
		return 0, fmt.Errorf("invalid backoff.duration: %w", err)
	}
	wait := base
	if b.Factor != nil {
		f, err := intOrStringInt(b.Factor)
		if err != nil {
			return 0, fmt.Errorf("invalid backoff.factor: %w", err)
		}
		if f > 0 {
			wait = base * time.Duration(math.Pow(float64(f), float64(attempts-1)))
		}
	}
	if b.Cap != "" {
		c, err := parseStringDuration(b.Cap)
		if err != nil {
			return 0, fmt.Errorf("invalid backoff.cap: %w", err)
		}
		if wait > c {
			wait = c
		}
	}
	return wait, nil
}

// parseStringDuration reads "30" as seconds and anything else as a Go
// duration (wfv1.ParseStringToDuration).
func parseStringDuration(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(s)
}

func intOrStringInt(v *intstr.IntOrString) (int, error) {
	if v.Type == intstr.String {
		return strconv.Atoi(strings.TrimSpace(v.StrVal))
	}
	return v.IntValue(), nil
}

// humanizeDuration renders a wait as Argo's humanize.Duration does:
// "30 seconds", "2 minutes 5 seconds", "1 hours 0 minutes 0 seconds".
func humanizeDuration(d time.Duration) string {
	s := int64(d.Seconds())
	switch {
	case d.Seconds() < 60:
		return fmt.Sprintf("%d seconds", s)
	case d.Minutes() < 60:
		return fmt.Sprintf("%d minutes %d seconds", s/60, s%60)
	case d.Hours() < 24:
		return fmt.Sprintf("%d hours %d minutes %d seconds", s/3600, (s/60)%60, s%60)
	}
	return fmt.Sprintf("%d days %d hours %d minutes %d seconds", s/86400, (s/3600)%24, (s/60)%60, s%60)
}

// defaultTransientPattern matches the messages of failures that usually go
// away on a second try (network and API hiccups, evictions, lost pods).
const defaultTransientPattern = `(?i)(connection reset|connection refused|i/o timeout|broken pipe|` +
	`tls handshake timeout|no such host|temporarily unavailable|too many requests|` +
	`service unavailable|timeout awaiting response|unexpected eof|\beof\b|pod deleted|evicted|` +
	`the object has been modified|etcdserver: leader changed)`

// isTransient reports whether an attempt's message names a transient error
// (OnTransientError): the default pattern or Snapshot.TransientErrorPattern.
func (f *facts) isTransient(msg string) bool {
	if f.transient == nil {
		pattern := defaultTransientPattern
		if f.pattern != "" {
			pattern = defaultTransientPattern + "|(?:" + f.pattern + ")"
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			re = regexp.MustCompile(defaultTransientPattern)
		}
		f.transient = re
	}
	return f.transient.MatchString(msg)
}
