// Package spec reads Argo Workflows manifests and checks them.
//
// It owns three things:
//
//   - Loading (load.go, decode.go): YAML or JSON, one document or many
//     (---), into the typed objects of pkg/apis/v1alpha1. The YAML node tree
//     is walked against the Go types, so that in Strict mode an unknown field,
//     or a scalar of the wrong kind, is reported with its field path and line;
//     Lenient mode ignores unknown fields. Documents that are not Argo kinds
//     (ConfigMap, PersistentVolumeClaim, ...) are kept with a note in
//     Document.Skipped. Limits on size and depth keep hostile input from
//     exhausting memory; no input makes the loader panic. Paths are formatted
//     only for what is reported (fieldPath), so a big document costs no
//     string per field; LoadNoLines, for the server, also lets each
//     document's YAML tree go before its typed object is built.
//   - Validation (validate*.go): what argo lint checks. Each problem is an
//     Issue that names the file, the object, the field path and the line, for
//     example
//     `steps.yaml: Workflow steps-: spec.templates[2].steps[1][0].template: "whalesay2" not found (line 31)`.
//     Variables are checked against scopes (scope.go) that mirror where Argo
//     makes each variable available: steps.X only from earlier step groups,
//     tasks.X only from ancestors, inputs.* only when declared.
//   - Lint (lint.go): files and directories loaded and validated together, so
//     that templateRef and workflowTemplateRef resolve across files through a
//     Catalog.
//
// spec imports the API types and internal/expr (tag scanning, expression
// syntax, depends grammar). It must not import the engine, the controller,
// the store, the runtimes or the server: they call it.
package spec
