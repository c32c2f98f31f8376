// The graph model: a workflow's status nodes merged with the preview of its
// spec, then folded (wide fan-outs show a window and a "+N more" node) into
// the compact arrays the layout worker and the canvas use.
import type { NodeStatus, NodeType, Workflow, WorkflowSpec } from '../lib/types';
import { expandSpec, type Preview } from './preview';

/** The phase shown for a preview node the workflow has not reached. */
export const NOT_STARTED = 'Pending (not started)';

export interface GNode {
  id: string;
  name: string;
  label: string;
  type: NodeType;
  phase: string;
  /** From the spec only: no status node yet. */
  preview: boolean;
  fanout?: string;
  note?: string;
  templateName?: string;
  status?: NodeStatus;
}

export interface Graph {
  nodes: GNode[];
  src: Int32Array;
  dst: Int32Array;
  byId: Map<string, number>;
  truncated?: boolean;
}

/** fnv1a is the 32-bit FNV-1a hash of s's UTF-8 bytes (Argo's node IDs). */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  const bytes = /^[\x00-\x7f]*$/.test(s) ? null : new TextEncoder().encode(s);
  const len = bytes ? bytes.length : s.length;
  for (let i = 0; i < len; i++) {
    h ^= bytes ? bytes[i] : s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** nodeId is the ID Argo gives the node named name in workflow wf. */
export function nodeId(wf: string, name: string): string {
  return name === wf ? wf : `${wf}-${fnv1a(name)}`;
}

const loopSuffix = /\(\d+:[^()]*\)$/;

/** workflowGraph merges the status nodes of wf with the preview of its spec. */
export function workflowGraph(wf: Workflow, templates?: Map<string, WorkflowSpec>): Graph {
  const name = wf.metadata?.name ?? 'workflow';
  const nodes = wf.status?.nodes ?? {};
  const byName = new Map<string, NodeStatus>();
  for (const id in nodes) byName.set(nodes[id].name, nodes[id]);
  const pv = expandSpec({
    rootName: name, spec: wf.spec ?? {}, stored: wf.status?.storedTemplates,
    storedSpec: wf.status?.storedWorkflowTemplateSpec, templates, status: byName,
  });
  return merge(name, nodes, byName, pv, (n) => nodeId(name, n));
}

/** templateGraph is the preview of a template's spec (its nodes' IDs are their names). */
export function templateGraph(spec: WorkflowSpec, name = 'workflow', templates?: Map<string, WorkflowSpec>): Graph {
  const pv = expandSpec({ rootName: name, spec, templates });
  return merge(name, {}, new Map(), pv, (n) => n);
}

class Edges {
  src: number[] = [];
  dst: number[] = [];
  private seen = new Set<number>();
  constructor(private m: number) {}
  add(a: number, b: number) {
    if (a === b || a < 0 || b < 0) return;
    const k = a * this.m + b;
    if (this.seen.has(k)) return;
    this.seen.add(k);
    this.src.push(a);
    this.dst.push(b);
  }
}

/** outbound follows Argo's outbound nodes (the nodes the next step or task hangs from). */
function outboundOf(nodes: Record<string, NodeStatus>) {
  const memo = new Map<string, string[]>();
  const leaf = (t: string) => t !== 'TaskGroup' && t !== 'Retry' && t !== 'Steps' && t !== 'DAG' && t !== 'Pod';
  // collect appends the outbound nodes of id to out (a leaf is its own: no array of its own).
  const collect = (id: string, out: string[], depth: number) => {
    const n = nodes[id];
    if (!n || depth > 50 || leaf(n.type)) { out.push(id); return; }
    let got = memo.get(id);
    if (!got) {
      got = [];
      const t = n.type;
      if (t === 'TaskGroup' || t === 'Pod') {
        // A TaskGroup: its iterations'; a containerSet pod: its containers'.
        for (const c of n.children ?? []) if (nodes[c] && (t === 'TaskGroup' || nodes[c].type === 'Container')) collect(c, got, depth + 1);
      } else if (t === 'Retry') {
        const last = n.children?.[n.children.length - 1];
        if (last && nodes[last]) got.push(last);
      } else {
        for (const c of n.outboundNodes ?? []) if (nodes[c] && c !== id) collect(c, got, depth + 1);
      }
      if (!got.length) got.push(id);
      memo.set(id, got);
    }
    for (const x of got) out.push(x);
  };
  return (id: string) => { const out: string[] = []; collect(id, out, 0); return out; };
}

function merge(wfName: string, status: Record<string, NodeStatus>, byName: Map<string, NodeStatus>,
  pv: Preview, idOf: (name: string) => string): Graph {
  const gn: GNode[] = [];
  const byId = new Map<string, number>();
  const addStatus = (s: NodeStatus) => {
    if (byId.has(s.id)) return;
    byId.set(s.id, gn.length);
    gn.push({
      id: s.id, name: s.name, label: s.displayName || s.name, type: s.type, phase: s.phase || 'Pending',
      preview: false, templateName: s.templateRef?.template ?? s.templateName, status: s,
    });
  };
  // The root first: the layout places sources in this order.
  const root = byName.get(wfName);
  if (root) addStatus(root);
  for (const id in status) addStatus(status[id]);
  // Looped steps have no aggregate node: their iterations stand for the preview's looped step.
  const loops = new Map<string, string[]>();
  if (pv.nodes.some((p) => p.stepLoop)) for (const s of gn) {
    if (!loopSuffix.test(s.name)) continue;
    const base = s.name.replace(loopSuffix, '');
    const l = loops.get(base);
    if (l) l.push(s.id);
    else loops.set(base, [s.id]);
  }
  // Each preview node is a status node (by name), a set of loop iterations, or a pending node.
  const res: (number | string[])[] = [];
  for (const p of pv.nodes) {
    const s = byName.get(p.name);
    if (s) { res.push(byId.get(s.id)!); continue; }
    const it = p.stepLoop ? loops.get(p.name) : undefined;
    if (it) { res.push(it); continue; }
    const id = idOf(p.name);
    if (byId.has(id)) { res.push(byId.get(id)!); continue; }
    byId.set(id, gn.length);
    res.push(gn.length);
    gn.push({
      id, name: p.name, label: p.display, type: p.type, phase: NOT_STARTED, preview: true,
      fanout: p.fanout, note: p.note, templateName: p.template,
    });
  }
  // Status children are unique per node: only the edges added after them need the check for duplicates.
  const E = new Edges(gn.length + 1);
  for (let a = 0; a < gn.length; a++) {
    const s = gn[a].status;
    if (!s?.children) continue;
    for (const c of s.children) {
      const b = byId.get(c);
      if (b !== undefined && b !== a) { E.src.push(a); E.dst.push(b); }
    }
  }
  const outbound = outboundOf(status);
  const ix = (id: string) => byId.get(id) ?? -1;
  // "<wf>.onExit" is nobody's child: hang it under the workflow's outbound nodes.
  const exit = byName.get(`${wfName}.onExit`);
  if (root && exit) for (const o of outbound(root.id)) E.add(ix(o), ix(exit.id));
  for (let e = 0; e < pv.src.length; e++) {
    const ra = res[pv.src[e]], rb = res[pv.dst[e]];
    const aPending = typeof ra === 'number' && gn[ra].preview;
    const bPending = typeof rb === 'number' && gn[rb].preview;
    if (!aPending && !bPending) continue; // the status links these itself
    const sources = aPending ? [ra as number] : fromStatus(ra, pv.seq[e] === 1, gn, outbound, ix);
    const targets = typeof rb === 'number' ? [rb] : rb.map(ix);
    for (const a of sources) for (const b of targets) E.add(a, b);
  }
  return { nodes: gn, src: Int32Array.from(E.src), dst: Int32Array.from(E.dst), byId, truncated: pv.truncated };
}

/** fromStatus gives the graph indices an edge leaves from when its preview source has run. */
function fromStatus(r: number | string[], seq: boolean, gn: GNode[], outbound: (id: string) => string[],
  ix: (id: string) => number): number[] {
  const ids = typeof r === 'number' ? [gn[r].id] : r;
  if (!seq) return ids.map(ix);
  return ids.flatMap((id) => outbound(id).map(ix));
}

// ---- folding ----

/** A node with more children than this shows only the first WINDOW of them. */
export const FOLD_AT = 50;
export const WINDOW = 10;

export interface View {
  n: number;
  /** Node IDs; a fold node's is "fold:<parent ID>". */
  ids: string[];
  /** The graph index of each view node; -1 for a fold node. */
  g: Int32Array;
  /** For a fold node: its parent's graph index and how many children it hides. */
  foldParent: Int32Array;
  foldCount: Int32Array;
  src: Int32Array;
  dst: Int32Array;
  /** For each graph node: the graph index of the parent whose fold hides it, or -1 when shown. */
  hiddenBy: Int32Array;
  /** For each graph node shown: its view index (or -1). */
  viewOf: Int32Array;
  /** Parents that have an open fold (could fold back) and those that are folded. */
  unfolded: number;
  folded: number;
}

/** fold hides the children past the window of each wide parent not in `open` (a set of parent IDs), and what only they reach. */
export function fold(g: Graph, open: ReadonlySet<string>): View {
  const n = g.nodes.length, m = g.src.length;
  const outOff = new Int32Array(n + 1), inDeg = new Int32Array(n);
  for (let e = 0; e < m; e++) { outOff[g.src[e] + 1]++; inDeg[g.dst[e]]++; }
  for (let v = 0; v < n; v++) outOff[v + 1] += outOff[v];
  const outE = new Int32Array(m);
  const fill = outOff.slice(0, n);
  for (let e = 0; e < m; e++) outE[fill[g.src[e]]++] = e;
  // cut[e]: the edge from a folded parent to a child past the window.
  const cut = new Uint8Array(m);
  let unfolded = 0;
  for (let v = 0; v < n; v++) {
    const deg = outOff[v + 1] - outOff[v];
    if (deg <= FOLD_AT) continue;
    if (open.has(g.nodes[v].id)) { unfolded++; continue; }
    for (let k = outOff[v] + WINDOW; k < outOff[v + 1]; k++) cut[outE[k]] = 1;
  }
  // In topological order (Kahn): a node is hidden when every edge into it is cut or comes from a hidden node.
  const hidden = new Uint8Array(n);
  const group = new Int32Array(n).fill(-1);
  const blocked = new Int32Array(n);
  const left = inDeg.slice();
  const queue = new Int32Array(n);
  let qh = 0, qt = 0;
  for (let v = 0; v < n; v++) if (left[v] === 0) queue[qt++] = v;
  while (qh < qt) {
    const v = queue[qh++];
    if (inDeg[v] > 0 && blocked[v] === inDeg[v]) hidden[v] = 1;
    for (let k = outOff[v]; k < outOff[v + 1]; k++) {
      const e = outE[k], u = g.dst[e];
      if (cut[e] || hidden[v]) {
        blocked[u]++;
        if (group[u] < 0) group[u] = hidden[v] ? group[v] : v;
      }
      if (--left[u] === 0) queue[qt++] = u;
    }
  }
  for (let v = 0; v < n; v++) if (!hidden[v]) group[v] = -1;
  return buildView(g, hidden, group, cut, outOff, outE, unfolded);
}

function buildView(g: Graph, hidden: Uint8Array, group: Int32Array, cut: Uint8Array,
  outOff: Int32Array, outE: Int32Array, unfolded: number): View {
  const n = g.nodes.length, m = g.src.length;
  const viewOf = new Int32Array(n).fill(-1);
  const ids: string[] = [];
  const gi: number[] = [];
  for (let v = 0; v < n; v++) {
    if (hidden[v]) continue;
    viewOf[v] = ids.length;
    ids.push(g.nodes[v].id);
    gi.push(v);
  }
  // One fold node per parent that hides children.
  const foldOf = new Int32Array(n).fill(-1);
  const fp: number[] = [], fc: number[] = [];
  for (let v = 0; v < n; v++) {
    if (hidden[v]) continue;
    let c = 0;
    for (let k = outOff[v]; k < outOff[v + 1]; k++) if (cut[outE[k]] && hidden[g.dst[outE[k]]]) c++;
    if (!c) continue;
    foldOf[v] = ids.length;
    ids.push(`fold:${g.nodes[v].id}`);
    gi.push(-1);
    fp.push(v);
    fc.push(c);
  }
  const N = ids.length;
  const E = new Edges(N + 1);
  for (let v = 0; v < n; v++) {
    if (hidden[v]) continue;
    for (let k = outOff[v]; k < outOff[v + 1]; k++) {
      const u = g.dst[outE[k]];
      if (!hidden[u]) E.add(viewOf[v], viewOf[u]);
    }
    if (foldOf[v] >= 0) E.add(viewOf[v], foldOf[v]);
  }
  // What the hidden nodes lead to hangs from their fold node.
  for (let e = 0; e < m; e++) {
    const a = g.src[e], b = g.dst[e];
    if (hidden[a] && !hidden[b] && group[a] >= 0) E.add(foldOf[group[a]], viewOf[b]);
  }
  const foldParent = new Int32Array(N).fill(-1), foldCount = new Int32Array(N);
  fp.forEach((p, i) => { foldParent[foldOf[p]] = p; foldCount[foldOf[p]] = fc[i]; });
  return {
    n: N, ids, g: Int32Array.from(gi), foldParent, foldCount, src: Int32Array.from(E.src), dst: Int32Array.from(E.dst),
    hiddenBy: group, viewOf, unfolded, folded: fp.length,
  };
}

/** sameStructure says whether two views have the same nodes and edges (then the layout stays). */
export function sameStructure(a: View | undefined, b: View): boolean {
  if (!a || a.n !== b.n || a.src.length !== b.src.length) return false;
  for (let i = 0; i < a.n; i++) if (a.ids[i] !== b.ids[i]) return false;
  for (let i = 0; i < a.src.length; i++) if (a.src[i] !== b.src[i] || a.dst[i] !== b.dst[i]) return false;
  return true;
}

/** reveal returns the open set (and its view) in which graph node v shows, opening the folds that hide it. */
export function reveal(g: Graph, open: ReadonlySet<string>, view: View, v: number): { open: Set<string>; view: View } {
  const next = new Set(open);
  for (let i = 0; i < 20 && view.hiddenBy[v] >= 0; i++) {
    next.add(g.nodes[view.hiddenBy[v]].id);
    view = fold(g, next);
  }
  return { open: next, view };
}
