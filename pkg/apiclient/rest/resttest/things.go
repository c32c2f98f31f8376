package resttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type Thing struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     string            `json:"spec,omitempty"`
}

type GetThingRequest struct {
	Namespace  string             `json:"namespace,omitempty" protobuf:"bytes,1,opt,name=namespace,proto3"`
	Name       string             `json:"name,omitempty" protobuf:"bytes,2,opt,name=name,proto3"`
	GetOptions *metav1.GetOptions `json:"getOptions,omitempty" protobuf:"bytes,3,opt,name=get_options,json=getOptions,proto3"`
	Fields     string             `json:"fields,omitempty" protobuf:"bytes,4,opt,name=fields,proto3"`
}

// Level parses itself from text (encoding.TextUnmarshaler).
type Level int

func (l *Level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return errors.New("want low or high")
	}
	return nil
}

func (l Level) MarshalText() ([]byte, error) {
	switch l {
	case 1:
		return []byte("low"), nil
	case 2:
		return []byte("high"), nil
	}
	return nil, fmt.Errorf("level %d has no name", int(l))
}

type Paging struct {
	Extra string `json:"extra,omitempty"`
}

type ListThingsRequest struct {
	Namespace   string                 `json:"namespace,omitempty" protobuf:"bytes,1,opt,name=namespace,proto3"`
	ListOptions *metav1.ListOptions    `json:"listOptions,omitempty" protobuf:"bytes,2,opt,name=list_options,json=listOptions,proto3"`
	LogOptions  *corev1.PodLogOptions  `json:"logOptions,omitempty" protobuf:"bytes,3,opt,name=log_options,json=logOptions,proto3"`
	Fields      string                 `json:"fields,omitempty"`
	Flag        bool                   `json:"flag,omitempty"`
	FlagPtr     *bool                  `json:"flagPtr,omitempty"`
	Small       int8                   `json:"small,omitempty"`
	Count       int32                  `json:"count,omitempty"`
	Port        uint16                 `json:"port,omitempty"`
	Big         uint64                 `json:"big,omitempty"`
	Ratio       float64                `json:"ratio,omitempty"`
	Ratio32     float32                `json:"ratio32,omitempty"`
	IntPtr      *int64                 `json:"intPtr,omitempty"`
	Tags        []string               `json:"tags,omitempty"`
	Counts      []int32                `json:"counts,omitempty"`
	Phase       corev1.PodPhase        `json:"phase,omitempty"`
	Since       metav1.Time            `json:"since,omitzero"`
	Level       Level                  `json:"level,omitempty"`
	LevelPtr    *Level                 `json:"levelPtr,omitempty"`
	Raw         []byte                 `json:"raw,omitempty"`
	Paging      `json:",inline"`       // flattened: "extra"
	Labels      map[string]string      `json:"labels,omitempty"`
	Ignored     string                 `json:"-"`
	DeleteOpts  *metav1.DeleteOptions  `json:"deleteOptions,omitempty"`
	Selector    *metav1.LabelSelector  `json:"selector,omitempty"`
	Conditions  []metav1.Condition     `json:"conditions,omitempty"`
	Annotations map[string]interface{} `json:"annotations,omitempty"`
}

type DeleteThingRequest struct {
	Namespace     string                `json:"namespace,omitempty"`
	Name          string                `json:"name,omitempty"`
	DeleteOptions *metav1.DeleteOptions `json:"deleteOptions,omitempty" protobuf:"bytes,3,opt,name=delete_options,json=deleteOptions,proto3"`
	Force         bool                  `json:"force,omitempty"`
}

type CreateThingRequest struct {
	Namespace string `json:"namespace,omitempty"`
	Thing     *Thing `json:"thing,omitempty"`
	Dry       bool   `json:"dry,omitempty"`
}

type UpdateThingRequest struct {
	Namespace string `json:"namespace,omitempty"`
	Thing     *Thing `json:"thing,omitempty" protobuf:"bytes,2,opt,name=the_thing,json=thing,proto3"`
}

// FailRequest asks for an error with this code.
type FailRequest struct {
	Code uint32 `json:"code,omitempty"`
}

// FullList is a list request with every kind of query parameter set.
func FullList() *ListThingsRequest {
	fg := metav1.DeletePropagationForeground
	return &ListThingsRequest{
		Namespace:   "ns/1 x",
		ListOptions: &metav1.ListOptions{LabelSelector: "app in (a, b),!c", Limit: 5, TimeoutSeconds: PtrTo[int64](0)},
		LogOptions: &corev1.PodLogOptions{Container: "main", Follow: true, TailLines: PtrTo[int64](-1),
			SinceTime: &metav1.Time{Time: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)}},
		Fields: "items.metadata.name", Flag: true, FlagPtr: PtrTo(false), Small: -3, Count: 1 << 30, Port: 8080,
		Big: math.MaxUint64, Ratio: 0.1, Ratio32: 2.5, IntPtr: PtrTo[int64](0), Tags: []string{"x", "", "y+z"},
		Counts: []int32{1, -2}, Phase: corev1.PodFailed, Since: metav1.Time{Time: time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)},
		Level: 2, LevelPtr: PtrTo[Level](1), Raw: []byte{0, 0xff}, Paging: Paging{Extra: "e&e=e"},
		DeleteOpts: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: PtrTo(types.UID("u"))},
			PropagationPolicy: &fg, DryRun: []string{"All"}},
	}
}

// PtrTo is a pointer to a copy of v.
func PtrTo[T any](v T) *T { return &v }

// SameJSON fails t when got and want differ as JSON.
func SameJSON(t testing.TB, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(g) != string(w) {
		t.Errorf("got  %s\nwant %s", g, w)
	}
}
