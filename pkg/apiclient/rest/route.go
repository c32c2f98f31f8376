package rest

// Route is one RPC's REST form.
type Route struct {
	// Service is the gRPC service's full name ("workflow.WorkflowService").
	Service string
	// Method is the RPC's name ("CreateWorkflow").
	Method string
	// Verb is the HTTP method: GET, POST, PUT, DELETE or PATCH.
	Verb string
	// Pattern is the path template, as in the rule
	// ("/api/v1/workflows/{namespace}/{name}").
	Pattern string
	// Body is the rule's body: "" (the request comes from the path and the
	// query), "*" (the JSON body is the whole request) or a field's proto
	// name (the JSON body is that field).
	Body string
	// ServerStreaming is true for a stream of responses (served as
	// server-sent events over HTTP/1).
	ServerStreaming bool
}

// FullMethod is the gRPC method path: "/workflow.WorkflowService/CreateWorkflow".
func (r Route) FullMethod() string { return "/" + r.Service + "/" + r.Method }
