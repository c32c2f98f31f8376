package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// RetryPolicy says which failures are retried.
type RetryPolicy string

// Retry policies.
const (
	RetryPolicyAlways           RetryPolicy = "Always"
	RetryPolicyOnFailure        RetryPolicy = "OnFailure"
	RetryPolicyOnError          RetryPolicy = "OnError"
	RetryPolicyOnTransientError RetryPolicy = "OnTransientError"
)

// RetryStrategy retries a failed template.
type RetryStrategy struct {
	// Limit is the most retries after the first attempt (int or string).
	Limit *intstr.IntOrString `json:"limit,omitempty" protobuf:"bytes,1,opt,name=limit"`
	// RetryPolicy says which failures are retried (default OnFailure, or
	// Always when Expression is set).
	RetryPolicy RetryPolicy `json:"retryPolicy,omitempty" protobuf:"bytes,2,opt,name=retryPolicy"`
	// Backoff spaces the attempts out.
	Backoff *Backoff `json:"backoff,omitempty" protobuf:"bytes,3,opt,name=backoff"`
	// Affinity steers retries away from the nodes that failed.
	Affinity *RetryAffinity `json:"affinity,omitempty" protobuf:"bytes,4,opt,name=affinity"`
	// Expression decides, over lastRetry.*, whether to retry.
	Expression string `json:"expression,omitempty" protobuf:"bytes,5,opt,name=expression"`
}

// Backoff spaces retry attempts out.
type Backoff struct {
	// Duration is the first wait (seconds, or a duration such as "2m").
	Duration string `json:"duration,omitempty" protobuf:"bytes,1,opt,name=duration"`
	// Factor multiplies the wait after each attempt.
	Factor *intstr.IntOrString `json:"factor,omitempty" protobuf:"bytes,2,opt,name=factor"`
	// MaxDuration bounds the total time spent retrying.
	MaxDuration string `json:"maxDuration,omitempty" protobuf:"bytes,3,opt,name=maxDuration"`
	// Cap bounds a single wait (seconds, or a duration).
	Cap string `json:"cap,omitempty" protobuf:"bytes,4,opt,name=cap"`
}

// RetryAffinity steers retried pods.
type RetryAffinity struct {
	// NodeAntiAffinity avoids the hosts of earlier attempts.
	NodeAntiAffinity *RetryNodeAntiAffinity `json:"nodeAntiAffinity,omitempty" protobuf:"bytes,1,opt,name=nodeAntiAffinity"`
}

// RetryNodeAntiAffinity is the presence flag for node anti-affinity.
type RetryNodeAntiAffinity struct{}

// Memoize caches a template's outputs by key.
type Memoize struct {
	// Key identifies a cached result.
	Key string `json:"key" protobuf:"bytes,1,opt,name=key"`
	// Cache says where results are kept.
	Cache *Cache `json:"cache,omitempty" protobuf:"bytes,2,opt,name=cache"`
	// MaxAge is the oldest entry that still counts as a hit (a duration).
	MaxAge string `json:"maxAge" protobuf:"bytes,3,opt,name=maxAge"`
}

// Cache is a memoization cache.
type Cache struct {
	// ConfigMap holds the cache entries.
	ConfigMap *apiv1.LocalObjectReference `json:"configMap,omitempty" protobuf:"bytes,1,opt,name=configMap"`
}

// Synchronization lists the semaphores and mutexes to hold while running.
type Synchronization struct {
	// Semaphore is the legacy single-semaphore form of Semaphores.
	Semaphore *SemaphoreRef `json:"semaphore,omitempty" protobuf:"bytes,1,opt,name=semaphore"`
	// Mutex is the legacy single-mutex form of Mutexes.
	Mutex *Mutex `json:"mutex,omitempty" protobuf:"bytes,2,opt,name=mutex"`
	// Semaphores are counting locks.
	Semaphores []*SemaphoreRef `json:"semaphores,omitempty" protobuf:"bytes,3,rep,name=semaphores"`
	// Mutexes are exclusive locks.
	Mutexes []*Mutex `json:"mutexes,omitempty" protobuf:"bytes,4,rep,name=mutexes"`
}

// SemaphoreRef names a semaphore whose limit comes from a ConfigMap key or
// from the synchronization database.
type SemaphoreRef struct {
	// ConfigMapKeyRef holds the limit.
	ConfigMapKeyRef *apiv1.ConfigMapKeySelector `json:"configMapKeyRef,omitempty" protobuf:"bytes,1,opt,name=configMapKeyRef"`
	// Namespace of the ConfigMap (default: the workflow's).
	Namespace string `json:"namespace,omitempty" protobuf:"bytes,2,opt,name=namespace"`
	// Database keeps the semaphore in the synchronization database.
	Database *SyncDatabaseRef `json:"database,omitempty" protobuf:"bytes,3,opt,name=database"`
}

// SyncDatabaseRef names a semaphore kept in the synchronization database.
type SyncDatabaseRef struct {
	Key string `json:"key" protobuf:"bytes,1,opt,name=key"`
}

// Mutex is an exclusive lock.
type Mutex struct {
	// Name of the mutex.
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Namespace the mutex belongs to (default: the workflow's).
	Namespace string `json:"namespace,omitempty" protobuf:"bytes,2,opt,name=namespace"`
	// Database keeps the mutex in the synchronization database.
	Database bool `json:"database,omitempty" protobuf:"varint,3,opt,name=database"`
}

// Metrics are custom Prometheus metrics.
type Metrics struct {
	Prometheus []*Prometheus `json:"prometheus,omitempty" protobuf:"bytes,1,rep,name=prometheus"`
}

// Prometheus is one custom metric: a gauge, a histogram or a counter.
type Prometheus struct {
	// Name of the metric.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Labels of the metric.
	Labels []*MetricLabel `json:"labels,omitempty" protobuf:"bytes,2,rep,name=labels"`
	// Help text of the metric.
	Help string `json:"help" protobuf:"bytes,3,opt,name=help"`
	// When emits the metric only if the condition holds.
	When      string     `json:"when,omitempty" protobuf:"bytes,4,opt,name=when"`
	Gauge     *Gauge     `json:"gauge,omitempty" protobuf:"bytes,5,opt,name=gauge"`
	Histogram *Histogram `json:"histogram,omitempty" protobuf:"bytes,6,opt,name=histogram"`
	Counter   *Counter   `json:"counter,omitempty" protobuf:"bytes,7,opt,name=counter"`
}

// MetricLabel is one label of a metric.
type MetricLabel struct {
	Key   string `json:"key" protobuf:"bytes,1,opt,name=key"`
	Value string `json:"value" protobuf:"bytes,2,opt,name=value"`
}

// GaugeOperation says how a gauge's value is applied.
type GaugeOperation string

// Gauge operations.
const (
	GaugeOperationSet GaugeOperation = "Set"
	GaugeOperationAdd GaugeOperation = "Add"
	GaugeOperationSub GaugeOperation = "Sub"
)

// Gauge is a gauge metric.
type Gauge struct {
	// Value is the value (may use template tags).
	Value string `json:"value" protobuf:"bytes,1,opt,name=value"`
	// Realtime updates the gauge while the node runs.
	Realtime *bool `json:"realtime,omitempty" protobuf:"varint,2,opt,name=realtime"`
	// Operation applies the value (default Set).
	Operation GaugeOperation `json:"operation,omitempty" protobuf:"bytes,3,opt,name=operation"`
}

// Histogram is a histogram metric.
type Histogram struct {
	// Value is the observed value (may use template tags).
	Value string `json:"value" protobuf:"bytes,3,opt,name=value"`
	// Buckets are the bucket bounds.
	Buckets []Amount `json:"buckets,omitempty" protobuf:"bytes,4,rep,name=buckets"`
}

// Counter is a counter metric.
type Counter struct {
	// Value is the increment (may use template tags).
	Value string `json:"value" protobuf:"bytes,1,opt,name=value"`
}

// Amount is a JSON number kept as written (used for histogram buckets).
//
// +kubebuilder:validation:Type=number
type Amount struct {
	Value json.Number `json:"-" protobuf:"bytes,1,opt,name=value"`
}

// MarshalJSON writes the number.
func (a Amount) MarshalJSON() ([]byte, error) {
	if a.Value == "" {
		return []byte("0"), nil
	}
	return []byte(a.Value), nil
}

// UnmarshalJSON reads a JSON number.
func (a *Amount) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var n json.Number
	if err := dec.Decode(&n); err != nil {
		return fmt.Errorf("amount must be a number: %w", err)
	}
	a.Value = n
	return nil
}

// Float64 returns the amount as a float.
func (a Amount) Float64() (float64, error) {
	return a.Value.Float64()
}
