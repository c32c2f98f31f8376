package gateway

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/braidwf/braid/pkg/apiclient/rest"
	"github.com/braidwf/braid/pkg/apiclient/rest/resttest"
	. "github.com/braidwf/braid/pkg/apiclient/rest/resttest"
)

// TestEncodeThroughTheMux sends what Encode makes to the real mux.
func TestEncodeThroughTheMux(t *testing.T) {
	base := serve(t, testMux(t))
	for _, c := range []struct {
		verb, pattern string
		in, out       any
	}{
		{"GET", "/api/v1/things/{namespace}", FullList(), &ListThingsRequest{}},
		{"GET", "/api/v1/things/{namespace}/{name}", &GetThingRequest{Namespace: "n s", Name: "a/b%2F c?d#e+f;g",
			GetOptions: &metav1.GetOptions{ResourceVersion: "0"}}, &GetThingRequest{}},
		{"DELETE", "/api/v1/things/{namespace}/{name}", &DeleteThingRequest{Namespace: "n", Name: "✓",
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptrTo("")}}}, &DeleteThingRequest{}},
	} {
		path, q, err := rest.Encode(c.in, c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		echoed(t, call(t, c.verb, base+path+"?"+q.Encode(), ""), c.out)
		resttest.SameJSON(t, c.out, c.in)
	}
}
