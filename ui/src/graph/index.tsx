// The graph of a workflow or a template (stub: the graph helper replaces it).
import type { Workflow, WorkflowSpec } from '../lib/types';

export interface WorkflowGraphProps {
  /** The workflow, with status.nodes (may be empty: the preview from the spec shows). */
  workflow: Workflow;
  /** Templates a templateRef names, looked up by "name" or "cluster/name"; may be absent. */
  templates?: Map<string, WorkflowSpec>;
  /** The selected node's ID (a status node ID, or a preview node's ID). */
  selected?: string;
  onSelect?: (nodeId: string) => void;
}

export function WorkflowGraph(_: WorkflowGraphProps) {
  return <div class="graph">graph</div>;
}

export interface TemplateGraphProps {
  /** The spec of a WorkflowTemplate, ClusterWorkflowTemplate or a CronWorkflow's workflowSpec. */
  spec: WorkflowSpec;
  name?: string;
  templates?: Map<string, WorkflowSpec>;
}

export function TemplateGraph(_: TemplateGraphProps) {
  return <div class="graph">graph</div>;
}
