package auth

// Verbs are the verbs a token may be given.
var Verbs = []string{
	"get", "list", "watch", "create", "update", "delete",
	"retry", "resubmit", "resume", "suspend", "stop", "terminate", "set",
}

// Scope says where a method's namespace comes from.
type Scope int

const (
	// Namespaced: the request's "namespace" field (gRPC) or the
	// {namespace} path parameter, else the namespace query (REST); ""
	// means every namespace.
	Namespaced Scope = iota
	// Cluster: a cluster-scoped kind.
	Cluster
	// AnyCaller: any authenticated caller (version, info, userinfo, lint).
	AnyCaller
	// Deferred: the handler finds the namespace (an archived workflow
	// named by uid) and calls Check itself before it answers.
	Deferred
)

// Rule is what one RPC does.
type Rule struct {
	Verb     string
	Resource string
	Scope    Scope
}

const (
	wfSvc      = "/workflow.WorkflowService/"
	tmplSvc    = "/workflowtemplate.WorkflowTemplateService/"
	ctmplSvc   = "/clusterworkflowtemplate.ClusterWorkflowTemplateService/"
	cronSvc    = "/cronworkflow.CronWorkflowService/"
	archiveSvc = "/workflowarchive.ArchivedWorkflowService/"
	eventSvc   = "/event.EventService/"
	infoSvc    = "/info.InfoService/"
	syncSvc    = "/sync.SyncService/"
)

// Rules maps every RPC's full method name to what it does. A method that
// is not here is refused: a new RPC must be given a rule.
var Rules = map[string]Rule{
	wfSvc + "CreateWorkflow":     {"create", "workflows", Namespaced},
	wfSvc + "GetWorkflow":        {"get", "workflows", Namespaced},
	wfSvc + "ListWorkflows":      {"list", "workflows", Namespaced},
	wfSvc + "DeleteWorkflow":     {"delete", "workflows", Namespaced},
	wfSvc + "LintWorkflow":       {"", "workflows", AnyCaller},
	wfSvc + "WatchWorkflows":     {"watch", "workflows", Namespaced},
	wfSvc + "WatchWorkflowNodes": {"watch", "workflows", Namespaced},
	wfSvc + "WatchEvents":        {"watch", "events", Namespaced},
	wfSvc + "RetryWorkflow":      {"retry", "workflows", Namespaced},
	wfSvc + "ResubmitWorkflow":   {"resubmit", "workflows", Namespaced},
	wfSvc + "ResumeWorkflow":     {"resume", "workflows", Namespaced},
	wfSvc + "SuspendWorkflow":    {"suspend", "workflows", Namespaced},
	wfSvc + "TerminateWorkflow":  {"terminate", "workflows", Namespaced},
	wfSvc + "StopWorkflow":       {"stop", "workflows", Namespaced},
	wfSvc + "SetWorkflow":        {"set", "workflows", Namespaced},
	wfSvc + "PodLogs":            {"get", "logs", Namespaced},
	wfSvc + "WorkflowLogs":       {"get", "logs", Namespaced},
	wfSvc + "SubmitWorkflow":     {"create", "workflows", Namespaced},

	tmplSvc + "CreateWorkflowTemplate": {"create", "workflowtemplates", Namespaced},
	tmplSvc + "GetWorkflowTemplate":    {"get", "workflowtemplates", Namespaced},
	tmplSvc + "ListWorkflowTemplates":  {"list", "workflowtemplates", Namespaced},
	tmplSvc + "UpdateWorkflowTemplate": {"update", "workflowtemplates", Namespaced},
	tmplSvc + "DeleteWorkflowTemplate": {"delete", "workflowtemplates", Namespaced},
	tmplSvc + "LintWorkflowTemplate":   {"", "workflowtemplates", AnyCaller},

	ctmplSvc + "CreateClusterWorkflowTemplate": {"create", "clusterworkflowtemplates", Cluster},
	ctmplSvc + "GetClusterWorkflowTemplate":    {"get", "clusterworkflowtemplates", Cluster},
	ctmplSvc + "ListClusterWorkflowTemplates":  {"list", "clusterworkflowtemplates", Cluster},
	ctmplSvc + "UpdateClusterWorkflowTemplate": {"update", "clusterworkflowtemplates", Cluster},
	ctmplSvc + "DeleteClusterWorkflowTemplate": {"delete", "clusterworkflowtemplates", Cluster},
	ctmplSvc + "LintClusterWorkflowTemplate":   {"", "clusterworkflowtemplates", AnyCaller},

	cronSvc + "LintCronWorkflow":    {"", "cronworkflows", AnyCaller},
	cronSvc + "CreateCronWorkflow":  {"create", "cronworkflows", Namespaced},
	cronSvc + "ListCronWorkflows":   {"list", "cronworkflows", Namespaced},
	cronSvc + "GetCronWorkflow":     {"get", "cronworkflows", Namespaced},
	cronSvc + "UpdateCronWorkflow":  {"update", "cronworkflows", Namespaced},
	cronSvc + "DeleteCronWorkflow":  {"delete", "cronworkflows", Namespaced},
	cronSvc + "ResumeCronWorkflow":  {"resume", "cronworkflows", Namespaced},
	cronSvc + "SuspendCronWorkflow": {"suspend", "cronworkflows", Namespaced},
	// braid's own: it creates workflows from the cron workflow's spec (as
	// SubmitWorkflow does from a template).
	cronSvc + "BackfillCronWorkflow": {"create", "workflows", Namespaced},

	archiveSvc + "ListArchivedWorkflows":           {"list", "archivedworkflows", Namespaced},
	archiveSvc + "GetArchivedWorkflow":             {"get", "archivedworkflows", Deferred},
	archiveSvc + "DeleteArchivedWorkflow":          {"delete", "archivedworkflows", Deferred},
	archiveSvc + "ListArchivedWorkflowLabelKeys":   {"list", "archivedworkflows", Namespaced},
	archiveSvc + "ListArchivedWorkflowLabelValues": {"list", "archivedworkflows", Namespaced},
	archiveSvc + "RetryArchivedWorkflow":           {"retry", "archivedworkflows", Deferred},
	archiveSvc + "ResubmitArchivedWorkflow":        {"resubmit", "archivedworkflows", Deferred},

	eventSvc + "ReceiveEvent":               {"create", "events", Namespaced},
	eventSvc + "ListWorkflowEventBindings":  {"list", "workfloweventbindings", Namespaced},
	eventSvc + "CreateWorkflowEventBinding": {"create", "workfloweventbindings", Namespaced},
	eventSvc + "GetWorkflowEventBinding":    {"get", "workfloweventbindings", Namespaced},
	eventSvc + "UpdateWorkflowEventBinding": {"update", "workfloweventbindings", Namespaced},
	eventSvc + "DeleteWorkflowEventBinding": {"delete", "workfloweventbindings", Namespaced},

	infoSvc + "GetInfo":      {"", "info", AnyCaller},
	infoSvc + "GetVersion":   {"", "info", AnyCaller},
	infoSvc + "GetUserInfo":  {"", "info", AnyCaller},
	infoSvc + "CollectEvent": {"", "info", AnyCaller},

	// Sync limits are ConfigMap keys or database rows (synclimits.go).
	syncSvc + "CreateSyncLimit": {"create", "synclimits", Namespaced},
	syncSvc + "GetSyncLimit":    {"get", "synclimits", Namespaced},
	syncSvc + "UpdateSyncLimit": {"update", "synclimits", Namespaced},
	syncSvc + "DeleteSyncLimit": {"delete", "synclimits", Namespaced},
}

// requestName and requestNamespace are a request message's top-level
// name and namespace fields (their generated getters), "" when it has none.
func requestName(m any) string {
	if g, ok := m.(interface{ GetName() string }); ok {
		return g.GetName()
	}
	return ""
}

func requestNamespace(m any) string {
	if g, ok := m.(interface{ GetNamespace() string }); ok {
		return g.GetNamespace()
	}
	return ""
}

// RequestAttributes are what a gRPC request does, by its rule.
func RequestAttributes(rule Rule, req any) Attributes {
	a := Attributes{Verb: rule.Verb, Resource: rule.Resource, Cluster: rule.Scope == Cluster, Name: requestName(req)}
	if rule.Scope == Namespaced {
		a.Namespace = requestNamespace(req)
	}
	return a
}
