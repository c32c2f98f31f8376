// The graph of a workflow (status merged with the preview of its spec) or
// of a template (preview only): laid out in a worker, drawn on a canvas.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { NodeStatus, Workflow, WorkflowSpec } from '../lib/types';
import { duration } from '../lib/ui';
import { GraphCanvas, drawMs, frames } from './canvas';
import { layoutAsync, warm } from './client';
import { FOLD_AT, NOT_STARTED, fold, reveal, sameStructure, templateGraph, workflowGraph, type Graph, type View } from './model';
import { fmt } from './preview';
import { buildScene, paint, sizes, type Scene } from './scene';

/** What onSelect passes besides the ID: enough to show a node that has no status yet. */
export interface GraphNodeInfo {
  id: string;
  name: string;
  displayName: string;
  type: string;
  phase: string;
  /** From the spec only: the workflow has not reached it (its ID is the one Argo will give it). */
  preview: boolean;
  templateName?: string;
  status?: NodeStatus;
}

export interface WorkflowGraphProps {
  /** The workflow, with status.nodes (may be empty: the preview from the spec shows). */
  workflow: Workflow;
  /** Templates a templateRef names, looked up by "name" or "cluster/name"; may be absent. */
  templates?: Map<string, WorkflowSpec>;
  /** The selected node's ID (a status node ID, or a preview node's ID). */
  selected?: string;
  onSelect?: (nodeId: string, node?: GraphNodeInfo) => void;
  /** CSS height of the graph (default 70vh, at least 360px). */
  height?: string;
}

export function WorkflowGraph(p: WorkflowGraphProps) {
  const graph = useThrottled(() => workflowGraph(p.workflow, p.templates), [p.workflow, p.templates]);
  return <GraphPanel graph={graph} selected={p.selected} onSelect={p.onSelect} height={p.height} />;
}

export interface TemplateGraphProps {
  /** The spec of a WorkflowTemplate, ClusterWorkflowTemplate or a CronWorkflow's workflowSpec. */
  spec: WorkflowSpec;
  name?: string;
  templates?: Map<string, WorkflowSpec>;
  selected?: string;
  onSelect?: (nodeId: string, node?: GraphNodeInfo) => void;
  height?: string;
}

export function TemplateGraph(p: TemplateGraphProps) {
  const graph = useMemo(() => templateGraph(p.spec, p.name, p.templates), [p.spec, p.name, p.templates]);
  return <GraphPanel graph={graph} selected={p.selected} onSelect={p.onSelect} height={p.height} />;
}

/**
 * useThrottled rebuilds the graph when its inputs change, but not more
 * often than every 100 ms (or four times what a build costs), so that a
 * stream of node events on a huge workflow leaves the page responsive.
 */
function useThrottled(make: () => Graph, deps: unknown[]): Graph | undefined {
  const [g, setG] = useState<Graph>();
  const st = useRef({ timer: 0, last: -1e9, cost: 0, make, live: true });
  st.current.make = make;
  useEffect(() => {
    const s = st.current;
    if (s.timer) return; // the run already waiting uses the newest inputs
    const wait = Math.max(0, s.last + Math.max(100, s.cost * 4) - performance.now());
    const run = () => {
      s.timer = 0;
      if (!s.live) return;
      const t0 = performance.now();
      setG(s.make());
      s.last = performance.now();
      s.cost = s.last - t0;
    };
    if (wait === 0 && !g) run();
    else s.timer = window.setTimeout(run, wait);
  }, deps); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => () => { st.current.live = false; clearTimeout(st.current.timer); }, []);
  return g;
}

let uid = 0;
let layoutsDone = 0;

/** The test and benchmark hooks (window.__braidGraph). */
export interface GraphHooks {
  frames(): number;
  /** Mean milliseconds per painted frame. */
  drawMs(): number;
  /** Layouts finished so far (a phase change must not add one; a new node does). */
  layouts(): number;
  select(name: string): boolean;
  center(name: string): boolean;
  fit(): void;
  nodes(): number;
}

declare global {
  interface Window { __braidGraph?: GraphHooks }
}

const PHASES: [string, string][] = [
  ['Succeeded', 'succeeded'], ['Failed', 'failed'], ['Error', 'errored'], ['Running', 'running'],
  ['Pending', 'pending'], [NOT_STARTED, 'not started'], ['Skipped', 'skipped'], ['Omitted', 'omitted'],
];

function summary(g: Graph | undefined): string {
  if (!g) return 'Graph loading';
  const c = new Map<string, number>();
  for (const n of g.nodes) c.set(n.phase, (c.get(n.phase) ?? 0) + 1);
  const parts = PHASES.filter(([p]) => c.get(p)).map(([p, w]) => `${fmt(c.get(p)!)} ${w}`);
  return `Graph of ${fmt(g.nodes.length)} nodes${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

function info(g: Graph, i: number): GraphNodeInfo {
  const n = g.nodes[i];
  return { id: n.id, name: n.name, displayName: n.label, type: n.type, phase: n.phase, preview: n.preview, templateName: n.templateName, status: n.status };
}

interface PanelProps {
  graph?: Graph;
  selected?: string;
  onSelect?: (nodeId: string, node?: GraphNodeInfo) => void;
  height?: string;
}

function GraphPanel(p: PanelProps) {
  const ids = useMemo(() => `graph${++uid}`, []);
  const root = useRef<HTMLDivElement>(null);
  const canvasEl = useRef<HTMLCanvasElement>(null);
  const tipEl = useRef<HTMLDivElement>(null);
  const cv = useRef<GraphCanvas | null>(null);
  const [open, setOpen] = useState<ReadonlySet<string>>(() => new Set());
  const [sel, setSel] = useState<string | undefined>(p.selected);
  const [announce, setAnnounce] = useState('');
  const g = p.graph;
  const view = useMemo(() => (g ? fold(g, open) : undefined), [g, open]);
  // Mutable state the canvas callbacks read (they outlive renders).
  const live = useRef({ g, view, sel, open, onSelect: p.onSelect, centerOn: '' as string, marked: false, drawnScene: null as Scene | null, layoutSeq: 0, shownSeq: 0, laying: null as View | null });
  Object.assign(live.current, { g, view, sel, open, onSelect: p.onSelect });

  const selectId = (id: string, center: boolean) => {
    const L = live.current;
    if (!L.g || !L.view) return false;
    const gi = L.g.byId.get(id);
    if (gi === undefined) return false;
    setSel(id);
    const node = L.g.nodes[gi];
    setAnnounce(`Selected ${node.label}, ${node.phase}`);
    if (L.view.hiddenBy[gi] >= 0) {
      const r = reveal(L.g, L.open, L.view, gi);
      L.centerOn = id;
      setOpen(r.open);
    } else if (center) {
      const c = cv.current!;
      const vi = L.view.viewOf[gi];
      if (c.scene && c.scene.view.ids[vi] === id) c.center(vi);
      else L.centerOn = id;
    }
    L.onSelect?.(id, info(L.g, gi));
    return true;
  };

  const toggleFold = (vi: number) => {
    const L = live.current;
    const sc = cv.current?.scene;
    if (!sc) return;
    const parent = sc.view.foldParent[vi];
    if (parent < 0) return;
    const next = new Set(L.open);
    next.add(sc.graph.nodes[parent].id);
    setOpen(next);
    setAnnounce(`Showing all children of ${sc.graph.nodes[parent].label}`);
  };

  // The canvas, once.
  useEffect(() => {
    root.current!.dataset.state = 'loading';
    warm();
    const c: GraphCanvas = new GraphCanvas(canvasEl.current!, tipEl.current!, {
      click: (i) => {
        const sc = c.scene;
        if (!sc || i < 0) return;
        if (sc.view.g[i] < 0) toggleFold(i);
        else selectId(sc.view.ids[i], false);
      },
      activate: (i) => {
        const sc = c.scene;
        if (!sc) return;
        if (sc.view.g[i] < 0) toggleFold(i);
        else selectId(sc.view.ids[i], false);
      },
      step: (i) => {
        const sc = c.scene;
        if (!sc) return;
        if (sc.view.g[i] < 0) {
          // A fold node takes the keyboard focus ring but is no node to report.
          c.select(i);
          setSel(sc.view.ids[i]);
          setAnnounce(`+${sc.view.foldCount[i]} more: press Enter to show them`);
        } else selectId(sc.view.ids[i], false);
        if (!c.onScreen(i)) c.center(i, c.scale);
      },
      describe: (i): { title: string; lines: string[] } => describe(c.scene!, i),
      sub: (i) => subline(c.scene!, i),
      painted: (sc) => {
        const L = live.current;
        if (L.drawnScene === sc) return;
        L.drawnScene = sc;
        const el = root.current;
        if (!el) return;
        el.dataset.state = 'drawn';
        el.dataset.nodes = String(sc.n);
        if (!L.marked) {
          L.marked = true;
          performance.mark('braid-graph-drawn');
        }
      },
    });
    cv.current = c;
    const byName = (name: string) => {
      const L = live.current;
      if (!L.g) return undefined;
      const i = L.g.nodes.findIndex((n) => n.name === name || n.id === name);
      return i >= 0 ? L.g.nodes[i].id : undefined;
    };
    const hooks: GraphHooks = {
      frames,
      drawMs,
      layouts: () => layoutsDone,
      select: (name) => { const id = byName(name); return !!id && selectId(id, false); },
      center: (name) => { const id = byName(name); return !!id && selectId(id, true); },
      fit: () => c.fit(),
      nodes: () => c.scene?.n ?? 0,
    };
    window.__braidGraph = hooks;
    return () => {
      c.destroy();
      cv.current = null;
      if (window.__braidGraph === hooks) delete window.__braidGraph;
    };
  }, []); // eslint-disable-line react-hooks/exhaustive-deps

  // A new view: a phase change repaints the laid-out scene; a new structure goes to the worker.
  useEffect(() => {
    const c = cv.current;
    if (!c || !view || !g) return;
    const L = live.current;
    if (c.scene && sameStructure(c.scene.view, view)) {
      paint(c.scene, view, g);
      c.repaint();
      return;
    }
    // A layout of this structure is on its way: its answer paints from the newest view.
    if (L.laying && sameStructure(L.laying, view)) return;
    L.laying = view;
    const seq = ++L.layoutSeq;
    const { w, h } = sizes(view, g);
    layoutAsync({ n: view.n, w, h, src: view.src, dst: view.dst }).then((out) => {
      // An older answer still shows (a stream of changes must not starve the picture), a stale one does not.
      if (seq < L.shownSeq || cv.current !== c) return;
      L.shownSeq = seq;
      layoutsDone++;
      if (seq === L.layoutSeq) L.laying = null;
      // The newest view may have newer phases than the one laid out: same structure, so paint from it.
      const sc = buildScene(view, g, out);
      if (L.view && L.g && sameStructure(view, L.view)) paint(sc, L.view, L.g);
      const first = !c.scene;
      c.setScene(sc);
      c.select(selIndex(sc, L.sel));
      // A selection given before the first picture: open its fold and show it.
      const gi = first && L.sel ? g.byId.get(L.sel) : undefined;
      if (gi !== undefined && L.view && L.g === g && L.view.hiddenBy[gi] >= 0) {
        L.centerOn = L.sel!;
        setOpen(reveal(g, L.open, L.view, gi).open);
      }
      if (L.centerOn) {
        const vi = sc.view.ids.indexOf(L.centerOn);
        if (vi >= 0) { c.center(vi); L.centerOn = ''; }
      }
    });
  }, [view, g]);

  // Selection from the parent.
  useEffect(() => {
    if (p.selected === undefined || p.selected === live.current.sel) return;
    const c = cv.current;
    const L = live.current;
    setSel(p.selected);
    if (!L.g || !L.view) return;
    const gi = L.g.byId.get(p.selected);
    if (gi === undefined) return;
    if (L.view.hiddenBy[gi] >= 0) {
      L.centerOn = p.selected;
      setOpen(reveal(L.g, L.open, L.view, gi).open);
    } else if (c?.scene) {
      const vi = L.view.viewOf[gi];
      if (vi >= 0 && !c.onScreen(vi)) c.center(vi, c.scale);
    }
  }, [p.selected]);

  useEffect(() => {
    const c = cv.current;
    if (c?.scene) c.select(selIndex(c.scene, sel));
  }, [sel, view]);

  const label = useMemo(() => summary(g), [g]);
  const shown = view ? `${fmt(view.n)} shown${view.folded ? `, ${view.folded} wide group${view.folded > 1 ? 's' : ''} folded` : ''}` : '';
  const selGi = sel && g ? g.byId.get(sel) : undefined;
  const selOpen = selGi !== undefined && open.has(sel!) ? g!.nodes[selGi] : undefined;
  const empty = g && g.nodes.length === 0;
  return (
    <div class="graph" ref={root} style={p.height ? { height: p.height } : undefined}>
      <div class="graph-bar" role="toolbar" aria-label="Graph controls">
        {g && <Search graph={g} idBase={ids} onPick={(gi) => selectId(g.nodes[gi].id, true)} />}
        <div class="graph-buttons">
          <button type="button" onClick={() => cv.current?.fit()} title="Fit the graph (0)">Fit</button>
          <button type="button" onClick={() => cv.current?.zoom(1.25)} aria-label="Zoom in" title="Zoom in (+)">+</button>
          <button type="button" onClick={() => cv.current?.zoom(0.8)} aria-label="Zoom out" title="Zoom out (−)">−</button>
          {selOpen && (
            <button type="button" onClick={() => { const s = new Set(open); s.delete(selOpen.id); setOpen(s); }}>
              Fold {selOpen.label}
            </button>
          )}
          {open.size > 0 && <button type="button" onClick={() => setOpen(new Set())}>Fold all</button>}
        </div>
      </div>
      <div class="graph-view">
        <canvas ref={canvasEl} role="img" aria-label={`${label}${shown ? ` (${shown})` : ''}`} tabIndex={0}
          aria-describedby={`${ids}-keys`} />
        <div class="graph-tip" ref={tipEl} hidden />
        {empty && <p class="graph-empty">Nothing to draw: no nodes and no entrypoint.</p>}
        {g?.truncated && <p class="graph-note">The preview stops at 20,000 nodes.</p>}
      </div>
      <div class="graph-foot">
        <Legend />
        <span class="hint" id={`${ids}-keys`}>
          Drag to pan, wheel to zoom. Keys: arrows pan, + and − zoom, 0 fits, N and P select the next and previous node,
          Enter opens a folded group. Groups of more than {FOLD_AT} show a window; click “+N more” to show all.
        </span>
      </div>
      <div class="sr-only" aria-live="polite">{announce}</div>
    </div>
  );
}

function selIndex(sc: Scene, id?: string): number {
  if (!id) return -1;
  if (id.startsWith('fold:')) return sc.view.ids.indexOf(id);
  const gi = sc.graph.byId.get(id);
  if (gi === undefined) return -1;
  const vi = sc.view.viewOf[gi];
  if (vi >= 0) return vi;
  // A folded node: mark its fold node.
  const p = sc.view.hiddenBy[gi];
  return p >= 0 ? sc.view.ids.indexOf(`fold:${sc.graph.nodes[p].id}`) : -1;
}

function describe(sc: Scene, i: number): { title: string; lines: string[] } {
  const v = sc.view;
  if (v.g[i] < 0) {
    const parent = sc.graph.nodes[v.foldParent[i]];
    let hidden = 0;
    for (let k = 0; k < v.hiddenBy.length; k++) if (v.hiddenBy[k] === v.foldParent[i]) hidden++;
    return {
      title: `+${fmt(v.foldCount[i])} more`,
      lines: [`Children of ${parent.label} not shown (${fmt(hidden)} nodes in all)`, 'Click to show them'],
    };
  }
  const n = sc.graph.nodes[v.g[i]];
  const lines: string[] = [];
  if (n.name !== n.label) lines.push(n.name);
  lines.push(`${n.type}${n.templateName ? ` · ${n.templateName}` : ''}`);
  lines.push(`Phase: ${n.phase}`);
  const s = n.status;
  if (s?.startedAt) lines.push(`Duration: ${duration(s.startedAt, s.finishedAt)}`);
  if (s?.progress) lines.push(`Progress: ${s.progress}`);
  if (n.fanout) lines.push(`Fan-out ${n.fanout}`);
  if (n.note) lines.push(`Preview: ${n.note}`);
  if (s?.message) lines.push(s.message.length > 300 ? `${s.message.slice(0, 300)}…` : s.message);
  return { title: n.label, lines };
}

function subline(sc: Scene, i: number): string {
  const gi = sc.view.g[i];
  if (gi < 0) return '';
  const n = sc.graph.nodes[gi];
  if (n.preview) return n.fanout ? 'not started · fan-out' : 'not started';
  const s = n.status;
  const d = s?.startedAt ? duration(s.startedAt, s.finishedAt) : '';
  return d ? `${n.phase} · ${d}` : n.phase;
}

function Legend() {
  const items: [string, string][] = [
    ['ok', 'Succeeded'], ['run', 'Running'], ['fail', 'Failed'], ['err', 'Error'], ['pend', 'Pending'], ['skip', 'Skipped'],
  ];
  return (
    <ul class="graph-legend" aria-label="Legend">
      {items.map(([c, t]) => <li key={c}><span class={`graph-sw graph-sw-${c}`} aria-hidden="true" />{t}</li>)}
      <li><span class="graph-sw graph-sw-new" aria-hidden="true" />Not started</li>
    </ul>
  );
}

const MAX_LISTED = 50;

/** Search finds nodes by name or display name (case-insensitive), lists them, and jumps to one; Enter goes to the next. */
function Search({ graph, idBase, onPick }: { graph: Graph; idBase: string; onPick: (gi: number) => void }) {
  const [q, setQ] = useState('');
  const [cur, setCur] = useState(-1);
  const [listOpen, setListOpen] = useState(false);
  const active = q.trim() !== '';
  // Lower-cased names only once someone searches (a 10,000-node graph need not pay for them up front).
  const lower = useMemo(() => (active ? graph.nodes.map((n) => `${n.label}\u0000${n.name}`.toLowerCase()) : []), [graph, active]);
  const matches = useMemo(() => {
    const s = q.trim().toLowerCase();
    if (!s) return [];
    const out: number[] = [];
    for (let i = 0; i < lower.length; i++) if (lower[i].includes(s)) out.push(i);
    return out;
  }, [lower, q]);
  const go = (k: number) => {
    if (!matches.length) return;
    const j = ((k % matches.length) + matches.length) % matches.length;
    setCur(j);
    onPick(matches[j]);
  };
  return (
    <div class="graph-search" onFocusOut={(e) => {
      const to = (e as FocusEvent).relatedTarget as Node | null;
      if (!to || !(e.currentTarget as HTMLElement).contains(to)) setListOpen(false);
    }}>
      <label for={`${idBase}-q`}>Find node</label>
      <input id={`${idBase}-q`} type="search" value={q} placeholder="name…" autocomplete="off"
        aria-controls={listOpen && matches.length > 0 ? `${idBase}-list` : undefined} aria-describedby={`${idBase}-count`}
        onInput={(e) => { setQ((e.target as HTMLInputElement).value); setCur(-1); setListOpen(true); }}
        onFocus={() => setListOpen(true)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') { e.preventDefault(); setListOpen(false); go(e.shiftKey ? cur - 1 : cur + 1); }
          if (e.key === 'Escape') setListOpen(false);
        }} />
      <span class="graph-count" id={`${idBase}-count`} aria-live="polite">
        {q.trim() ? (matches.length ? `${cur >= 0 ? `${cur + 1} of ` : ''}${fmt(matches.length)} match${matches.length === 1 ? '' : 'es'}` : 'no match') : ''}
      </span>
      {listOpen && matches.length > 0 && (
        <ul class="graph-matches" id={`${idBase}-list`} aria-label="Matching nodes">
          {matches.slice(0, MAX_LISTED).map((gi, j) => (
            <li key={graph.nodes[gi].id}>
              <button type="button" aria-current={j === cur ? 'true' : undefined} onClick={() => { setCur(j); setListOpen(false); onPick(gi); }}>
                <span class={`graph-dot phase-${graph.nodes[gi].preview ? 'Pending' : graph.nodes[gi].phase}`} aria-hidden="true">●</span>
                {graph.nodes[gi].label}
                {graph.nodes[gi].name !== graph.nodes[gi].label && <span class="graph-mname">{graph.nodes[gi].name}</span>}
              </button>
            </li>
          ))}
          {matches.length > MAX_LISTED && <li class="hint">and {fmt(matches.length - MAX_LISTED)} more: press Enter to step through them</li>}
        </ul>
      )}
    </div>
  );
}

