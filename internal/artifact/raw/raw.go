package raw

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// Driver loads raw artifacts. Its zero value is ready to use.
type Driver struct{}

var _ artifact.Driver = Driver{}

// New returns a raw driver.
func New() Driver { return Driver{} }

// Load writes raw.data to path, creating its parent directories. The file is created 0644; the caller
// applies the artifact's mode.
func (Driver) Load(ctx context.Context, art *v1alpha1.Artifact, path string) error {
	data, err := data(art)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("artifact %q: load raw data to %s: %w", art.Name, path, err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		return fmt.Errorf("artifact %q: load raw data to %s: %w", art.Name, path, err)
	}
	return nil
}

// Save is unsupported: a raw artifact is an input given inline.
func (Driver) Save(ctx context.Context, path string, art *v1alpha1.Artifact) error {
	return fmt.Errorf("artifact %q: saving to a raw location is %w (raw artifacts are inputs only)",
		name(art), artifact.ErrUnsupported)
}

// OpenStream reads raw.data.
func (Driver) OpenStream(ctx context.Context, art *v1alpha1.Artifact) (io.ReadCloser, error) {
	data, err := data(art)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(strings.NewReader(data)), nil
}

// Delete is unsupported: there is nothing stored to delete.
func (Driver) Delete(ctx context.Context, art *v1alpha1.Artifact) error {
	return fmt.Errorf("artifact %q: deleting a raw location is %w (its data is inline in the spec)",
		name(art), artifact.ErrUnsupported)
}

func data(art *v1alpha1.Artifact) (string, error) {
	if art == nil || art.Raw == nil {
		return "", errors.New("raw artifact driver: the artifact has no raw location")
	}
	return art.Raw.Data, nil
}

func name(art *v1alpha1.Artifact) string {
	if art == nil {
		return ""
	}
	return art.Name
}
