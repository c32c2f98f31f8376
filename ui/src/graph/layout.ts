// A layered (Sugiyama-style) layout, top to bottom, written for big
// workflow graphs: every step is linear in nodes and edges except the
// per-layer sorts of the crossing-reduction sweeps. It runs in a Web Worker
// (layout.worker.ts) so a 10,000-node graph never blocks the page.

export interface LayoutInput {
  n: number;
  /** Width and height of each node. */
  w: Float32Array;
  h: Float32Array;
  /** Edge i goes from src[i] to dst[i] (node indices). */
  src: Int32Array;
  dst: Int32Array;
}

export interface LayoutOutput {
  /** Centre of each node; the drawing's box is [0, width] x [0, height]. */
  x: Float32Array;
  y: Float32Array;
  width: number;
  height: number;
  /** Bend points of edge i (x,y pairs): pts[2*pOff[i] .. 2*pOff[i+1]). */
  pOff: Int32Array;
  pts: Float32Array;
  /** Milliseconds the layout took. */
  ms: number;
}

const LAYER_GAP = 56;
const NODE_GAP = 24;
const ROW_GAP = 28;
const DUMMY_W = 10;
/** A layer wider than this many nodes wraps into rows (a fan-out of 10,000). */
const WRAP = 60;
/** Long edges get a dummy node per layer they cross, up to this many in all. */
const MAX_DUMMIES = 60000;

/** csr builds compressed adjacency lists: the neighbours of v are adj[off[v]..off[v+1]). */
function csr(n: number, from: Int32Array, to: Int32Array, m: number): { off: Int32Array; adj: Int32Array } {
  const off = new Int32Array(n + 1);
  for (let i = 0; i < m; i++) off[from[i] + 1]++;
  for (let v = 0; v < n; v++) off[v + 1] += off[v];
  const fill = off.slice(0, n);
  const adj = new Int32Array(m);
  for (let i = 0; i < m; i++) adj[fill[from[i]]++] = to[i];
  return { off, adj };
}

/**
 * acyclic returns a topological order and marks the edges that close a
 * cycle (found by an iterative depth-first search), so that a malformed
 * graph still lays out.
 */
function acyclic(n: number, src: Int32Array, dst: Int32Array): { order: Int32Array; back: Uint8Array } {
  const m = src.length;
  // Edge ids grouped by source, in input order (the children's order).
  const { off, ids: byFrom } = edgeIndex(n, src, m);
  const state = new Uint8Array(n); // 0 new, 1 on stack, 2 done
  const cursor = new Int32Array(n);
  const stack = new Int32Array(n);
  const post = new Int32Array(n);
  const back = new Uint8Array(m);
  let np = 0;
  // Roots first (no incoming edge), then whatever a cycle left unvisited.
  const indeg = new Int32Array(n);
  for (let i = 0; i < m; i++) indeg[dst[i]]++;
  const visit = (r: number) => {
    let sp = 0;
    stack[sp++] = r;
    state[r] = 1;
    cursor[r] = off[r];
    while (sp > 0) {
      const v = stack[sp - 1];
      if (cursor[v] < off[v + 1]) {
        const e = byFrom[cursor[v]++];
        const u = dst[e];
        if (state[u] === 1) back[e] = 1;
        else if (state[u] === 0) {
          state[u] = 1;
          cursor[u] = off[u];
          stack[sp++] = u;
        }
      } else {
        state[v] = 2;
        post[np++] = v;
        sp--;
      }
    }
  };
  for (let v = 0; v < n; v++) if (indeg[v] === 0 && state[v] === 0) visit(v);
  for (let v = 0; v < n; v++) if (state[v] === 0) visit(v);
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = post[n - 1 - i];
  return { order, back };
}

/** layers gives each node its longest-path layer, then pulls sources down next to their first successor. */
function layers(n: number, order: Int32Array, src: Int32Array, dst: Int32Array, keep: Uint8Array): Int32Array {
  const m = src.length;
  const layer = new Int32Array(n);
  const ins = edgeIndex(n, dst, m), outs = edgeIndex(n, src, m);
  // Longest path from the sources, over the kept (forward) edges.
  for (let i = 0; i < n; i++) {
    const v = order[i];
    let l = 0;
    for (let k = ins.off[v]; k < ins.off[v + 1]; k++) {
      const e = ins.ids[k];
      if (!keep[e]) continue;
      const p = layer[src[e]] + 1;
      if (p > l) l = p;
    }
    layer[v] = l;
  }
  // A source above a deep successor would draw a long edge: move it down.
  for (let i = n - 1; i >= 0; i--) {
    const v = order[i];
    let hasIn = false;
    for (let k = ins.off[v]; k < ins.off[v + 1]; k++) if (keep[ins.ids[k]]) { hasIn = true; break; }
    if (hasIn) continue;
    let min = -1;
    for (let k = outs.off[v]; k < outs.off[v + 1]; k++) {
      const e = outs.ids[k];
      if (!keep[e]) continue;
      const l = layer[dst[e]] - 1;
      if (min < 0 || l < min) min = l;
    }
    if (min > layer[v]) layer[v] = min;
  }
  return layer;
}

/** edgeIndex lists edge ids grouped by key[e] (in input order): the edges of v are ids[off[v]..off[v+1]). */
function edgeIndex(n: number, key: Int32Array, m: number): { off: Int32Array; ids: Int32Array } {
  const off = new Int32Array(n + 1);
  for (let i = 0; i < m; i++) off[key[i] + 1]++;
  for (let v = 0; v < n; v++) off[v + 1] += off[v];
  const fill = off.slice(0, n);
  const ids = new Int32Array(m);
  for (let i = 0; i < m; i++) ids[fill[key[i]]++] = i;
  return { off, ids };
}

/** pav solves min sum (y_i - t_i)^2 with y nondecreasing (pool adjacent violators), in place. */
function pav(t: Float64Array, len: number, blkSum: Float64Array, blkCnt: Int32Array, blkEnd: Int32Array) {
  let nb = 0;
  for (let i = 0; i < len; i++) {
    blkSum[nb] = t[i];
    blkCnt[nb] = 1;
    blkEnd[nb] = i;
    nb++;
    while (nb > 1 && blkSum[nb - 2] / blkCnt[nb - 2] > blkSum[nb - 1] / blkCnt[nb - 1]) {
      blkSum[nb - 2] += blkSum[nb - 1];
      blkCnt[nb - 2] += blkCnt[nb - 1];
      blkEnd[nb - 2] = blkEnd[nb - 1];
      nb--;
    }
  }
  let i = 0;
  for (let b = 0; b < nb; b++) {
    const v = blkSum[b] / blkCnt[b];
    for (; i <= blkEnd[b]; i++) t[i] = v;
  }
}

export function layout(inp: LayoutInput): LayoutOutput {
  const t0 = now();
  const { n, src, dst } = inp;
  const m = src.length;
  if (n === 0) return { x: new Float32Array(0), y: new Float32Array(0), width: 0, height: 0, pOff: new Int32Array(m + 1), pts: new Float32Array(0), ms: 0 };
  const { order, back } = acyclic(n, src, dst);
  const keep = new Uint8Array(m);
  for (let i = 0; i < m; i++) keep[i] = back[i] || src[i] === dst[i] ? 0 : 1;
  const layer = layers(n, order, src, dst, keep);

  // Dummy nodes split edges that span several layers; a back edge runs upwards, so it goes from dst to src.
  let dummies = 0;
  for (let i = 0; i < m; i++) {
    if (!keep[i]) continue;
    const span = layer[dst[i]] - layer[src[i]];
    if (span > 1 && dummies + span - 1 <= MAX_DUMMIES) dummies += span - 1;
  }
  const N = n + dummies;
  const L = new Int32Array(N);
  L.set(layer);
  const W = new Float32Array(N);
  W.set(inp.w);
  for (let v = n; v < N; v++) W[v] = DUMMY_W;
  const H = new Float32Array(N);
  H.set(inp.h);
  const chainFirst = new Int32Array(m).fill(-1); // first dummy of edge i
  const chainLen = new Int32Array(m);
  // Segments of the layered graph: each kept edge becomes 1..span segments.
  const sf = new Int32Array(m + dummies), st = new Int32Array(m + dummies);
  let ns = 0;
  let next = n;
  for (let i = 0; i < m; i++) {
    if (!keep[i]) continue;
    const a = src[i], b = dst[i];
    const span = layer[b] - layer[a];
    if (span > 1 && next + span - 1 <= N) {
      chainFirst[i] = next;
      chainLen[i] = span - 1;
      let prev = a;
      for (let k = 1; k < span; k++) {
        L[next] = layer[a] + k;
        sf[ns] = prev; st[ns++] = next;
        prev = next++;
      }
      sf[ns] = prev; st[ns++] = b;
    } else {
      sf[ns] = a; st[ns++] = b;
    }
  }
  const down = csr(N, sf, st, ns); // lower neighbours
  const up = csr(N, st, sf, ns); // upper neighbours

  const pos = orderLayers(N, n, L, down, up, order);
  const { x, y, width, height } = coordinates(N, W, H, pos, down, up);

  // Edge routes through their dummies.
  const pOff = new Int32Array(m + 1);
  for (let i = 0; i < m; i++) pOff[i + 1] = pOff[i] + (chainFirst[i] >= 0 ? chainLen[i] : 0);
  const pts = new Float32Array(pOff[m] * 2);
  for (let i = 0; i < m; i++) {
    let p = pOff[i] * 2;
    for (let k = 0; k < chainLen[i]; k++) {
      const d = chainFirst[i] + k;
      pts[p++] = x[d];
      pts[p++] = y[d];
    }
  }
  return { x: x.slice(0, n), y: y.slice(0, n), width, height, pOff, pts, ms: now() - t0 };
}

function now() {
  return typeof performance !== 'undefined' ? performance.now() : Date.now();
}

/** byLayer groups node ids by layer, in the order given by rank. */
function byLayer(N: number, L: Int32Array, rank: Int32Array): { off: Int32Array; ids: Int32Array; nl: number } {
  let nl = 0;
  for (let v = 0; v < N; v++) if (L[v] + 1 > nl) nl = L[v] + 1;
  const off = new Int32Array(nl + 1);
  for (let v = 0; v < N; v++) off[L[v] + 1]++;
  for (let l = 0; l < nl; l++) off[l + 1] += off[l];
  const fill = off.slice(0, nl);
  const ids = new Int32Array(N);
  for (let i = 0; i < N; i++) {
    const v = rank[i];
    ids[fill[L[v]]++] = v;
  }
  return { off, ids, nl };
}

type Adj = { off: Int32Array; adj: Int32Array };

/**
 * orderLayers orders each layer: first as a breadth-first walk from the
 * top reaches the nodes (children stay in their given order), then a few
 * barycenter sweeps down and up. It returns the layers (off/ids) in order.
 */
function orderLayers(N: number, n: number, L: Int32Array, down: Adj, up: Adj, topo: Int32Array) {
  // Initial order: layer by layer, children in edge order under their parents.
  const placed = new Uint8Array(N);
  const byL = byLayer(N, L, topoWithDummies(N, n, topo));
  const { off, nl } = byL;
  const ids = new Int32Array(N);
  let w = 0;
  for (let l = 0; l < nl; l++) {
    if (l > 0) {
      for (let i = off[l - 1]; i < off[l]; i++) {
        const p = ids[i];
        for (let k = down.off[p]; k < down.off[p + 1]; k++) {
          const c = down.adj[k];
          if (!placed[c] && L[c] === l) { placed[c] = 1; ids[w++] = c; }
        }
      }
    }
    for (let i = off[l]; i < off[l + 1]; i++) {
      const v = byL.ids[i];
      if (!placed[v]) { placed[v] = 1; ids[w++] = v; }
    }
  }
  const pos = new Float64Array(N);
  for (let l = 0; l < nl; l++) for (let i = off[l]; i < off[l + 1]; i++) pos[ids[i]] = i - off[l];

  const key = new Float64Array(N);
  const tmp: number[] = [];
  const sweep = (l: number, adj: Adj) => {
    const a = off[l], b = off[l + 1];
    if (b - a < 2) return;
    for (let i = a; i < b; i++) {
      const v = ids[i];
      const s = adj.off[v], e = adj.off[v + 1];
      if (s === e) { key[v] = pos[v]; continue; }
      let sum = 0;
      for (let k = s; k < e; k++) sum += pos[adj.adj[k]];
      // Nodes that share a barycenter keep their relative order.
      key[v] = sum / (e - s) + (i - a) * 1e-7;
    }
    tmp.length = 0;
    for (let i = a; i < b; i++) tmp.push(ids[i]);
    tmp.sort((p, q) => key[p] - key[q]);
    for (let i = a; i < b; i++) { ids[i] = tmp[i - a]; pos[ids[i]] = i - a; }
  };
  for (let round = 0; round < 3; round++) {
    for (let l = 1; l < nl; l++) sweep(l, up);
    for (let l = nl - 2; l >= 0; l--) sweep(l, down);
  }
  return { off, ids, nl };
}

/** topoWithDummies is the topological order with the dummies (which follow their sources) appended. */
function topoWithDummies(N: number, n: number, topo: Int32Array): Int32Array {
  const r = new Int32Array(N);
  r.set(topo);
  for (let v = n; v < N; v++) r[v] = v;
  return r;
}

/**
 * coordinates assigns y by layer and x by a few passes that pull each node
 * towards the mean of its neighbours in the layer above (or below) while
 * keeping the order and the gaps: an exact least-squares step per layer,
 * linear in its size. Very wide layers wrap into a grid of rows.
 */
function coordinates(N: number, W: Float32Array, H: Float32Array,
  lay: { off: Int32Array; ids: Int32Array; nl: number }, down: Adj, up: Adj) {
  const { off, ids, nl } = lay;
  const x = new Float32Array(N);
  const y = new Float32Array(N);
  let maxLen = 1;
  for (let l = 0; l < nl; l++) maxLen = Math.max(maxLen, off[l + 1] - off[l]);
  const t = new Float64Array(maxLen), o = new Float64Array(maxLen);
  const bs = new Float64Array(maxLen), bc = new Int32Array(maxLen), be = new Int32Array(maxLen);
  const cols = new Int32Array(nl);
  for (let l = 0; l < nl; l++) {
    const len = off[l + 1] - off[l];
    cols[l] = len > WRAP ? Math.max(WRAP, Math.ceil(Math.sqrt(len * 0.6))) : len;
  }
  let cellW = 0;
  for (let v = 0; v < N; v++) cellW = Math.max(cellW, W[v]);
  // Start packed left to right.
  for (let l = 0; l < nl; l++) {
    let cx = 0;
    for (let i = off[l]; i < off[l + 1]; i++) {
      const v = ids[i];
      x[v] = cx + W[v] / 2;
      cx += W[v] + NODE_GAP;
    }
  }
  const mean = (v: number, adj: Adj) => {
    const s = adj.off[v], e = adj.off[v + 1];
    if (s === e) return NaN;
    let sum = 0;
    for (let k = s; k < e; k++) sum += x[adj.adj[k]];
    return sum / (e - s);
  };
  const place = (l: number, adj: Adj) => {
    const a = off[l], len = off[l + 1] - a;
    if (len === 0) return;
    if (len > WRAP) {
      // A grid centred under the mean of the wide layer's neighbours.
      let sum = 0, cnt = 0;
      for (let i = 0; i < len; i++) {
        const d = mean(ids[a + i], adj);
        if (!Number.isNaN(d)) { sum += d; cnt++; }
      }
      const c = cols[l];
      const centre = cnt ? sum / cnt : 0;
      const left = centre - (c * (cellW + NODE_GAP)) / 2 + cellW / 2;
      for (let i = 0; i < len; i++) x[ids[a + i]] = left + (i % c) * (cellW + NODE_GAP);
      return;
    }
    let acc = 0;
    for (let i = 0; i < len; i++) {
      const v = ids[a + i];
      if (i > 0) acc += (W[ids[a + i - 1]] + W[v]) / 2 + NODE_GAP;
      o[i] = acc;
      const d = mean(v, adj);
      t[i] = (Number.isNaN(d) ? x[v] : d) - acc;
    }
    pav(t, len, bs, bc, be);
    for (let i = 0; i < len; i++) x[ids[a + i]] = t[i] + o[i];
  };
  for (let round = 0; round < 4; round++) {
    for (let l = 1; l < nl; l++) place(l, up);
    for (let l = nl - 2; l >= 0; l--) place(l, down);
  }
  // y: each layer as tall as its tallest node (times its rows).
  let cy = 0;
  for (let l = 0; l < nl; l++) {
    const a = off[l], len = off[l + 1] - a;
    let hmax = 0;
    for (let i = a; i < a + len; i++) hmax = Math.max(hmax, H[ids[i]]);
    const c = cols[l] || 1;
    const rows = Math.ceil(len / c);
    for (let i = 0; i < len; i++) y[ids[a + i]] = cy + hmax / 2 + Math.floor(i / c) * (hmax + ROW_GAP);
    cy += rows * hmax + (rows - 1) * ROW_GAP + LAYER_GAP;
  }
  // Shift into [0, width].
  let minX = Infinity, maxX = -Infinity;
  for (let v = 0; v < N; v++) {
    minX = Math.min(minX, x[v] - W[v] / 2);
    maxX = Math.max(maxX, x[v] + W[v] / 2);
  }
  for (let v = 0; v < N; v++) x[v] -= minX;
  return { x, y, width: maxX - minX, height: Math.max(0, cy - LAYER_GAP) };
}
