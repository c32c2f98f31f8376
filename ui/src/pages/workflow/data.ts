// Loading one workflow for the details page: a live one from the node
// stream (falling back to polling when the stream is not served), an
// archived one once by uid, and the archive's copy of a live one that goes.
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, qs, seg } from '../../lib/api';
import { watchWorkflow } from '../../lib/nodestream';
import { completed, type NodeStatus, type Template, type Workflow, type WorkflowSpec } from '../../lib/types';

/** How the page gets its data, for the live indicator. */
export type Feed = 'connecting' | 'live' | 'reconnecting' | 'polling' | 'archived' | 'gone';

export interface WorkflowData {
  wf?: Workflow;
  error?: Error;
  feed: Feed;
  /** Bumped on every update: nodes change in place, so memos key on this. */
  version: number;
  /** The uid of the archive's copy shown once the live workflow was deleted. */
  archivedUid?: string;
  /** Load again now (after an action). */
  refresh: () => void;
}

const pollEvery = 2000;
const pollCompleted = 10000;
/** Updates closer than this are batched into one render (big workflows):
 *  short, so that a change shows at once; the graph throttles its own
 *  rebuilds by their cost. */
const renderEvery = 40;

export const workflowPath = (ns: string, name: string) => `api/v1/workflows/${seg(ns)}/${seg(name)}`;
export const archivedPath = (uid: string, ns: string) => `api/v1/archived-workflows/${seg(uid)}${qs({ namespace: ns })}`;

/** isLive tells whether the store (not the archive) holds the workflow. */
async function isLive(ns: string, name: string, signal: AbortSignal): Promise<boolean> {
  const q = qs({ 'listOptions.fieldSelector': `metadata.name=${name}`, fields: 'items.metadata.name' });
  try {
    const l = await get<{ items?: unknown[] | null }>(`api/v1/workflows/${seg(ns)}${q}`, signal);
    return !!l.items?.length;
  } catch {
    return true;
  }
}

/**
 * useWorkflow follows the workflow ns/name, or the archived one of uid.
 * A live workflow is watched on the node stream; if that fails before its
 * first message (an older server), the workflow is polled instead.
 */
export function useWorkflow(ns: string, name: string | undefined, uid: string | undefined): WorkflowData {
  const [st, setSt] = useState<{ wf?: Workflow; error?: Error; feed: Feed; version: number; archivedUid?: string }>({ feed: 'connecting', version: 0 });
  const [tick, setTick] = useState(0);
  const refreshRef = useRef<() => void>(() => setTick((t) => t + 1));

  useEffect(() => {
    let stop = () => {};
    let closed = false;
    const set = (p: Partial<typeof st>) => { if (!closed) setSt((s) => ({ ...s, ...p, version: s.version + 1 })); };

    const loadArchived = (u: string, feed: Feed) => {
      const ac = new AbortController();
      stop = () => ac.abort();
      get<Workflow>(archivedPath(u, ns), ac.signal).then((wf) => set({ wf, error: undefined, feed }), (error) => set({ error, feed }));
    };

    // The poller: used when the stream is not there.
    const poll = () => {
      let timer = 0;
      const ac = new AbortController();
      let first = true;
      const once = async () => {
        clearTimeout(timer);
        try {
          const wf = await get<Workflow>(workflowPath(ns, name!), ac.signal);
          // The GET falls back to the archive; the list has only live ones.
          if (first && completed(wf.status?.phase) && !(await isLive(ns, name!, ac.signal))) {
            set({ wf, error: undefined, feed: 'archived', archivedUid: wf.metadata.uid });
            return;
          }
          first = false;
          set({ wf, error: undefined, feed: 'polling' });
          timer = window.setTimeout(once, completed(wf.status?.phase) ? pollCompleted : pollEvery);
        } catch (e) {
          if (ac.signal.aborted) return;
          const gone = e instanceof ApiError && e.status === 404;
          set({ error: e as Error, feed: gone ? 'gone' : 'polling' });
          if (!gone) timer = window.setTimeout(once, pollEvery);
        }
      };
      once();
      refreshRef.current = once;
      stop = () => { ac.abort(); clearTimeout(timer); };
    };

    // Deleted: the GET answers with the archive's copy when there is one.
    const afterGone = () => {
      const ac = new AbortController();
      stop = () => ac.abort();
      get<Workflow>(workflowPath(ns, name!), ac.signal).then(
        (wf) => set({ wf, error: undefined, feed: 'archived', archivedUid: wf.metadata.uid }),
        (error) => set({ error: error instanceof ApiError && error.status === 404 ? undefined : error, feed: 'gone' }));
      refreshRef.current = afterGone;
    };

    // The live feed: the node stream, its updates batched per frame.
    const watch = () => {
      let got = false;
      let pending: Workflow | null = null;
      let timer = 0;
      const flush = () => { timer = 0; if (pending) set({ wf: pending, error: undefined, feed: 'live' }); pending = null; };
      const cancel = watchWorkflow(ns, name!, (wf) => {
        got = true;
        pending = wf;
        if (!timer) timer = window.setTimeout(flush, renderEvery);
      }, () => {
        cancel(); clearTimeout(timer);
        if (!closed) afterGone();
      }, (e) => {
        if (!e) return;
        if (!got) { cancel(); if (!closed) poll(); return; }
        set({ feed: 'reconnecting' });
      });
      refreshRef.current = () => {
        // The stream brings changes by itself; an explicit refresh re-reads.
        get<Workflow>(workflowPath(ns, name!)).then((wf) => { if (!got) set({ wf }); }, () => {});
      };
      stop = () => { cancel(); clearTimeout(timer); };
    };

    setSt({ feed: 'connecting', version: 0 });
    refreshRef.current = () => setTick((t) => t + 1);
    if (uid) {
      loadArchived(uid, 'archived');
      refreshRef.current = () => loadArchived(uid, 'archived');
    } else if (name) watch();
    return () => { closed = true; stop(); };
  }, [ns, name, uid, tick]);

  return { ...st, refresh: () => refreshRef.current() };
}

/** fnv32a is the 32-bit FNV-1a hash of a string's UTF-8 bytes. */
function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * podName is the name of the pod of a node: the node ID under the v1
 * naming, else "<wf>-<template>-<fnv32a(node name)>" (the workflow's name
 * for its root node), as braid's printer.PodName works it out.
 */
export function podName(wf: Workflow, n: NodeStatus): string {
  const wfName = wf.metadata.name ?? '';
  if (wf.metadata.annotations?.['workflows.argoproj.io/pod-name-format'] === 'v1') return n.id;
  if (n.name === wfName) return wfName;
  const tmpl = n.templateRef?.template ?? n.templateName ?? '';
  let prefix = tmpl ? `${wfName}-${tmpl}` : wfName;
  if (prefix.length > 242) prefix = prefix.slice(0, 242);
  return `${prefix}-${fnv32a(n.name)}`;
}

/** The specs a node's template may come from: the workflow's and its stored template's. */
function specs(wf: Workflow): WorkflowSpec[] {
  return [wf.spec, wf.status?.storedWorkflowTemplateSpec].filter((s): s is WorkflowSpec => !!s);
}

/**
 * templateOf finds the template a node ran: a local one by name, a
 * templateRef's in status.storedTemplates or in the fetched templates.
 */
export function templateOf(wf: Workflow, n: NodeStatus, refs?: Map<string, WorkflowSpec>): Template | undefined {
  const ref = n.templateRef;
  if (ref) {
    const kind = ref.clusterScope ? 'cluster' : 'namespaced';
    const stored = wf.status?.storedTemplates?.[`${kind}/${ref.name}/${ref.template}`];
    if (stored) return stored;
    const spec = refs?.get(ref.clusterScope ? `cluster/${ref.name}` : ref.name);
    return spec?.templates?.find((t) => t.name === ref.template);
  }
  if (!n.templateName) return undefined;
  // A node inside a referenced template names its template in that one's scope.
  const [kind, scope] = (n.templateScope ?? '').split('/', 2);
  if (kind === 'namespaced' || kind === 'cluster') {
    const spec = refs?.get(kind === 'cluster' ? `cluster/${scope}` : scope);
    return spec?.templates?.find((t) => t.name === n.templateName);
  }
  for (const s of specs(wf)) {
    const t = s.templates?.find((x) => x.name === n.templateName);
    if (t) return t;
  }
  return undefined;
}

/** The templateRefs specs name (their tasks and steps), as "name" or "cluster/name". */
function refsOf(ss: WorkflowSpec[]): string[] {
  const out = new Set<string>();
  for (const s of ss) {
    for (const t of s.templates ?? []) {
      const items = [...(t.dag?.tasks ?? []), ...(t.steps ?? []).flat()];
      for (const x of items) if (x.templateRef) out.add(x.templateRef.clusterScope ? `cluster/${x.templateRef.name}` : x.templateRef.name);
    }
  }
  return [...out];
}

/**
 * useTemplateRefs fetches the WorkflowTemplates a workflow refers to, and
 * those they refer to (a few levels), for the graph's preview and the
 * node panel's containers.
 */
export function useTemplateRefs(wf: Workflow | undefined): Map<string, WorkflowSpec> | undefined {
  const keys = wf ? refsOf(specs(wf)).sort().join('\n') : '';
  const ns = wf?.metadata.namespace ?? '';
  const [map, setMap] = useState<Map<string, WorkflowSpec>>();
  useEffect(() => {
    if (!keys) { setMap(undefined); return; }
    const ac = new AbortController();
    const m = new Map<string, WorkflowSpec>();
    const fetchAll = async (ks: string[], depth: number): Promise<void> => {
      const got: WorkflowSpec[] = [];
      await Promise.all(ks.filter((k) => !m.has(k)).map(async (k) => {
        const path = k.startsWith('cluster/') ? `api/v1/cluster-workflow-templates/${seg(k.slice(8))}` : `api/v1/workflow-templates/${seg(ns)}/${seg(k)}`;
        try {
          const t = await get<{ spec: WorkflowSpec }>(path, ac.signal);
          m.set(k, t.spec);
          got.push(t.spec);
        } catch { /* gone or forbidden: the node panel shows less */ }
      }));
      const next = refsOf(got).filter((k) => !m.has(k));
      if (next.length && depth < 3) await fetchAll(next, depth + 1);
    };
    fetchAll(keys.split('\n'), 0).then(() => { if (!ac.signal.aborted) setMap(m); });
    return () => ac.abort();
  }, [keys, ns]);
  return map;
}
