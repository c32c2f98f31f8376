package kube_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/braidwf/braid/internal/store/kube"
	"github.com/braidwf/braid/internal/store/storetest"
)

// configMapStores is what the Kubernetes deployment keeps in ConfigMaps,
// as Argo does: the memoization caches and the semaphore limits. (Its
// archive is PostgreSQL's, tested in internal/store/postgres.)
type configMapStores struct {
	*kube.Memos
	*kube.ConfigMapLimits
}

// TestContract runs the contract every store keeps (internal/store/storetest)
// against the ConfigMap caches and limits on a real apiserver, in two
// namespaces of the test's own.
func TestContract(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		New: func(t *testing.T, clock func() time.Time) storetest.Env {
			mine, other := newCluster(t), newCluster(t)
			client, err := kubernetes.NewForConfig(mine.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, ns := range []string{mine.ns, other.ns} {
				t.Cleanup(func() {
					_ = client.CoreV1().ConfigMaps(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
				})
			}
			return storetest.Env{
				Open: func() any {
					return configMapStores{kube.NewMemos(client, clock, mine.ns), kube.NewConfigMapLimits(client)}
				},
				Namespace: mine.ns, Other: other.ns,
			}
		},
		Skip: map[string]string{
			"SyncLimits/DeleteTwice":    "a ConfigMap limit whose key is gone deletes as done, as argo-server answers (TestConfigMapLimits)",
			"SyncLimits/DatabaseLimits": "the Kubernetes store keeps ConfigMap limits only: a database limit is ErrInvalid (TestConfigMapLimits)",
			"SyncLimits/InvalidLimit":   "ConfigMapLimits stores the limit it is given: the API checks its range (internal/server/synclimits.go)",
		},
	})
}
