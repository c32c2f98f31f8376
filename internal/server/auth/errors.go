package auth

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Sentinel errors. Every error the authenticator or an authorizer returns
// wraps one of them, and Status turns it into the gRPC (and so HTTP)
// status the caller sees.
var (
	// ErrUnauthenticated: no credential, or one that is malformed,
	// unknown, expired or revoked (gRPC Unauthenticated, HTTP 401).
	ErrUnauthenticated = errors.New("token not valid")
	// ErrForbidden: a known caller asked for a verb or namespace its rights
	// do not cover (gRPC PermissionDenied, HTTP 403).
	ErrForbidden = errors.New("permission denied")
)

// Unauthenticated wraps ErrUnauthenticated with why.
func Unauthenticated(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUnauthenticated, fmt.Sprintf(format, a...))
}

// Forbidden is the error of a refused request: it names the caller, the
// verb, the resource and the namespace (or the cluster scope).
func Forbidden(who string, a Attributes) error {
	where := fmt.Sprintf("in namespace %q", a.Namespace)
	switch {
	case a.Cluster:
		where = "at the cluster scope"
	case a.Namespace == "":
		where = "in all namespaces"
	}
	if who == "" {
		who = "the caller"
	} else {
		who = fmt.Sprintf("%q", who)
	}
	return fmt.Errorf("%w: %s is not allowed to %s %s %s", ErrForbidden, who, a.Verb, a.Resource, where)
}

// Status converts an auth error to the gRPC status argo-server answers
// with; any other error is Internal.
func Status(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrUnauthenticated):
		return status.Error(codes.Unauthenticated, err.Error())
	case errors.Is(err, ErrForbidden):
		return status.Error(codes.PermissionDenied, err.Error())
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codes.Internal, err.Error())
}
