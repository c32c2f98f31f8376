package raw

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestRaw(t *testing.T) {
	ctx := context.Background()
	a := &v1alpha1.Artifact{Name: "in", ArtifactLocation: v1alpha1.ArtifactLocation{Raw: &v1alpha1.RawArtifact{Data: "line 1\nline 2\n"}}}
	dst := filepath.Join(t.TempDir(), "deep", "dir", "in.txt")
	d := New()
	if err := d.Load(ctx, a, dst); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(dst)
	if err != nil || string(data) != "line 1\nline 2\n" {
		t.Fatalf("loaded %q, %v", data, err)
	}
	rc, err := d.OpenStream(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := io.ReadAll(rc); string(data) != "line 1\nline 2\n" {
		t.Errorf("streamed %q", data)
	}
	for name, err := range map[string]error{"Save": d.Save(ctx, dst, a), "Delete": d.Delete(ctx, a)} {
		if !errors.Is(err, artifact.ErrUnsupported) || !strings.Contains(err.Error(), `artifact "in"`) {
			t.Errorf("%s error = %v, want ErrUnsupported naming the artifact", name, err)
		}
	}
	empty := &v1alpha1.Artifact{Name: "e", ArtifactLocation: v1alpha1.ArtifactLocation{Raw: &v1alpha1.RawArtifact{}}}
	if err := d.Load(ctx, empty, filepath.Join(t.TempDir(), "e")); err != nil {
		t.Errorf("empty data: %v", err)
	}
	if err := d.Load(ctx, &v1alpha1.Artifact{Name: "x"}, dst); err == nil {
		t.Errorf("Load without a raw location succeeded")
	}
}
