package emissary

import (
	"slices"
	"testing"
)

func TestChildEnv(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", "BRAID_SECRET_S3_ACCESSKEY=x", "ARGO_NODE_ID=n", "BRAID_SECRET_GIT_PASSWORD=y"})
	if want := []string{"PATH=/bin", "ARGO_NODE_ID=n"}; !slices.Equal(got, want) {
		t.Errorf("childEnv = %v, want %v", got, want)
	}
}
