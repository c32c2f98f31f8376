package server

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/braidwf/braid/internal/store"
	"github.com/braidwf/braid/internal/store/sqlite"
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
		wf.Name = sqlite.GenerateName(wf.GenerateName)
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

// workflowJSON is a submitted workflow as JSON for spec.Load, with the
// apiVersion and kind that a request may leave out. It then empties in, so
// that a big request's Struct is not held beside the JSON and the Workflow
// made from it: the caller must not use in afterwards.
func workflowJSON(in *structpb.Struct) ([]byte, error) {
	fields := in.GetFields()
	kv, hasKind := fields["kind"]
	if kind := kv.GetStringValue(); hasKind && kind != "Workflow" {
		return nil, status.Errorf(codes.InvalidArgument, "kind must be Workflow, not %q", kind)
	}
	_, hasAPIVersion := fields["apiVersion"]
	data, err := protojson.Marshal(in)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "workflow: %v", err)
	}
	in.Fields = nil
	var head []byte
	if !hasAPIVersion {
		head = append(head, `"apiVersion":"`+v1alpha1.APIVersion+`",`...)
	}
	if !hasKind {
		head = append(head, `"kind":"Workflow",`...)
	}
	if len(head) == 0 {
		return data, nil
	}
	// data is a non-empty object: {"...
	out := make([]byte, 0, len(data)+len(head))
	out = append(out, '{')
	out = append(out, head...)
	return append(out, data[1:]...), nil
}
