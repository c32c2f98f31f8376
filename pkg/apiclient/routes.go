package apiclient

import (
	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apiclient/event"
	"github.com/braidwf/braid/pkg/apiclient/info"
	"github.com/braidwf/braid/pkg/apiclient/rest"
	"github.com/braidwf/braid/pkg/apiclient/sync"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apiclient/workflowarchive"
	"github.com/braidwf/braid/pkg/apiclient/workflowtemplate"
)

// Routes are the REST routes of every service, from each package's
// generated table.
func Routes() []rest.Route {
	var out []rest.Route
	for _, rs := range [][]rest.Route{
		workflow.Routes, workflowtemplate.Routes, clusterworkflowtemplate.Routes, cronworkflow.Routes,
		workflowarchive.Routes, event.Routes, info.Routes, sync.Routes,
	} {
		out = append(out, rs...)
	}
	return out
}
