// The preview: the graph a workflow's spec will make, before (and while)
// it runs. Node names follow Argo's, so that the status nodes found by name
// can replace their preview node when the workflow reaches them.
import type { DAGTask, NodeStatus, NodeType, Template, WorkflowSpec } from '../lib/types';

export interface PNode {
  name: string;
  display: string;
  type: NodeType;
  template?: string;
  /** A looped task or step: "× 3" (withItems), "× ?" (withParam). */
  fanout?: string;
  /** A looped step: its iterations are the status nodes "<name>(i:...)" (no aggregate node). */
  stepLoop?: boolean;
  /** Not expanded further: recursion, depth or size limit, or template not found. */
  note?: string;
}

export interface Preview {
  nodes: PNode[];
  src: number[];
  dst: number[];
  /** 1 when edge i leads from an outbound node to the next node, 0 when from a parent to its child. */
  seq: number[];
  /** Set when the size bound cut the preview short. */
  truncated?: boolean;
}

export interface PreviewInput {
  rootName: string;
  spec: WorkflowSpec;
  /** status.storedTemplates: "namespaced/<wftmpl>/<template>", "cluster/<cwftmpl>/<template>". */
  stored?: Record<string, Template>;
  storedSpec?: WorkflowSpec;
  /** WorkflowTemplates by "name", ClusterWorkflowTemplates by "cluster/name". */
  templates?: Map<string, WorkflowSpec>;
  /** Status nodes by name, to follow retried Steps/DAG nodes into their last attempt. */
  status?: Map<string, NodeStatus>;
}

const MAX_DEPTH = 20;
const MAX_NODES = 20000;

type Ref = { name: string; cluster: boolean };
/** Where a template's own `template:` references resolve: the workflow (ref absent) or a WorkflowTemplate. */
interface Scope { templates?: Template[]; ref?: Ref }
interface Resolved { t?: Template; scope: Scope; key: string }

const depNames = /[A-Za-z0-9_][A-Za-z0-9_-]*/g;
const depSuffix = /\.(Succeeded|Failed|Errored|Skipped|Omitted|Daemoned|AnySucceeded|AllFailed)$/;

/** dependsOn lists the task names in `dependencies` and in a `depends` expression ("A.Succeeded && (B || C.Failed)"). */
export function dependsOn(task: DAGTask): string[] {
  if (!task.depends) return task.dependencies ?? [];
  const out = new Set<string>(task.dependencies ?? []);
  if (task.depends) {
    // Split on the operators, then drop the ".Result" part of each operand.
    for (const part of task.depends.split(/&&|\|\||[!()\s]+/)) {
      const op = part.trim().replace(depSuffix, '');
      if (!op) continue;
      const m = op.match(depNames);
      if (m && m[0] === op) out.add(op);
    }
  }
  return [...out];
}

/** fmt writes a count with thousands separators (toLocaleString is slow on its first call). */
export function fmt(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** fanout describes a loop: "× N" for a literal list or sequence, "× ?" when known only at run time. */
export function fanout(task: DAGTask): string | undefined {
  if (Array.isArray(task.withItems)) return `× ${fmt(task.withItems.length)}`;
  if (task.withParam) return '× ?';
  const seq = task.withSequence as { count?: unknown; start?: unknown; end?: unknown } | undefined;
  if (seq && typeof seq === 'object') {
    const num = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : NaN);
    const c = num(seq.count);
    if (!Number.isNaN(c)) return `× ${c}`;
    const s = num(seq.start ?? 0), e = num(seq.end);
    if (!Number.isNaN(s) && !Number.isNaN(e)) return `× ${Math.abs(e - s) + 1}`;
    return '× ?';
  }
  return undefined;
}

function typeOf(t?: Template): NodeType {
  if (!t) return 'Pod';
  if (t.dag) return 'DAG';
  if (t.steps) return 'Steps';
  if (t.suspend) return 'Suspend';
  if (t.http) return 'HTTP';
  if (t.plugin) return 'Plugin';
  return 'Pod';
}

class Expander {
  nodes: PNode[] = [];
  src: number[] = [];
  dst: number[] = [];
  seq: number[] = [];
  truncated = false;
  private inlines = 0;
  private stack = new Set<string>();
  constructor(private inp: PreviewInput) {}

  specOf(ref: Ref): WorkflowSpec | undefined {
    const m = this.inp.templates;
    if (!m) return undefined;
    return ref.cluster ? m.get(`cluster/${ref.name}`) ?? m.get(ref.name) : m.get(ref.name) ?? m.get(`cluster/${ref.name}`);
  }

  private resolved = new Map<string, Resolved>();

  /** local resolves a template name in a scope (remembered: a DAG of 10,000 tasks names few templates). */
  local(name: string | undefined, scope: Scope): Resolved {
    const key = `${scope.ref ? `${scope.ref.cluster ? 'c' : 'n'}/${scope.ref.name}` : 'local'}/${name}`;
    if (!name) return { scope, key };
    const got = this.resolved.get(key);
    if (got) return got;
    const r = this.find(name, scope, key);
    this.resolved.set(key, r);
    return r;
  }

  private find(name: string, scope: Scope, key: string): Resolved {
    const inList = (l?: Template[]) => l?.find((t) => t.name === name);
    if (scope.ref) {
      const t = inList(scope.templates) ?? this.stored(scope.ref, name);
      return { t, scope, key };
    }
    const wfRef = this.inp.spec.workflowTemplateRef;
    const t = inList(this.inp.spec.templates) ?? inList(this.inp.storedSpec?.templates)
      ?? (wfRef ? inList(this.specOf({ name: wfRef.name, cluster: !!wfRef.clusterScope })?.templates) : undefined);
    return { t, scope, key };
  }

  private stored(ref: Ref, template: string): Template | undefined {
    const st = this.inp.stored;
    if (!st) return undefined;
    return st[`${ref.cluster ? 'cluster' : 'namespaced'}/${ref.name}/${template}`];
  }

  /** ofTask resolves what a task or step runs: a local template, a templateRef or an inline template. */
  ofTask(task: DAGTask, scope: Scope): Resolved {
    const inline = (task as { inline?: Template }).inline;
    if (inline) return { t: inline, scope, key: `inline/${++this.inlines}` };
    if (task.templateRef) {
      const ref = { name: task.templateRef.name, cluster: !!task.templateRef.clusterScope };
      const spec = this.specOf(ref);
      return this.local(task.templateRef.template, { templates: spec?.templates, ref });
    }
    return this.local(task.template, scope);
  }

  add(n: PNode): number {
    this.nodes.push(n);
    return this.nodes.length - 1;
  }

  edge(a: number, b: number, seq = 0) {
    this.src.push(a);
    this.dst.push(b);
    this.seq.push(seq);
  }

  full() {
    if (this.nodes.length >= MAX_NODES) this.truncated = true;
    return this.truncated;
  }

  /** node adds the node `name` running r (expanded when it is a DAG or steps) and returns its outbound nodes. */
  node(name: string, display: string, r: Resolved, depth: number): { id: number; out: number[] } {
    const t = r.t;
    const type = typeOf(t);
    const id = this.add({ name, display, type, template: t?.name });
    if (!t) {
      this.nodes[id].note = 'template not found';
      return { id, out: [id] };
    }
    if (type !== 'DAG' && type !== 'Steps') return { id, out: [id] };
    if (depth >= MAX_DEPTH || this.stack.has(r.key) || this.full()) {
      this.nodes[id].note = this.stack.has(r.key) ? 'recursive' : 'not expanded';
      return { id, out: [id] };
    }
    // A retried DAG or steps node runs its body in attempts "<name>(n)": follow the last one.
    let inner = name, innerId = id;
    const st = this.inp.status?.get(name);
    if (st?.type === 'Retry') {
      this.nodes[id].type = 'Retry';
      const attempts = (st.children ?? []).map((c) => this.nameOf(c)).filter((n): n is string => !!n && /\(\d+\)$/.test(n));
      if (attempts.length) {
        inner = attempts[attempts.length - 1];
        innerId = this.add({ name: inner, display: inner.slice(name.length), type, template: t.name });
        this.edge(id, innerId);
      }
    }
    this.stack.add(r.key);
    const out = t.dag ? this.dag(inner, innerId, t, r.scope, depth) : this.steps(inner, innerId, t, r.scope, depth);
    this.stack.delete(r.key);
    return { id, out: out.length ? out : [innerId] };
  }

  private byId?: Map<string, string>;
  private nameOf(id: string): string | undefined {
    if (!this.byId) {
      this.byId = new Map();
      for (const [name, n] of this.inp.status ?? []) this.byId.set(n.id, name);
    }
    return this.byId.get(id);
  }

  private dag(name: string, id: number, t: Template, scope: Scope, depth: number): number[] {
    const tasks = t.dag?.tasks ?? [];
    const outs = new Map<string, number[]>();
    const ids = new Map<string, number>();
    for (const task of tasks) {
      if (this.full()) break;
      const tn = `${name}.${task.name}`;
      const fo = fanout(task);
      const r = this.ofTask(task, scope);
      if (fo) {
        const fid = this.add({ name: tn, display: task.name, type: 'TaskGroup', template: r.t?.name, fanout: fo });
        ids.set(task.name, fid);
        outs.set(task.name, [fid]);
        continue;
      }
      const { id: tid, out } = this.node(tn, task.name, r, depth + 1);
      ids.set(task.name, tid);
      outs.set(task.name, out);
    }
    const used = new Set<string>();
    for (const task of tasks) {
      const tid = ids.get(task.name);
      if (tid === undefined) continue;
      let linked = false;
      for (const d of dependsOn(task)) {
        const out = d !== task.name ? outs.get(d) : undefined;
        if (!out) continue;
        linked = true;
        used.add(d);
        for (const o of out) this.edge(o, tid, 1);
      }
      if (!linked) this.edge(id, tid);
    }
    const target = typeof (t.dag as { target?: string }).target === 'string'
      ? (t.dag as { target?: string }).target!.split(/[\s,]+/).filter((x) => ids.has(x)) : [];
    const ends = target.length ? target : tasks.map((x) => x.name).filter((x) => ids.has(x) && !used.has(x));
    return ends.flatMap((x) => outs.get(x) ?? []);
  }

  private steps(name: string, id: number, t: Template, scope: Scope, depth: number): number[] {
    let prev: number[] = [id];
    (t.steps ?? []).forEach((group, i) => {
      if (this.full()) return;
      const gname = `${name}[${i}]`;
      const gid = this.add({ name: gname, display: `[${i}]`, type: 'StepGroup' });
      for (const p of prev) this.edge(p, gid, i ? 1 : 0);
      const out: number[] = [];
      for (const step of group ?? []) {
        if (this.full()) break;
        const sn = `${gname}.${step.name}`;
        const r = this.ofTask(step, scope);
        const fo = fanout(step);
        if (fo) {
          const sid = this.add({ name: sn, display: step.name, type: typeOf(r.t), template: r.t?.name, fanout: fo, stepLoop: true });
          this.edge(gid, sid);
          out.push(sid);
          continue;
        }
        const res = this.node(sn, step.name, r, depth + 1);
        this.edge(gid, res.id);
        out.push(...res.out);
      }
      prev = out.length ? out : [gid];
    });
    return prev;
  }
}

/** expandSpec builds the preview of a workflow (rootName = its name) or of a template's spec. */
export function expandSpec(inp: PreviewInput): Preview {
  const x = new Expander(inp);
  const wfRef = inp.spec.workflowTemplateRef;
  const refSpec = wfRef ? x.specOf({ name: wfRef.name, cluster: !!wfRef.clusterScope }) : undefined;
  const entry = inp.spec.entrypoint ?? inp.storedSpec?.entrypoint ?? refSpec?.entrypoint;
  if (!entry) return { nodes: [], src: [], dst: [], seq: [] };
  const root = x.node(inp.rootName, inp.rootName, x.local(entry, {}), 0);
  const onExit = (inp.spec.onExit ?? inp.storedSpec?.onExit ?? refSpec?.onExit) as string | undefined;
  if (onExit && typeof onExit === 'string') {
    const ex = x.node(`${inp.rootName}.onExit`, `${inp.rootName}.onExit`, x.local(onExit, {}), 1);
    for (const o of root.out) x.edge(o, ex.id, 1);
  }
  return { nodes: x.nodes, src: x.src, dst: x.dst, seq: x.seq, truncated: x.truncated };
}
