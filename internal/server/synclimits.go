package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/braidwf/braid/internal/store"
	syncapi "github.com/braidwf/braid/pkg/apiclient/sync"
)

// SyncLimits keeps the limits of semaphores (synchronization.semaphore)
// that the sync service manages. A store.SyncLimitRef names a key of a
// ConfigMap (configMapKeyRef) or a database semaphore (ConfigMap "").
// Errors are the store's sentinels, wrapped:
//
//   - GetSyncLimit: store.ErrNotFound when the limit is not set (or its
//     ConfigMap does not exist); store.ErrInvalid when the ConfigMap key
//     holds no integer.
//   - CreateSyncLimit: store.ErrAlreadyExists when it is set. A ConfigMap
//     that does not exist is created.
//   - UpdateSyncLimit: store.ErrNotFound when it is not set.
//   - DeleteSyncLimit: a ConfigMap key that is not set is no error (as
//     argo-server); store.ErrNotFound when the ConfigMap does not exist, or
//     for a database limit that is not set (which the service answers as
//     argo-server does: done).
//
// Any of them: store.ErrUnavailable when this deployment cannot keep that
// limit (no database for database limits; a limit the config file sets),
// store.ErrForbidden when the server itself may not.
type SyncLimits interface {
	GetSyncLimit(ctx context.Context, r store.SyncLimitRef) (int, error)
	CreateSyncLimit(ctx context.Context, r store.SyncLimitRef, limit int) error
	UpdateSyncLimit(ctx context.Context, r store.SyncLimitRef, limit int) error
	DeleteSyncLimit(ctx context.Context, r store.SyncLimitRef) error
}

// syncServer is argo-server's SyncService on a SyncLimits: it checks the
// request, and answers with Argo's codes and messages.
type syncServer struct {
	syncapi.UnimplementedSyncServiceServer
	limits SyncLimits // nil: Unimplemented
}

var _ syncapi.SyncServiceServer = (*syncServer)(nil)

func (s *syncServer) CreateSyncLimit(ctx context.Context, req *syncapi.CreateSyncLimitRequest) (*syncapi.SyncLimitResponse, error) {
	r, err := s.ref(req.Type, req.Namespace, req.CmName, req.Key, req.Limit, true)
	if err != nil {
		return nil, err
	}
	if err := s.limits.CreateSyncLimit(ctx, r, int(req.Limit)); err != nil {
		return nil, syncLimitError(err, r, "create")
	}
	return syncResponse(r, req.Limit), nil
}

func (s *syncServer) GetSyncLimit(ctx context.Context, req *syncapi.GetSyncLimitRequest) (*syncapi.SyncLimitResponse, error) {
	r, err := s.ref(req.Type, req.Namespace, req.CmName, req.Key, 0, false)
	if err != nil {
		return nil, err
	}
	n, err := s.limits.GetSyncLimit(ctx, r)
	if err != nil {
		return nil, syncLimitError(err, r, "get")
	}
	return syncResponse(r, int32(min(n, 1<<31-1))), nil
}

func (s *syncServer) UpdateSyncLimit(ctx context.Context, req *syncapi.UpdateSyncLimitRequest) (*syncapi.SyncLimitResponse, error) {
	r, err := s.ref(req.Type, req.Namespace, req.CmName, req.Key, req.Limit, true)
	if err != nil {
		return nil, err
	}
	if err := s.limits.UpdateSyncLimit(ctx, r, int(req.Limit)); err != nil {
		return nil, syncLimitError(err, r, "update")
	}
	return syncResponse(r, req.Limit), nil
}

func (s *syncServer) DeleteSyncLimit(ctx context.Context, req *syncapi.DeleteSyncLimitRequest) (*syncapi.DeleteSyncLimitResponse, error) {
	r, err := s.ref(req.Type, req.Namespace, req.CmName, req.Key, 0, false)
	if err != nil {
		return nil, err
	}
	err = s.limits.DeleteSyncLimit(ctx, r)
	if err != nil && !(r.Database() && errors.Is(err, store.ErrNotFound)) { // Argo: a database delete of nothing is done
		return nil, syncLimitError(err, r, "delete")
	}
	return &syncapi.DeleteSyncLimitResponse{}, nil
}

// ref checks a request, in argo-server's order (the limit, then the
// type), then the names as the Kubernetes API server would check the
// ConfigMap's, and names the limit.
func (s *syncServer) ref(t syncapi.SyncConfigType, namespace, cmName, key string, limit int32, writes bool) (store.SyncLimitRef, error) {
	if s.limits == nil {
		return store.SyncLimitRef{}, status.Error(codes.Unimplemented,
			"the sync service (semaphore limits) is not available on this server: it was started without a place to keep them")
	}
	if writes && limit <= 0 {
		return store.SyncLimitRef{}, status.Error(codes.InvalidArgument, "limit must be greater than zero")
	}
	if t != syncapi.SyncConfigType_CONFIGMAP && t != syncapi.SyncConfigType_DATABASE {
		return store.SyncLimitRef{}, status.Errorf(codes.InvalidArgument, "unsupported sync config type: %s", t)
	}
	var bad []string
	check := func(field, value string, msgs []string) {
		for _, m := range msgs {
			bad = append(bad, fmt.Sprintf("%s: Invalid value: %q: %s", field, value, m))
		}
	}
	required := func(field, value string) bool {
		if value == "" {
			bad = append(bad, field+": Required value")
		}
		return value != ""
	}
	if required("namespace", namespace) {
		check("namespace", namespace, apivalidation.ValidateNamespaceName(namespace, false))
	}
	r := store.SyncLimitRef{Namespace: namespace, Key: key}
	if t == syncapi.SyncConfigType_CONFIGMAP {
		r.ConfigMap = cmName
		if required("cmName", cmName) {
			check("cmName", cmName, apivalidation.NameIsDNSSubdomain(cmName, false))
		}
		if required("key", key) {
			check("key", key, validation.IsConfigMapKey(key))
		}
	} else if required("key", key) && strings.Contains(key, "/") {
		// The semaphore is "namespace/key": a key has no slash.
		check("key", key, []string{"a database sync limit's key must not contain '/'"})
	}
	if len(bad) > 0 {
		return store.SyncLimitRef{}, status.Errorf(codes.InvalidArgument, "invalid %s sync limit: %s", t, strings.Join(bad, "; "))
	}
	return r, nil
}

// syncResponse is argo-server's answer: a database limit has no cmName.
func syncResponse(r store.SyncLimitRef, limit int32) *syncapi.SyncLimitResponse {
	if r.Database() {
		return &syncapi.SyncLimitResponse{Type: syncapi.SyncConfigType_DATABASE, Namespace: r.Namespace, Key: r.Key, Limit: limit}
	}
	return &syncapi.SyncLimitResponse{Type: syncapi.SyncConfigType_CONFIGMAP, Namespace: r.Namespace, CmName: r.ConfigMap, Key: r.Key, Limit: limit}
}

// syncLimitError turns a SyncLimits error into argo-server's status.
func syncLimitError(err error, r store.SyncLimitRef, verb string) error {
	switch {
	case errors.Is(err, store.ErrNotFound) && r.Database():
		return status.Errorf(codes.NotFound, "Database sync limit not found in namespace %q.", r.Namespace)
	case errors.Is(err, store.ErrNotFound) && verb == "delete":
		return status.Errorf(codes.NotFound, "configmaps %q not found", r.ConfigMap)
	case errors.Is(err, store.ErrNotFound) && verb == "update":
		return status.Errorf(codes.NotFound, "key %s not found in configmap %s/%s - please create it first", r.Key, r.Namespace, r.ConfigMap)
	case errors.Is(err, store.ErrNotFound):
		return status.Errorf(codes.NotFound, "key %s not found in configmap %s/%s", r.Key, r.Namespace, r.ConfigMap)
	case errors.Is(err, store.ErrAlreadyExists) && r.Database():
		return status.Errorf(codes.AlreadyExists, "Database sync limit already exists in namespace %q.", r.Namespace)
	case errors.Is(err, store.ErrAlreadyExists):
		return status.Error(codes.AlreadyExists, "sync limit cannot be created as it already exists")
	case errors.Is(err, store.ErrInvalid) && verb == "get" && !r.Database():
		return status.Errorf(codes.InvalidArgument, "invalid limit format for key %s in configmap %s/%s", r.Key, r.Namespace, r.ConfigMap)
	case errors.Is(err, store.ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, store.ErrUnavailable): // the reason, without the sentinel's words
		return status.Error(codes.FailedPrecondition, strings.TrimSuffix(err.Error(), ": "+store.ErrUnavailable.Error()))
	case errors.Is(err, store.ErrForbidden):
		return status.Errorf(codes.PermissionDenied, "%s sync limit %s: %v", verb, r, err)
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	return status.Errorf(codes.Internal, "%s sync limit %s: %v", verb, r, err)
}
