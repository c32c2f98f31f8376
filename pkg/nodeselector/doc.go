// Package nodeselector parses and applies the argo CLI's node field
// selector (`argo get|retry|resume|stop|node set --node-field-selector`).
//
// # What it owns
//
// The one definition of what a node field selector means, shared by the
// printer (argo get's tree filter) and wfops (retry, resume, stop, node
// set):
//
//   - The syntax is a Kubernetes field selector: terms joined by commas
//     (AND), each field=value, field==value or field!=value, with '\'
//     escaping ',', '=' and '\' in a value.
//   - The fields are those of Argo's SelectorMatchesNode: displayName,
//     templateName, phase, name, id, templateRef.name,
//     templateRef.template and inputs.parameters.<name>.value.
//     templateName is templateRef.template when the node has a templateRef,
//     else the node's templateName, as in Argo. A field the node does not
//     have reads as "", so "!=" holds for it.
//   - Parse accepts any field name, as argo get does; CheckFields rejects
//     the fields above do not list, for the operations that must not
//     silently select nothing.
//
// # What it must not do
//
// No I/O and no state. It imports only pkg/apis/v1alpha1,
// k8s.io/apimachinery's fields package and the standard library, so that
// internal/printer (which imports no braid internal package) can use it.
package nodeselector
