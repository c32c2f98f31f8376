package compat

import (
	"runtime"
	"strings"
	"testing"

	infopkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/info"
	syncpkg "github.com/argoproj/argo-workflows/v4/pkg/apiclient/sync"
	"google.golang.org/grpc/codes"
)

// TestInfo: GetInfo, GetVersion and GetUserInfo answer the fields of
// ARGO-API §2.3 (the modals the UI reads, the build of the server, the
// caller), and CollectEvent accepts the UI's tracking event.
func TestInfo(t *testing.T) {
	eachTransport(t, "info", func(t *testing.T, e *env) {
		c := e.info(t)
		info, err := c.GetInfo(e.ctx, &infopkg.GetInfoRequest{})
		if err != nil {
			t.Fatalf("GetInfo: %v", err)
		}
		for _, k := range []string{"feedback", "firstTimeUser", "newVersion"} {
			if _, ok := info.Modals[k]; !ok {
				t.Errorf("GetInfo: modals %v lack %q", info.Modals, k)
			}
		}
		for _, l := range info.Links {
			if l.Name == "" || l.URL == "" {
				t.Errorf("GetInfo: a link without name or URL: %+v", l)
			}
		}

		v, err := c.GetVersion(e.ctx, &infopkg.GetVersionRequest{})
		if err != nil {
			t.Fatalf("GetVersion: %v", err)
		}
		if v.Version == "" || v.GoVersion != runtime.Version() || v.Compiler != runtime.Compiler || v.Platform != runtime.GOOS+"/"+runtime.GOARCH {
			t.Errorf("GetVersion: %+v; want a version, %s, %s, %s/%s", v, runtime.Version(), runtime.Compiler, runtime.GOOS, runtime.GOARCH)
		}

		u, err := c.GetUserInfo(e.ctx, &infopkg.GetUserInfoRequest{})
		if err != nil {
			t.Fatalf("GetUserInfo: %v", err)
		}
		if u.Subject == "" || u.Issuer == "" {
			t.Errorf("GetUserInfo: %+v, want the caller's issuer and subject", u)
		}

		if _, err := c.CollectEvent(e.ctx, &infopkg.CollectEventRequest{Name: "compat"}); err != nil {
			t.Errorf("CollectEvent: %v", err)
		}
	})
}

// TestSyncLimits: the SyncService as Argo's client drives it (`argo sync`):
// a ConfigMap-type limit (the default type, CONFIGMAP = 0) is created,
// read, updated and deleted; a second create of the same key is
// AlreadyExists, a limit of 0 InvalidArgument, and a key that is not there
// NotFound (Argo's server/sync semantics).
func TestSyncLimits(t *testing.T) {
	eachTransport(t, "sync", func(t *testing.T, e *env) {
		c := e.sync(t)
		cm := "compat-limits"
		created, err := c.CreateSyncLimit(e.ctx, &syncpkg.CreateSyncLimitRequest{Type: syncpkg.SyncConfigType_CONFIGMAP, Namespace: e.ns, CmName: cm, Key: "workers", Limit: 2})
		if err != nil {
			t.Fatalf("CreateSyncLimit: %v", err)
		}
		want := &syncpkg.SyncLimitResponse{Type: syncpkg.SyncConfigType_CONFIGMAP, Namespace: e.ns, CmName: cm, Key: "workers", Limit: 2}
		checkLimit(t, "create", created, want)
		_, err = c.CreateSyncLimit(e.ctx, &syncpkg.CreateSyncLimitRequest{Namespace: e.ns, CmName: cm, Key: "workers", Limit: 3})
		wantCode(t, "create of an existing key", err, codes.AlreadyExists)
		_, err = c.CreateSyncLimit(e.ctx, &syncpkg.CreateSyncLimitRequest{Namespace: e.ns, CmName: cm, Key: "zero", Limit: 0})
		wantCode(t, "create of limit 0", err, codes.InvalidArgument)

		got, err := c.GetSyncLimit(e.ctx, &syncpkg.GetSyncLimitRequest{Namespace: e.ns, CmName: cm, Key: "workers"})
		if err != nil {
			t.Fatalf("GetSyncLimit: %v", err)
		}
		checkLimit(t, "get", got, want)

		upd, err := c.UpdateSyncLimit(e.ctx, &syncpkg.UpdateSyncLimitRequest{Namespace: e.ns, CmName: cm, Key: "workers", Limit: 5})
		if err != nil {
			t.Fatalf("UpdateSyncLimit: %v", err)
		}
		want.Limit = 5
		checkLimit(t, "update", upd, want)
		if got, err = c.GetSyncLimit(e.ctx, &syncpkg.GetSyncLimitRequest{Namespace: e.ns, CmName: cm, Key: "workers"}); err != nil {
			t.Fatalf("GetSyncLimit after update: %v", err)
		}
		checkLimit(t, "get after update", got, want)
		_, err = c.UpdateSyncLimit(e.ctx, &syncpkg.UpdateSyncLimitRequest{Namespace: e.ns, CmName: cm, Key: "absent", Limit: 1})
		wantCode(t, "update of a key not created", err, codes.NotFound, "absent")

		if _, err := c.DeleteSyncLimit(e.ctx, &syncpkg.DeleteSyncLimitRequest{Namespace: e.ns, CmName: cm, Key: "workers"}); err != nil {
			t.Fatalf("DeleteSyncLimit: %v", err)
		}
		_, err = c.GetSyncLimit(e.ctx, &syncpkg.GetSyncLimitRequest{Namespace: e.ns, CmName: cm, Key: "workers"})
		wantCode(t, "get after delete", err, codes.NotFound, "workers")
	})
}

func checkLimit(t *testing.T, what string, got, want *syncpkg.SyncLimitResponse) {
	t.Helper()
	if got.Type != want.Type || got.Namespace != want.Namespace || got.CmName != want.CmName || got.Key != want.Key || got.Limit != want.Limit {
		t.Errorf("%s: %s, want %s", what, strings.TrimSpace(got.String()), strings.TrimSpace(want.String()))
	}
}
