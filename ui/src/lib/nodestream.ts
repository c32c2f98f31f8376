// A workflow kept up to date from the server's node stream
// (GET api/v1/workflow-node-events/{ns}/{name}): a snapshot, then only what
// changed, so a 10,000-node workflow costs bytes in proportion to its
// changes rather than its size.
import { seg, stream } from './api';
import type { NodeStatus, Workflow } from './types';

/** One message of the node stream (the "result" of each SSE message). */
export interface NodeEvent {
  type: 'SNAPSHOT' | 'CHANGED' | 'DELETED';
  /** The workflow without status.nodes; spec only on SNAPSHOT or when it changed. */
  workflow?: Workflow;
  /** SNAPSHOT: every node; CHANGED: the nodes added or changed, whole. */
  nodes?: Record<string, NodeStatus>;
  /** IDs of nodes that are gone. */
  removedNodes?: string[];
}

/**
 * watchWorkflow calls onUpdate with the whole workflow after each event
 * (the same nodes object, changed in place, and a new workflow object), and
 * onGone when it is deleted. It returns the function that stops watching.
 */
export function watchWorkflow(ns: string, name: string, onUpdate: (wf: Workflow, changed: string[]) => void,
  onGone?: () => void, onError?: (e: Error | null) => void): () => void {
  let wf: Workflow | null = null;
  let nodes: Record<string, NodeStatus> = {};
  return stream<NodeEvent>(`api/v1/workflow-node-events/${seg(ns)}/${seg(name)}`, (ev) => {
    if (ev.type === 'DELETED') {
      onGone?.();
      return;
    }
    if (ev.type === 'SNAPSHOT') nodes = {};
    const changed = Object.keys(ev.nodes ?? {});
    Object.assign(nodes, ev.nodes ?? {});
    for (const id of ev.removedNodes ?? []) delete nodes[id];
    const next = ev.workflow ?? wf;
    if (!next) return;
    const spec = ev.workflow?.spec ?? wf?.spec ?? {};
    wf = { ...next, spec, status: { ...(next.status ?? {}), nodes } };
    onUpdate(wf, ev.type === 'SNAPSHOT' ? Object.keys(nodes) : changed.concat(ev.removedNodes ?? []));
  }, onError);
}
