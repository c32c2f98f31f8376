package apiclient

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestStructRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   v1alpha1.Workflow
	}{
		{"empty", v1alpha1.Workflow{}},
		{"full", v1alpha1.Workflow{
			ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "argo", Generation: 7, Labels: map[string]string{"a": "b"}},
			Spec:       v1alpha1.WorkflowSpec{Entrypoint: "main", Templates: []v1alpha1.Template{{Name: "main"}}},
			Status:     v1alpha1.WorkflowStatus{Phase: v1alpha1.WorkflowSucceeded, Progress: "2/2"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ToStruct(&tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var out v1alpha1.Workflow
			if err := FromStruct(s, &out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.in, out); diff != "" {
				t.Errorf("(-in +out)\n%s", diff)
			}
		})
	}
}
