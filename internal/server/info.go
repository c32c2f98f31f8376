package server

import (
	"context"
	"runtime"
	"strings"

	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/version"
	"github.com/braidwf/braid/pkg/apiclient/info"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

type infoServer struct {
	info.UnimplementedInfoServiceServer
	version          version.Info
	managedNamespace string
}

func (s *infoServer) GetInfo(context.Context, *info.GetInfoRequest) (*info.InfoResponse, error) {
	return &info.InfoResponse{
		ManagedNamespace: s.managedNamespace,
		Modals:           map[string]bool{"feedback": false, "firstTimeUser": false, "newVersion": false},
	}, nil
}

func (s *infoServer) GetVersion(context.Context, *info.GetVersionRequest) (*v1alpha1.Version, error) {
	v := s.version
	out := &v1alpha1.Version{
		Version:   v.Version,
		BuildDate: v.BuildDate,
		GitCommit: v.GitCommit,
		GoVersion: v.GoVersion,
		Compiler:  runtime.Compiler,
		Platform:  v.Platform,
	}
	if strings.HasPrefix(v.Version, "v") {
		out.GitTag = v.Version
	}
	return out, nil
}

// GetUserInfo says who the caller is, in argo-server's shape: empty in
// server mode, the token's or SSO user's identity otherwise.
func (s *infoServer) GetUserInfo(ctx context.Context, _ *info.GetUserInfoRequest) (*info.GetUserInfoResponse, error) {
	id, ok := auth.FromContext(ctx)
	if !ok {
		return &info.GetUserInfoResponse{}, nil
	}
	return &info.GetUserInfoResponse{
		Issuer:                  id.Issuer,
		Subject:                 id.Subject,
		Groups:                  id.Groups,
		Email:                   id.Email,
		EmailVerified:           id.EmailVerified,
		ServiceAccountName:      id.ServiceAccountName,
		ServiceAccountNamespace: id.ServiceAccountNamespace,
		Name:                    id.Name,
	}, nil
}

// CollectEvent takes the UI's usage events, as argo-server does; braid
// keeps none of them.
func (s *infoServer) CollectEvent(context.Context, *info.CollectEventRequest) (*info.CollectEventResponse, error) {
	return &info.CollectEventResponse{}, nil
}
