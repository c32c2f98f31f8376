package server

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// createNamed creates wf, giving it a name from generateName when it has
// none; named runs after the name is chosen, before each attempt.
func (s *workflowServer) createNamed(ctx context.Context, wf *v1alpha1.Workflow, named func(*v1alpha1.Workflow)) error {
	if wf.Name != "" {
		if named != nil {
			named(wf)
		}
		if err := s.store.Create(ctx, wf); err != nil {
			return storeError(err, wf.Name)
		}
		return nil
	}
	var err error
	for range generateNameAttempts {
		wf.Name = store.GenerateName(wf.GenerateName)
		if named != nil {
			named(wf)
		}
		err = s.store.Create(ctx, wf)
		if !errors.Is(err, store.ErrAlreadyExists) {
			break
		}
	}
	if err != nil {
		return storeError(err, wf.Name)
	}
	return nil
}

// now is the server's clock.
func (s *workflowServer) now() time.Time {
	if s.clock != nil {
		return s.clock()
	}
	return time.Now()
}

// setTypeMeta sets the apiVersion and kind that a request may leave out
// (the protobuf wire never carries them); another kind is an error.
func setTypeMeta(in *v1alpha1.Workflow) error {
	if in.Kind != "" && in.Kind != "Workflow" {
		return status.Errorf(codes.InvalidArgument, "kind must be Workflow, not %q", in.Kind)
	}
	if in.APIVersion != "" && in.APIVersion != v1alpha1.APIVersion {
		return status.Errorf(codes.InvalidArgument, "apiVersion must be %s, not %q", v1alpha1.APIVersion, in.APIVersion)
	}
	in.APIVersion, in.Kind = v1alpha1.APIVersion, "Workflow"
	return nil
}
