package v1alpha1

// Link is a link the UI shows for a workflow, a pod or a list (the
// server's configured links, in the info response).
type Link struct {
	// Name is the link's text ("Workflow Logs").
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Scope says where the link appears: workflow, pod, pod-logs,
	// event-source-logs, sensor-logs, workflow-list or chat.
	Scope string `json:"scope" protobuf:"bytes,2,opt,name=scope"`
	// URL may contain ${metadata.name} and other ${...} paths into the object.
	URL string `json:"url" protobuf:"bytes,3,opt,name=url"`
	// Target is the HTML target attribute ("_blank").
	Target string `json:"target" protobuf:"bytes,4,opt,name=target"`
}

// Column is an extra column of the UI's workflow list: a label or an
// annotation.
type Column struct {
	// Name is the column's heading.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Type is "label" or "annotation".
	Type string `json:"type" protobuf:"bytes,2,opt,name=type"`
	// Key is the label's or the annotation's key.
	Key string `json:"key" protobuf:"bytes,3,opt,name=key"`
}

// LabelKeys is the set of label keys of the archived workflows.
type LabelKeys struct {
	Items []string `json:"items,omitempty" protobuf:"bytes,1,rep,name=items"`
}

// LabelValues is the set of values of one label key among the archived
// workflows.
type LabelValues struct {
	Items []string `json:"items,omitempty" protobuf:"bytes,1,rep,name=items"`
}
