package kube_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/testutil"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// TestKubeArchive runs braid server and controller --backend kube with the
// PostgreSQL archive ($BRAID_ARCHIVE_DSN): a completed workflow is archived
// by the controller and served by `braid archive list` and `archive get`
// through the server.
func TestKubeArchive(t *testing.T) {
	dsn := os.Getenv("BRAID_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("BRAID_REQUIRE_POSTGRES") == "1" {
			t.Fatal("BRAID_TEST_POSTGRES is unset and BRAID_REQUIRE_POSTGRES=1")
		}
		t.Skip("BRAID_TEST_POSTGRES is unset: run `eval \"$(hack/postgres.sh up | tail -1)\"`")
	}
	t.Setenv("BRAID_ARCHIVE_DSN", dsn)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b := newBackend(t, ctx)

	name := b.submit(ctx, "archived", helloYAML)
	wf := b.waitCompleted(ctx, name)
	if wf.Status.Phase != v1alpha1.WorkflowSucceeded {
		t.Fatalf("%s: phase %s (%s), want Succeeded", name, wf.Status.Phase, wf.Status.Message)
	}
	testutil.Eventually(t, 30*time.Second, "braid archive list shows "+name, func() error {
		out, err := b.cli(ctx, "archive", "list")
		if err == nil && !strings.Contains(out, name) {
			err = fmt.Errorf("not in\n%s", out)
		}
		return err
	})
	out, err := b.cli(ctx, "archive", "get", string(wf.UID))
	if err != nil || !strings.Contains(out, name) || !strings.Contains(out, "Succeeded") {
		t.Errorf("braid archive get %s: want %s Succeeded in\n%s (err %v)", wf.UID, name, out, err)
	}
}
