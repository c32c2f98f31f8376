// The canvas that draws a scene: pan and zoom by transform, cull with the
// scene's grid, batch by colour, and trade detail for speed when zoomed out.
// It draws on requestAnimationFrame, and only when something changed.
import {
  C_FAIL, C_ERR, C_NOTSTARTED, C_OK, C_PENDING, C_RUNNING, C_SKIP, C_FOLD, K_BOX, K_DOT, K_FOLD,
  N_COLORS, PALETTE_VARS, hit, query, readingOrder, type Scene,
} from './scene';
import { fmt } from './preview';

export interface CanvasHost {
  /** A click on node i (a view index), or on the background (-1). */
  click(i: number): void;
  /** Keyboard: activate node i (Enter). */
  activate(i: number): void;
  /** Keyboard: move the selection to node i. */
  step(i: number): void;
  /** The tooltip's text for node i. */
  describe(i: number): { title: string; lines: string[] };
  /** Extra text drawn under a box's label when zoomed in (phase, duration). */
  sub(i: number): string;
  /** Called after a frame that drew the scene. */
  painted(s: Scene): void;
}

/** Below this zoom nodes are plain rectangles; from TEXT up they carry labels. */
const SHAPES = 0.3, TEXT = 0.5, SUB = 0.8, ARROWS = 0.45;
/** Below this zoom edges (but not buses) are left out once many are in view. */
const EDGE_DETAIL = 0.12, MANY_EDGES = 3000;
const MIN_SCALE = 0.005, MAX_SCALE = 4;

let painted = 0;
let drawTime = 0;
/** frames counts the frames any graph painted (for the benchmark). */
export const frames = () => painted;
/** drawMs is the mean time a frame took to draw, over the frames so far. */
export const drawMs = () => (painted ? drawTime / painted : 0);

export class GraphCanvas {
  scene?: Scene;
  selected = -1;
  hover = -1;
  /** Set once the user pans or zooms: later layouts keep the view instead of fitting. */
  touched = false;
  private ctx: CanvasRenderingContext2D;
  private s = 1;
  private tx = 0;
  private ty = 0;
  private cw = 0;
  private ch = 0;
  private dpr = 1;
  private raf = 0;
  private pal: string[] = [];
  private fg = '#000';
  private muted = '#666';
  private panel = '#fff';
  private accent = '#00f';
  private edge = '#999';
  private font = 'sans-serif';
  private labels: (string | undefined)[] = [];
  private vis = new Int32Array(0);
  private byColor = new Int32Array(0);
  private pointers = new Map<number, { x: number; y: number }>();
  private down?: { x: number; y: number; moved: boolean };
  private cleanup: (() => void)[] = [];

  constructor(private canvas: HTMLCanvasElement, private tip: HTMLElement, private host: CanvasHost) {
    this.ctx = canvas.getContext('2d', { alpha: true })!;
    this.readColors();
    this.listen();
  }

  destroy() {
    cancelAnimationFrame(this.raf);
    for (const f of this.cleanup) f();
  }

  // ---- state ----

  setScene(s: Scene) {
    const first = !this.scene;
    this.scene = s;
    this.labels = new Array(s.n);
    if (this.vis.length < s.n) { this.vis = new Int32Array(s.n); this.byColor = new Int32Array(s.n); }
    if (this.selected >= s.n) this.selected = -1;
    this.hover = -1;
    this.hideTip();
    if (first || !this.touched) this.fit(false);
    this.invalidate();
  }

  /** repaint after a phase change (same layout). */
  repaint() {
    this.invalidate();
  }

  select(i: number) {
    if (this.selected === i) return;
    this.selected = i;
    this.invalidate();
  }

  invalidate() {
    if (!this.raf) this.raf = requestAnimationFrame(() => { this.raf = 0; this.draw(); });
  }

  readColors() {
    const cs = getComputedStyle(this.canvas);
    const v = (name: string, dflt: string) => cs.getPropertyValue(name).trim() || dflt;
    this.pal = PALETTE_VARS.map((p) => v(p, '#888'));
    this.fg = v('--fg', '#1b1f24');
    this.muted = v('--muted', '#57606a');
    this.panel = v('--panel', '#ffffff');
    this.accent = v('--accent', '#1f5fc6');
    this.edge = v('--muted', '#888');
    this.font = cs.fontFamily || 'sans-serif';
    this.invalidate();
  }

  // ---- view transform ----

  private resize() {
    const r = this.canvas.parentElement!.getBoundingClientRect();
    const dpr = window.devicePixelRatio || 1;
    if (r.width === this.cw && r.height === this.ch && dpr === this.dpr) return;
    this.cw = r.width; this.ch = r.height; this.dpr = dpr;
    this.canvas.width = Math.max(1, Math.round(r.width * dpr));
    this.canvas.height = Math.max(1, Math.round(r.height * dpr));
    this.canvas.style.width = `${r.width}px`;
    this.canvas.style.height = `${r.height}px`;
    if (!this.touched) this.fit(false);
    this.draw();
  }

  fit(user = true) {
    const sc = this.scene;
    if (user) this.touched = false;
    if (!sc || !this.cw) return;
    const pad = 24;
    const s = Math.min((this.cw - 2 * pad) / Math.max(1, sc.width), (this.ch - 2 * pad) / Math.max(1, sc.height), 1.25);
    this.s = Math.max(MIN_SCALE, s);
    this.tx = (this.cw - sc.width * this.s) / 2;
    this.ty = Math.max(pad, (this.ch - sc.height * this.s) / 2);
    this.invalidate();
  }

  /** zoom by factor f around the screen point (px, py). */
  zoom(f: number, px = this.cw / 2, py = this.ch / 2) {
    const s = Math.min(MAX_SCALE, Math.max(MIN_SCALE, this.s * f));
    this.tx = px - ((px - this.tx) * s) / this.s;
    this.ty = py - ((py - this.ty) * s) / this.s;
    this.s = s;
    this.touched = true;
    this.invalidate();
  }

  pan(dx: number, dy: number) {
    this.tx += dx;
    this.ty += dy;
    this.touched = true;
    this.invalidate();
  }

  /** center node i, zooming in to at least minScale so its label reads. */
  center(i: number, minScale = 0.9) {
    const sc = this.scene;
    if (!sc || i < 0 || i >= sc.n) return;
    this.s = Math.max(this.s, minScale);
    this.tx = this.cw / 2 - sc.x[i] * this.s;
    this.ty = this.ch / 2 - sc.y[i] * this.s;
    this.touched = true;
    this.invalidate();
  }

  /** onScreen says whether node i is within the view. */
  onScreen(i: number): boolean {
    const sc = this.scene;
    if (!sc) return false;
    const x = sc.x[i] * this.s + this.tx, y = sc.y[i] * this.s + this.ty;
    return x > 0 && y > 0 && x < this.cw && y < this.ch;
  }

  get scale() { return this.s; }

  // ---- drawing ----

  private draw() {
    const t0 = performance.now();
    const ctx = this.ctx, sc = this.scene;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    if (!sc || !this.cw) return;
    const k = this.s * this.dpr;
    ctx.setTransform(k, 0, 0, k, this.tx * this.dpr, this.ty * this.dpr);
    const x0 = -this.tx / this.s, y0 = -this.ty / this.s;
    const x1 = (this.cw - this.tx) / this.s, y1 = (this.ch - this.ty) / this.s;
    let nv = 0;
    const vis = this.vis;
    query(sc.grid, x0, y0, x1, y1, (i) => {
      const hw = sc.w[i] / 2, hh = sc.h[i] / 2;
      if (sc.x[i] + hw >= x0 && sc.x[i] - hw <= x1 && sc.y[i] + hh >= y0 && sc.y[i] - hh <= y1) vis[nv++] = i;
    });
    const bounds = this.sortByColor(nv);
    // Zoomed far out, thousands of short edges cost more than they tell: keep only the buses.
    const edgesInView = sc.n ? (sc.src.length * nv) / sc.n : 0;
    const edges = this.s >= EDGE_DETAIL || edgesInView <= MANY_EDGES;
    this.drawEdges(sc, x0, y0, x1, y1, nv, edges);
    if (this.s < SHAPES) this.drawRects(sc, bounds);
    else this.drawShapes(sc, bounds, nv);
    this.drawMarks(sc);
    painted++;
    drawTime += performance.now() - t0;
    this.host.painted(sc);
  }

  /** sortByColor orders the visible nodes by colour (a counting sort: linear) and returns each colour's range. */
  private sortByColor(nv: number): Int32Array {
    const sc = this.scene!;
    const start = new Int32Array(N_COLORS + 1);
    for (let j = 0; j < nv; j++) start[sc.color[this.vis[j]] + 1]++;
    for (let c = 0; c < N_COLORS; c++) start[c + 1] += start[c];
    const fill = start.slice(0, N_COLORS);
    for (let j = 0; j < nv; j++) { const i = this.vis[j]; this.byColor[fill[sc.color[i]]++] = i; }
    return start;
  }

  private drawEdges(sc: Scene, x0: number, y0: number, x1: number, y1: number, nv: number, each: boolean) {
    const ctx = this.ctx, px = 1 / this.s;
    const curves = this.s >= SHAPES;
    const arrows = this.s >= ARROWS;
    const stubs = this.s * 9 >= 1.5;
    ctx.strokeStyle = this.edge;
    ctx.lineWidth = curves ? Math.max(1.2, px) : px;
    ctx.globalAlpha = curves ? 0.75 : 0.5;
    for (let pass = 0; pass < 2; pass++) {
      if (pass === 1) ctx.setLineDash([5, 4]);
      ctx.beginPath();
      if (pass === 0) {
        // The buses' bars and trunks.
        const g = sc.segs;
        for (let k = 0; k < g.length; k += 4) {
          if (Math.min(g[k], g[k + 2]) > x1 || Math.max(g[k], g[k + 2]) < x0 || Math.min(g[k + 1], g[k + 3]) > y1 || Math.max(g[k + 1], g[k + 3]) < y0) continue;
          ctx.moveTo(g[k], g[k + 1]);
          ctx.lineTo(g[k + 2], g[k + 3]);
        }
      }
      for (let e = 0; e < sc.src.length; e++) {
        if (sc.epend[e] !== pass) continue;
        const a = sc.src[e], b = sc.dst[e];
        const bus = sc.bus[e];
        if (!bus && !each) continue;
        if (bus) {
          if (!stubs) continue;
          // A stub between the node and its bus bar.
          const v = bus === 1 ? b : a;
          const x = sc.x[v], y = bus === 1 ? sc.y[v] - sc.h[v] / 2 - (arrows ? 6 : 0) : sc.y[v] + sc.h[v] / 2;
          if (x < x0 || x > x1 || Math.max(y, sc.stubY[e]) < y0 || Math.min(y, sc.stubY[e]) > y1) continue;
          ctx.moveTo(x, sc.stubY[e]);
          ctx.lineTo(x, y);
          continue;
        }
        const b4 = e * 4;
        if (sc.ebox[b4] > x1 || sc.ebox[b4 + 2] < x0 || sc.ebox[b4 + 1] > y1 || sc.ebox[b4 + 3] < y0) continue;
        const sx = sc.x[a], sy = sc.y[a] + sc.h[a] / 2, dx = sc.x[b], dy = sc.y[b] - sc.h[b] / 2 - (arrows ? 6 : 0);
        ctx.moveTo(sx, sy);
        const p0 = sc.pOff[e], p1 = sc.pOff[e + 1];
        // Through the bend points: S-curves between each pair when zoomed in, straight lines when not.
        let cx = sx, cy = sy;
        for (let p = p0; p <= p1; p++) {
          const nx = p < p1 ? sc.pts[2 * p] : dx, ny = p < p1 ? sc.pts[2 * p + 1] : dy;
          if (curves && ny > cy) {
            const my = (cy + ny) / 2;
            ctx.bezierCurveTo(cx, my, nx, my, nx, ny);
          } else ctx.lineTo(nx, ny);
          cx = nx; cy = ny;
        }
      }
      ctx.stroke();
    }
    ctx.setLineDash([]);
    if (arrows) {
      // One arrowhead per node with edges in (however many lead there).
      ctx.fillStyle = this.edge;
      ctx.beginPath();
      for (let j = 0; j < nv; j++) {
        const b = this.byColor[j];
        if (!sc.inDeg[b]) continue;
        const dx = sc.x[b], dy = sc.y[b] - sc.h[b] / 2;
        ctx.moveTo(dx, dy);
        ctx.lineTo(dx - 4, dy - 7);
        ctx.lineTo(dx + 4, dy - 7);
        ctx.closePath();
      }
      ctx.fill();
    }
    ctx.globalAlpha = 1;
  }

  /**
   * drawRects: zoomed out, each node a plain rectangle in its phase colour,
   * snapped to device pixels and filled without antialiasing (a fast blit,
   * however small the nodes get).
   */
  private drawRects(sc: Scene, bounds: Int32Array) {
    const ctx = this.ctx;
    const k = this.s * this.dpr, ox = this.tx * this.dpr, oy = this.ty * this.dpr;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    for (let c = 0; c < N_COLORS; c++) {
      if (bounds[c] === bounds[c + 1]) continue;
      ctx.fillStyle = this.pal[c];
      ctx.globalAlpha = c === C_NOTSTARTED ? 0.45 : 1;
      for (let j = bounds[c]; j < bounds[c + 1]; j++) {
        const i = this.byColor[j];
        const hw = sc.w[i] / 2, hh = sc.h[i] / 2;
        const l = Math.round((sc.x[i] - hw) * k + ox), t = Math.round((sc.y[i] - hh) * k + oy);
        const r = Math.round((sc.x[i] + hw) * k + ox), b = Math.round((sc.y[i] + hh) * k + oy);
        ctx.fillRect(l, t, r > l ? r - l : 1, b > t ? b - t : 1);
      }
    }
    ctx.globalAlpha = 1;
    ctx.setTransform(k, 0, 0, k, ox, oy);
  }

  private shape(sc: Scene, i: number, grow = 0) {
    const ctx = this.ctx;
    const w = sc.w[i] + 2 * grow, h = sc.h[i] + 2 * grow, x = sc.x[i] - w / 2, y = sc.y[i] - h / 2;
    const kd = sc.kind[i];
    if (kd === K_DOT) {
      ctx.moveTo(sc.x[i] + w / 2, sc.y[i]);
      ctx.arc(sc.x[i], sc.y[i], w / 2, 0, Math.PI * 2);
    } else if (ctx.roundRect) ctx.roundRect(x, y, w, h, kd === K_BOX ? 6 + grow : h / 2);
    else ctx.rect(x, y, w, h);
  }

  /** drawShapes: zoomed in, outlined shapes with phase icons and, closer, labels. */
  private drawShapes(sc: Scene, bounds: Int32Array, nv: number) {
    const ctx = this.ctx;
    // Backgrounds in one path.
    ctx.fillStyle = this.panel;
    ctx.beginPath();
    for (let j = 0; j < nv; j++) { const i = this.byColor[j]; if (sc.kind[i] !== K_DOT) this.shape(sc, i); }
    ctx.fill();
    ctx.lineWidth = 1.5;
    for (let c = 0; c < N_COLORS; c++) {
      if (bounds[c] === bounds[c + 1]) continue;
      ctx.strokeStyle = ctx.fillStyle = this.pal[c];
      const dashed = c === C_NOTSTARTED || c === C_FOLD;
      if (dashed) ctx.setLineDash([5, 3]);
      ctx.beginPath();
      for (let j = bounds[c]; j < bounds[c + 1]; j++) { const i = this.byColor[j]; if (sc.kind[i] !== K_DOT) this.shape(sc, i); }
      ctx.stroke();
      ctx.setLineDash([]);
      // Dots and icon discs in the phase colour.
      ctx.globalAlpha = c === C_NOTSTARTED ? 0.5 : 1;
      ctx.beginPath();
      for (let j = bounds[c]; j < bounds[c + 1]; j++) {
        const i = this.byColor[j];
        if (sc.kind[i] === K_DOT) this.shape(sc, i);
        else if (sc.kind[i] !== K_FOLD) {
          const r = sc.kind[i] === K_BOX ? 9 : 6;
          const cx = sc.x[i] - sc.w[i] / 2 + (sc.kind[i] === K_BOX ? 16 : 12);
          ctx.moveTo(cx + r, sc.y[i]);
          ctx.arc(cx, sc.y[i], r, 0, Math.PI * 2);
        }
      }
      ctx.fill();
      ctx.globalAlpha = 1;
      this.drawIcons(sc, c, bounds);
    }
    if (this.s >= TEXT) this.drawText(sc, nv);
  }

  /** drawIcons draws the glyph of colour c's phase on each box's disc (in the panel colour). */
  private drawIcons(sc: Scene, c: number, bounds: Int32Array) {
    if (this.s < TEXT || c === C_NOTSTARTED || c === C_FOLD) return;
    const ctx = this.ctx;
    ctx.strokeStyle = ctx.fillStyle = this.panel;
    ctx.lineWidth = 1.8;
    ctx.beginPath();
    for (let j = bounds[c]; j < bounds[c + 1]; j++) {
      const i = this.byColor[j];
      if (sc.kind[i] !== K_BOX) continue;
      const cx = sc.x[i] - sc.w[i] / 2 + 16, cy = sc.y[i];
      switch (c) {
        case C_OK: ctx.moveTo(cx - 4, cy); ctx.lineTo(cx - 1, cy + 3); ctx.lineTo(cx + 4, cy - 3); break;
        case C_FAIL: ctx.moveTo(cx - 3, cy - 3); ctx.lineTo(cx + 3, cy + 3); ctx.moveTo(cx + 3, cy - 3); ctx.lineTo(cx - 3, cy + 3); break;
        case C_ERR: ctx.moveTo(cx, cy - 4); ctx.lineTo(cx, cy + 1); ctx.moveTo(cx, cy + 3); ctx.lineTo(cx, cy + 4.5); break;
        case C_SKIP: ctx.moveTo(cx - 4, cy); ctx.lineTo(cx + 3, cy); ctx.moveTo(cx, cy - 3); ctx.lineTo(cx + 3, cy); ctx.lineTo(cx, cy + 3); break;
        case C_PENDING: ctx.moveTo(cx + 4, cy); ctx.arc(cx, cy, 4, 0, Math.PI * 2); break;
        case C_RUNNING: ctx.moveTo(cx - 2.5, cy - 4); ctx.lineTo(cx + 4, cy); ctx.lineTo(cx - 2.5, cy + 4); ctx.closePath(); break;
      }
    }
    if (c === C_RUNNING) ctx.fill();
    else ctx.stroke();
  }

  private fitLabel(i: number, text: string, max: number): string {
    const got = this.labels[i];
    if (got !== undefined) return got;
    const ctx = this.ctx;
    let t = text;
    let w = ctx.measureText(t).width;
    if (w > max) {
      let len = Math.max(1, Math.floor((t.length * max) / w) - 1);
      for (let k = 0; k < 6; k++) {
        t = text.slice(0, len) + '…';
        w = ctx.measureText(t).width;
        if (w <= max || len <= 1) break;
        len--;
      }
    }
    this.labels[i] = t;
    return t;
  }

  private drawText(sc: Scene, nv: number) {
    const ctx = this.ctx;
    const sub = this.s >= SUB;
    ctx.textBaseline = 'middle';
    const g = sc.graph;
    // Labels (all one font, so measured once each and cached).
    ctx.font = `12px ${this.font}`;
    ctx.fillStyle = this.fg;
    ctx.textAlign = 'left';
    for (let j = 0; j < nv; j++) {
      const i = this.byColor[j], kd = sc.kind[i];
      if (kd === K_DOT || kd === K_FOLD) continue;
      const node = g.nodes[sc.view.g[i]];
      const left = sc.x[i] - sc.w[i] / 2 + (kd === K_BOX ? 30 : 22);
      const room = sc.w[i] - (kd === K_BOX ? 38 : 30) - (node.fanout ? 34 : 0);
      const y = kd === K_BOX && sub ? sc.y[i] - 7 : sc.y[i];
      ctx.fillText(this.fitLabel(i, node.label, room), left, y);
    }
    ctx.font = `600 12px ${this.font}`;
    ctx.fillStyle = this.accent;
    ctx.textAlign = 'center';
    for (let j = 0; j < nv; j++) {
      const i = this.byColor[j];
      if (sc.kind[i] === K_FOLD) ctx.fillText(`+${fmt(sc.view.foldCount[i])} more`, sc.x[i], sc.y[i]);
    }
    ctx.font = `11px ${this.font}`;
    ctx.textAlign = 'right';
    for (let j = 0; j < nv; j++) {
      const i = this.byColor[j];
      if (sc.kind[i] !== K_BOX) continue;
      const fo = g.nodes[sc.view.g[i]].fanout;
      if (fo) ctx.fillText(fo, sc.x[i] + sc.w[i] / 2 - 8, sc.y[i] - (sub ? 7 : 0));
    }
    if (!sub) return;
    ctx.fillStyle = this.muted;
    ctx.textAlign = 'left';
    for (let j = 0; j < nv; j++) {
      const i = this.byColor[j];
      if (sc.kind[i] === K_BOX) ctx.fillText(this.host.sub(i), sc.x[i] - sc.w[i] / 2 + 30, sc.y[i] + 9, sc.w[i] - 38);
    }
  }

  /** drawMarks outlines the selected and the hovered node (visible at any zoom). */
  private drawMarks(sc: Scene) {
    const ctx = this.ctx;
    const mark = (i: number, color: string, width: number) => {
      if (i < 0 || i >= sc.n) return;
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      ctx.beginPath();
      this.shape(sc, i, width / 2 + 2 / this.s);
      ctx.stroke();
    };
    mark(this.hover, this.fg, Math.max(1, 1.5 / this.s));
    mark(this.selected, this.accent, Math.max(3, 3 / this.s));
  }

  // ---- input ----

  private at(e: { clientX: number; clientY: number }) {
    const r = this.canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  private world(p: { x: number; y: number }) {
    return { x: (p.x - this.tx) / this.s, y: (p.y - this.ty) / this.s };
  }

  private on<K extends keyof HTMLElementEventMap>(t: EventTarget, type: K, f: (e: HTMLElementEventMap[K]) => void, opts?: AddEventListenerOptions) {
    t.addEventListener(type, f as EventListener, opts);
    this.cleanup.push(() => t.removeEventListener(type, f as EventListener, opts));
  }

  private listen() {
    const c = this.canvas;
    const ro = new ResizeObserver(() => this.resize());
    ro.observe(c.parentElement!);
    this.cleanup.push(() => ro.disconnect());
    const mo = new MutationObserver(() => this.readColors());
    mo.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme', 'class', 'style'] });
    this.cleanup.push(() => mo.disconnect());
    const mq = window.matchMedia('(prefers-color-scheme: dark)');
    const onScheme = () => this.readColors();
    mq.addEventListener('change', onScheme);
    this.cleanup.push(() => mq.removeEventListener('change', onScheme));
    this.on(c, 'pointerdown', (e) => this.pointerDown(e));
    this.on(c, 'pointermove', (e) => this.pointerMove(e));
    this.on(c, 'pointerup', (e) => this.pointerUp(e));
    this.on(c, 'pointercancel', (e) => { this.pointers.delete(e.pointerId); this.down = undefined; });
    this.on(c, 'pointerleave', () => { if (!this.pointers.size) this.setHover(-1); });
    this.on(c, 'wheel', (e) => this.wheel(e), { passive: false });
    this.on(c, 'dblclick', (e) => { const p = this.at(e); this.zoom(2, p.x, p.y); });
    this.on(c, 'keydown', (e) => this.key(e));
  }

  private pointerDown(e: PointerEvent) {
    if (e.button !== 0 && e.pointerType === 'mouse') return;
    try { this.canvas.setPointerCapture(e.pointerId); } catch { /* a synthetic pointer */ }
    const p = this.at(e);
    this.pointers.set(e.pointerId, p);
    this.down = this.pointers.size === 1 ? { ...p, moved: false } : undefined;
    this.hideTip();
  }

  private pointerMove(e: PointerEvent) {
    const p = this.at(e);
    const prev = this.pointers.get(e.pointerId);
    if (!prev) { this.hoverAt(p, e); return; }
    if (this.pointers.size === 2) {
      // Pinch: zoom by the change in distance around the midpoint, pan by the midpoint's move.
      const other = [...this.pointers.entries()].find(([id]) => id !== e.pointerId)![1];
      const d0 = Math.hypot(prev.x - other.x, prev.y - other.y), d1 = Math.hypot(p.x - other.x, p.y - other.y);
      this.pointers.set(e.pointerId, p);
      if (d0 > 0) this.zoom(d1 / d0, (p.x + other.x) / 2, (p.y + other.y) / 2);
      this.pan((p.x - prev.x) / 2, (p.y - prev.y) / 2);
      return;
    }
    this.pointers.set(e.pointerId, p);
    if (this.down && !this.down.moved && Math.hypot(p.x - this.down.x, p.y - this.down.y) > 4) this.down.moved = true;
    if (this.down?.moved) this.pan(p.x - prev.x, p.y - prev.y);
  }

  private pointerUp(e: PointerEvent) {
    const p = this.at(e);
    const was = this.pointers.has(e.pointerId);
    this.pointers.delete(e.pointerId);
    if (was && this.down && !this.down.moved && this.scene) {
      const w = this.world(p);
      this.host.click(hit(this.scene, w.x, w.y, 4 / this.s));
    }
    this.down = undefined;
  }

  private wheel(e: WheelEvent) {
    e.preventDefault();
    const p = this.at(e);
    if (!e.ctrlKey && Math.abs(e.deltaX) > Math.abs(e.deltaY)) { this.pan(-e.deltaX, 0); return; }
    const unit = e.deltaMode === 1 ? 0.05 : e.deltaMode === 2 ? 0.5 : e.ctrlKey ? 0.01 : 0.002;
    this.zoom(Math.exp(-e.deltaY * unit), p.x, p.y);
  }

  private key(e: KeyboardEvent) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const step = e.shiftKey ? 240 : 60;
    const sc = this.scene;
    const move = (d: number) => {
      if (!sc || !sc.n) return;
      readingOrder(sc);
      const r = this.selected >= 0 ? sc.rank[this.selected] + d : d > 0 ? 0 : sc.n - 1;
      this.host.step(sc.order[Math.min(sc.n - 1, Math.max(0, r))]);
    };
    switch (e.key) {
      case 'ArrowLeft': this.pan(step, 0); break;
      case 'ArrowRight': this.pan(-step, 0); break;
      case 'ArrowUp': this.pan(0, step); break;
      case 'ArrowDown': this.pan(0, -step); break;
      case '+': case '=': this.zoom(1.25); break;
      case '-': case '_': this.zoom(0.8); break;
      case '0': this.fit(); break;
      case 'n': case ']': move(1); break;
      case 'p': case '[': move(-1); break;
      case 'Enter': case ' ': if (this.selected >= 0) this.host.activate(this.selected); break;
      default: return;
    }
    e.preventDefault();
  }

  // ---- hover and tooltip ----

  private hoverAt(p: { x: number; y: number }, e: PointerEvent) {
    if (!this.scene) return;
    const w = this.world(p);
    const i = hit(this.scene, w.x, w.y, 2 / this.s);
    this.setHover(i);
    if (i >= 0) this.showTip(i, p, e);
  }

  private setHover(i: number) {
    if (i === this.hover) return;
    this.hover = i;
    this.canvas.style.cursor = i >= 0 ? 'pointer' : 'grab';
    if (i < 0) this.hideTip();
    this.invalidate();
  }

  private tipFor = -1;

  private showTip(i: number, p: { x: number; y: number }, _e: PointerEvent) {
    const tip = this.tip;
    if (this.tipFor !== i) {
      const d = this.host.describe(i);
      tip.textContent = '';
      const t = document.createElement('strong');
      t.textContent = d.title;
      tip.append(t);
      for (const l of d.lines) {
        const div = document.createElement('div');
        div.textContent = l;
        tip.append(div);
      }
      this.tipFor = i;
      tip.hidden = false;
    }
    const tw = tip.offsetWidth, th = tip.offsetHeight;
    const x = Math.min(p.x + 14, this.cw - tw - 4), y = p.y + 16 + th > this.ch ? p.y - th - 10 : p.y + 16;
    tip.style.transform = `translate(${Math.max(0, x)}px, ${Math.max(0, y)}px)`;
  }

  private hideTip() {
    this.tip.hidden = true;
    this.tipFor = -1;
  }
}
