// Test fixtures: big workflows with realistic status nodes, for measuring
// the graph (layout time, frame rate) without a server.
import type { NodeStatus, Workflow } from '../lib/types';
import { nodeId } from './model';

export interface WideOptions {
  /** Name of the workflow (default "wide"). */
  name?: string;
  /** Finished: every pod Succeeded and the join ran. Otherwise the fan-out is part way. */
  finished?: boolean;
}

/**
 * makeWideWorkflow returns a DAG workflow of n pods: a task "gen", a task
 * "work" over n-2 items (a TaskGroup and its n-2 iterations), and a
 * task "join" after it; its status is part way through the fan-out unless
 * finished is set (then the join ran too).
 */
export function makeWideWorkflow(n: number, opts: WideOptions = {}): Workflow {
  const name = opts.name ?? 'wide';
  const items = Math.max(1, n - 2);
  const t0 = Date.parse('2024-05-01T10:00:00Z');
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const nodes: Record<string, NodeStatus> = {};
  const add = (nodeName: string, s: Partial<NodeStatus>): NodeStatus => {
    const id = nodeId(name, nodeName);
    const display = nodeName === name ? name : nodeName.slice(name.length + 1);
    const node: NodeStatus = {
      id, name: nodeName, displayName: display, type: 'Pod', templateName: 'echo',
      templateScope: `local/${name}`, phase: 'Succeeded', boundaryID: nodeName === name ? undefined : name, ...s,
    };
    nodes[id] = node;
    return node;
  };
  const finished = !!opts.finished;
  const root = add(name, { type: 'DAG', templateName: 'main', phase: finished ? 'Succeeded' : 'Running', startedAt: at(0), finishedAt: finished ? at(900) : null });
  const gen = add(`${name}.gen`, { startedAt: at(1), finishedAt: at(11) });
  const group = add(`${name}.work`, { type: 'TaskGroup', phase: finished ? 'Succeeded' : 'Running', startedAt: at(12), finishedAt: finished ? at(880) : null });
  root.children = [gen.id];
  gen.children = [group.id];
  group.children = [];
  const join = finished ? add(`${name}.join`, { startedAt: at(881), finishedAt: at(899) }) : undefined;
  for (let i = 0; i < items; i++) {
    // Part way: most done, a few failed, a band running, the rest pending.
    const f = i / items;
    const phase = finished ? 'Succeeded' : f < 0.6 ? (i % 97 === 13 ? 'Failed' : 'Succeeded') : f < 0.7 ? 'Running' : 'Pending';
    const done = phase === 'Succeeded' || phase === 'Failed';
    const it = add(`${name}.work(${i}:item-${i})`, {
      phase, startedAt: phase === 'Pending' ? null : at(12 + (i % 300)), finishedAt: done ? at(40 + (i % 300)) : null,
      message: phase === 'Failed' ? 'main: Error (exit code 1)' : undefined,
    });
    group.children.push(it.id);
    if (join) it.children = [join.id];
  }
  if (finished) root.outboundNodes = [join!.id];
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Workflow',
    metadata: { name, namespace: 'default', uid: 'fixture', creationTimestamp: at(0) },
    spec: {
      entrypoint: 'main',
      templates: [
        {
          name: 'main',
          dag: {
            tasks: [
              { name: 'gen', template: 'echo' },
              { name: 'work', template: 'echo', depends: 'gen', withItems: Array.from({ length: items }, (_, i) => `item-${i}`) },
              { name: 'join', template: 'echo', depends: 'work.Succeeded' },
            ],
          },
        },
        { name: 'echo', container: { image: 'busybox', command: ['echo', 'hi'] } },
      ],
    },
    status: { phase: finished ? 'Succeeded' : 'Running', startedAt: at(0), finishedAt: finished ? at(900) : null, nodes },
  };
}

/**
 * makeMeshWorkflow returns a DAG workflow of n pods in layers of `width`
 * tasks, each depending on two tasks of the layer before: nothing to fold,
 * so the whole graph is laid out and drawn.
 */
export function makeMeshWorkflow(n: number, width = 50, name = 'mesh'): Workflow {
  const t0 = Date.parse('2024-05-01T10:00:00Z');
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  const tasks: { name: string; template: string; dependencies?: string[] }[] = [];
  const nodes: Record<string, NodeStatus> = {};
  const root: NodeStatus = { id: name, name, displayName: name, type: 'DAG', templateName: 'main', phase: 'Running', startedAt: at(0), children: [] };
  nodes[name] = root;
  const tn = (i: number) => `t${i}`;
  for (let i = 0; i < n; i++) {
    const layer = Math.floor(i / width), col = i % width;
    const deps = layer === 0 ? [] : [tn((layer - 1) * width + col), tn((layer - 1) * width + ((col + 1) % width))];
    tasks.push({ name: tn(i), template: 'echo', dependencies: deps.length ? deps : undefined });
  }
  // Status for the first 80%: the rest is still to come (the preview shows it).
  const done = Math.floor(n * 0.8);
  for (let i = 0; i < done; i++) {
    const nn = `${name}.${tn(i)}`;
    const id = nodeId(name, nn);
    const phase = i < done - width ? (i % 211 === 7 ? 'Failed' : 'Succeeded') : 'Running';
    nodes[id] = { id, name: nn, displayName: tn(i), type: 'Pod', templateName: 'echo', phase, boundaryID: name, startedAt: at(i), finishedAt: phase === 'Running' ? null : at(i + 5), children: [] };
    if (i < width) root.children!.push(id);
  }
  for (let i = 0; i < done; i++) {
    for (const d of tasks[i].dependencies ?? []) nodes[nodeId(name, `${name}.${d}`)].children!.push(nodeId(name, `${name}.${tn(i)}`));
  }
  return {
    metadata: { name, namespace: 'default' },
    spec: { entrypoint: 'main', templates: [{ name: 'main', dag: { tasks } }, { name: 'echo', container: { image: 'busybox' } }] },
    status: { phase: 'Running', startedAt: at(0), nodes },
  };
}
