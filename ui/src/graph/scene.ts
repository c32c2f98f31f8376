// The scene: a laid-out view as flat arrays the canvas draws from, with a
// spatial grid so that culling and hit tests touch only what is near.
import type { Graph, View } from './model';
import { NOT_STARTED } from './model';
import type { LayoutOutput } from './layout';

export const K_BOX = 0, K_PILL = 1, K_DOT = 2, K_FOLD = 3;

/** Palette slots: the canvas fills them from the CSS variables. */
export const C_NOTSTARTED = 0, C_PENDING = 1, C_RUNNING = 2, C_OK = 3, C_FAIL = 4, C_ERR = 5, C_SKIP = 6, C_FOLD = 7;
export const PALETTE_VARS = ['--pend', '--pend', '--run', '--ok', '--fail', '--err', '--skip', '--accent'];
export const N_COLORS = PALETTE_VARS.length;

const SIZE: Record<number, [number, number]> = {
  [K_BOX]: [168, 40],
  [K_PILL]: [132, 26],
  [K_DOT]: [18, 18],
  [K_FOLD]: [132, 28],
};

export function kindOf(type: string, fanout?: string): number {
  if (fanout) return K_BOX;
  switch (type) {
    case 'StepGroup': return K_DOT;
    case 'Steps': case 'DAG': case 'TaskGroup': case 'Retry': return K_PILL;
    default: return K_BOX;
  }
}

export function colorOf(phase: string): number {
  switch (phase) {
    case NOT_STARTED: return C_NOTSTARTED;
    case 'Running': return C_RUNNING;
    case 'Succeeded': return C_OK;
    case 'Failed': return C_FAIL;
    case 'Error': return C_ERR;
    case 'Skipped': case 'Omitted': return C_SKIP;
    default: return C_PENDING;
  }
}

/** sizes gives each view node's kind, width and height (what the layout needs). */
export function sizes(view: View, g: Graph) {
  const kind = new Uint8Array(view.n), w = new Float32Array(view.n), h = new Float32Array(view.n);
  for (let i = 0; i < view.n; i++) {
    const gi = view.g[i];
    const k = gi < 0 ? K_FOLD : kindOf(g.nodes[gi].type, g.nodes[gi].fanout);
    kind[i] = k;
    [w[i], h[i]] = SIZE[k];
  }
  return { kind, w, h };
}

export interface Scene {
  view: View;
  graph: Graph;
  n: number;
  x: Float32Array;
  y: Float32Array;
  w: Float32Array;
  h: Float32Array;
  kind: Uint8Array;
  color: Uint8Array;
  /** 1 for a node that has not started (a preview node). */
  pending: Uint8Array;
  width: number;
  height: number;
  src: Int32Array;
  dst: Int32Array;
  pOff: Int32Array;
  pts: Float32Array;
  /** Per edge: minX, minY, maxX, maxY. */
  ebox: Float32Array;
  /** 1 when the edge leads into a node that has not started (drawn dashed). */
  epend: Uint8Array;
  grid: Grid;
  /** Edges of wide fan-outs and fan-ins are drawn as buses: 1 = a stub up from the target, 2 = a stub down from the source. */
  bus: Uint8Array;
  /** The y of the bar a bus edge's stub meets. */
  stubY: Float32Array;
  /** The buses' bars and trunks: x0, y0, x1, y1 each. */
  segs: Float32Array;
  /** How many edges lead into each node (arrowheads are drawn per node, not per edge). */
  inDeg: Int32Array;
  /** View indices in reading order (by layer, then left to right), for keyboard moves; see readingOrder. */
  order: Int32Array;
  rank: Int32Array;
}

export interface Grid { cell: number; cols: number; rows: number; off: Int32Array; items: Int32Array; pad: number }

const CELL = 512;

function buildGrid(n: number, x: Float32Array, y: Float32Array, width: number, height: number): Grid {
  const cols = Math.max(1, Math.ceil((width + 1) / CELL)), rows = Math.max(1, Math.ceil((height + 1) / CELL));
  const cellOf = new Int32Array(n);
  const off = new Int32Array(cols * rows + 1);
  for (let i = 0; i < n; i++) {
    const cx = Math.min(cols - 1, Math.max(0, Math.floor(x[i] / CELL)));
    const cy = Math.min(rows - 1, Math.max(0, Math.floor(y[i] / CELL)));
    cellOf[i] = cy * cols + cx;
    off[cellOf[i] + 1]++;
  }
  for (let c = 0; c < cols * rows; c++) off[c + 1] += off[c];
  const fill = off.slice(0, cols * rows);
  const items = new Int32Array(n);
  for (let i = 0; i < n; i++) items[fill[cellOf[i]]++] = i;
  // Items are filed by centre: a query widens by half the largest node.
  return { cell: CELL, cols, rows, off, items, pad: 90 };
}

/** query calls f for each node whose centre cell meets the rectangle (widened by the grid's pad). */
export function query(gr: Grid, x0: number, y0: number, x1: number, y1: number, f: (i: number) => void) {
  const c0 = Math.max(0, Math.floor((x0 - gr.pad) / gr.cell)), c1 = Math.min(gr.cols - 1, Math.floor((x1 + gr.pad) / gr.cell));
  const r0 = Math.max(0, Math.floor((y0 - gr.pad) / gr.cell)), r1 = Math.min(gr.rows - 1, Math.floor((y1 + gr.pad) / gr.cell));
  for (let r = r0; r <= r1; r++) {
    for (let c = c0; c <= c1; c++) {
      const k = r * gr.cols + c;
      for (let j = gr.off[k]; j < gr.off[k + 1]; j++) f(gr.items[j]);
    }
  }
}

/** paint fills the colour and pending arrays from the graph's phases (a phase change needs only this). */
export function paint(s: Scene, view: View, g: Graph) {
  s.view = view;
  s.graph = g;
  for (let i = 0; i < s.n; i++) {
    const gi = view.g[i];
    const p = gi < 0 ? '' : g.nodes[gi].phase;
    s.color[i] = gi < 0 ? C_FOLD : colorOf(p);
    s.pending[i] = gi >= 0 && g.nodes[gi].preview ? 1 : 0;
  }
  for (let e = 0; e < s.src.length; e++) s.epend[e] = s.pending[s.dst[e]];
}

export function buildScene(view: View, g: Graph, lay: LayoutOutput): Scene {
  const { kind, w, h } = sizes(view, g);
  const n = view.n, m = view.src.length;
  const s: Scene = {
    view, graph: g, n, x: lay.x, y: lay.y, w, h, kind, color: new Uint8Array(n), pending: new Uint8Array(n),
    width: lay.width, height: lay.height, src: view.src, dst: view.dst, pOff: lay.pOff, pts: lay.pts,
    ebox: new Float32Array(m * 4), epend: new Uint8Array(m), grid: buildGrid(n, lay.x, lay.y, lay.width, lay.height),
    order: new Int32Array(0), rank: new Int32Array(0),
    bus: new Uint8Array(m), stubY: new Float32Array(m), segs: new Float32Array(0), inDeg: new Int32Array(n),
  };
  for (let e = 0; e < m; e++) s.inDeg[view.dst[e]]++;
  s.segs = buses(s);
  for (let e = 0; e < m; e++) {
    const a = view.src[e], b = view.dst[e];
    let x0 = Math.min(lay.x[a], lay.x[b]), x1 = Math.max(lay.x[a], lay.x[b]);
    let y0 = Math.min(lay.y[a], lay.y[b]), y1 = Math.max(lay.y[a], lay.y[b]);
    for (let p = lay.pOff[e]; p < lay.pOff[e + 1]; p++) {
      x0 = Math.min(x0, lay.pts[2 * p]); x1 = Math.max(x1, lay.pts[2 * p]);
      y0 = Math.min(y0, lay.pts[2 * p + 1]); y1 = Math.max(y1, lay.pts[2 * p + 1]);
    }
    s.ebox.set([x0, y0 - 30, x1, y1 + 30], e * 4);
  }
  paint(s, view, g);
  return s;
}

/** readingOrder fills the scene's order and rank the first time the keyboard needs them (a sort: never per frame). */
export function readingOrder(s: Scene) {
  if (s.order.length === s.n) return;
  const idx = Array.from({ length: s.n }, (_, i) => i);
  idx.sort((a, b) => s.y[a] - s.y[b] || s.x[a] - s.x[b]);
  s.order = Int32Array.from(idx);
  s.rank = new Int32Array(s.n);
  idx.forEach((v, r) => { s.rank[v] = r; });
}

/** hit finds the node under world point (wx, wy), or -1. */
export function hit(s: Scene, wx: number, wy: number, slop = 0): number {
  let best = -1;
  query(s.grid, wx, wy, wx, wy, (i) => {
    const hw = s.w[i] / 2 + slop, hh = s.h[i] / 2 + slop;
    if (Math.abs(wx - s.x[i]) <= hw && Math.abs(wy - s.y[i]) <= hh) best = i;
  });
  return best;
}

/** A node with more straight (single-layer) edges out or in than this gets a bus instead of a fan of curves. */
const BUS = 24;

/**
 * buses routes the edges of wide fan-outs (and fan-ins) as a trunk, one
 * bar per row of children and a short stub per child: a 10,000-wide fan
 * then costs short lines, not 10,000 long ones, and reads better.
 */
function buses(s: Scene): Float32Array {
  const m = s.src.length, n = s.n;
  const outD = new Int32Array(n), inD = new Int32Array(n);
  const straight = (e: number) => s.pOff[e] === s.pOff[e + 1] && s.y[s.dst[e]] > s.y[s.src[e]];
  for (let e = 0; e < m; e++) if (straight(e)) { outD[s.src[e]]++; inD[s.dst[e]]++; }
  const segs: number[] = [];
  const groups = new Map<number, number[]>(); // hub -> its edges
  for (let e = 0; e < m; e++) {
    if (!straight(e)) continue;
    const a = s.src[e], b = s.dst[e];
    const hub = outD[a] > BUS ? a : inD[b] > BUS ? -1 - b : null;
    if (hub === null) continue;
    const l = groups.get(hub);
    if (l) l.push(e); else groups.set(hub, [e]);
  }
  for (const [hub, es] of groups) {
    if (hub >= 0) fanOut(s, hub, es, segs);
    else fanIn(s, -1 - hub, es, segs);
  }
  return Float32Array.from(segs);
}

interface Row { key: number; y: number; minC: number; maxC: number; minX: number; maxX: number }

/** rowsOf groups the far ends of a hub's edges into rows (the layout's wrapped rows) by their centre's y. */
function rowsOf(s: Scene, es: number[], end: Int32Array, top: boolean): Row[] {
  const rows = new Map<number, Row>();
  for (const e of es) {
    const v = end[e];
    const key = Math.round(s.y[v]);
    const edgeY = top ? s.y[v] - s.h[v] / 2 : s.y[v] + s.h[v] / 2;
    const x = s.x[v], hw = s.w[v] / 2;
    const r = rows.get(key);
    if (!r) rows.set(key, { key, y: edgeY, minC: x, maxC: x, minX: x - hw, maxX: x + hw });
    else {
      r.minC = Math.min(r.minC, x); r.maxC = Math.max(r.maxC, x);
      r.minX = Math.min(r.minX, x - hw); r.maxX = Math.max(r.maxX, x + hw);
      r.y = top ? Math.min(r.y, edgeY) : Math.max(r.y, edgeY);
    }
  }
  return [...rows.values()].sort((p, q) => p.key - q.key);
}

function fanOut(s: Scene, a: number, es: number[], segs: number[]) {
  const rows = rowsOf(s, es, s.dst, true);
  const barOf = new Map<number, number>();
  const ax = s.x[a], ay = s.y[a] + s.h[a] / 2;
  const trunkX = rows.length > 1 ? Math.min(...rows.map((r) => r.minX)) - 14 : ax;
  rows.forEach((r, k) => {
    const by = r.y - 9;
    barOf.set(r.key, by);
    segs.push(Math.min(r.minC, trunkX, k === 0 ? ax : Infinity), by, Math.max(r.maxC, k === 0 ? ax : -Infinity), by);
  });
  const first = rows[0].y - 9, last = rows[rows.length - 1].y - 9;
  segs.push(ax, ay, ax, first);
  if (rows.length > 1) segs.push(trunkX, first, trunkX, last);
  for (const e of es) {
    s.bus[e] = 1;
    s.stubY[e] = barOf.get(Math.round(s.y[s.dst[e]])) ?? first;
  }
}

function fanIn(s: Scene, b: number, es: number[], segs: number[]) {
  const rows = rowsOf(s, es, s.src, false);
  const barOf = new Map<number, number>();
  const bx = s.x[b], by = s.y[b] - s.h[b] / 2;
  const trunkX = rows.length > 1 ? Math.max(...rows.map((r) => r.maxX)) + 14 : bx;
  const lastK = rows.length - 1;
  rows.forEach((r, k) => {
    const y = r.y + 9;
    barOf.set(r.key, y);
    segs.push(Math.min(r.minC, k === lastK ? bx : Infinity), y, Math.max(r.maxC, trunkX, k === lastK ? bx : -Infinity), y);
  });
  const first = rows[0].y + 9, last = rows[lastK].y + 9;
  segs.push(bx, last, bx, by);
  if (rows.length > 1) segs.push(trunkX, first, trunkX, last);
  for (const e of es) {
    s.bus[e] = 2;
    s.stubY[e] = barOf.get(Math.round(s.y[s.src[e]])) ?? last;
  }
}
