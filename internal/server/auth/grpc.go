package auth

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// authorization is the credential of a gRPC call: its "authorization"
// metadata.
func authorization(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("authorization"); len(v) > 0 {
		return v[0]
	}
	return ""
}

// ruleFor is the rule of a method, or a PermissionDenied status: a method
// without a rule is refused.
func ruleFor(method string) (Rule, error) {
	r, ok := Rules[method]
	if !ok {
		return r, status.Errorf(codes.PermissionDenied, "permission denied: %s has no authorization rule", method)
	}
	return r, nil
}

// admit authenticates a gRPC call and, when its rule allows it, authorizes
// req (nil for a stream before its request arrives).
func (g *Gatekeeper) admit(ctx context.Context, method string) (context.Context, Rule, error) {
	rule, err := ruleFor(method)
	if err != nil {
		return ctx, rule, err
	}
	id, err := g.Authenticate(ctx, authorization(ctx))
	if err != nil {
		return ctx, rule, Status(err)
	}
	return g.withChecker(ctx, id), rule, nil
}

// authorizeRequest applies rule to one request message.
func (g *Gatekeeper) authorizeRequest(ctx context.Context, rule Rule, req any) error {
	if rule.Scope == AnyCaller || rule.Scope == Deferred {
		return nil
	}
	id, _ := FromContext(ctx)
	return Status(g.Authorize(ctx, id, RequestAttributes(rule, req)))
}

// UnaryInterceptor authenticates and authorizes every unary call.
func (g *Gatekeeper) UnaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	ctx, rule, err := g.admit(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	if err := g.authorizeRequest(ctx, rule, req); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

// StreamInterceptor authenticates every stream at once and authorizes it
// when its request message arrives (every braid stream is
// server-streaming: one request, then responses).
func (g *Gatekeeper) StreamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	ctx, rule, err := g.admit(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	return h(srv, &guardedStream{ServerStream: ss, ctx: ctx, g: g, rule: rule})
}

type guardedStream struct {
	grpc.ServerStream
	ctx     context.Context
	g       *Gatekeeper
	rule    Rule
	checked bool
}

func (s *guardedStream) Context() context.Context { return s.ctx }

func (s *guardedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if !s.checked {
		s.checked = true
		return s.g.authorizeRequest(s.ctx, s.rule, m)
	}
	return nil
}
