// The two log views of LogViewer, both virtualized (only the rows in
// sight are in the DOM, each LH px high):
//  - StreamView: the API's line stream, the last lines kept (LineStore);
//  - RangedView: one step's raw log read by byte ranges (RangedLog), its
//    scrollbar mapped to byte offsets, so any size opens at once.
import type { RefObject } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ErrorBox } from '../lib/ui';
import { LineStore, readLogStream } from './logs-stream';
import { CHUNK, NotRanged, RangedLog, type Pos } from './logs-range';

/** The height of a row, as .logs-row sets it in logs.css. */
export const LH = 18;
/** The tallest spacer: browsers cap an element's height (Firefox near 17.9M px). */
const MAX_PX = 10_000_000;
const STREAM_CAP = 100_000;

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
export const fmtBytes = (n: number) =>
  n < 1024 ? `${n} B` : n < 1 << 20 ? `${(n / 1024).toFixed(1)} KiB` : n < 1 << 30 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${(n / (1 << 30)).toFixed(2)} GiB`;

/** useBox tracks an element's inner size and the width of a monospace character in it. */
function useBox(ref: RefObject<HTMLElement>, measure: RefObject<HTMLElement>) {
  const [box, setBox] = useState({ w: 800, h: 400, ch: 7.5 });
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const read = () => {
      const ch = (measure.current?.getBoundingClientRect().width ?? 75) / 10 || 7.5;
      setBox({ w: el.clientWidth, h: el.clientHeight, ch });
    };
    read();
    const ro = new ResizeObserver(read);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return box;
}

const Measure = ({ r }: { r: RefObject<HTMLSpanElement> }) => <span class="logs-measure" aria-hidden="true" ref={r}>0000000000</span>;

export interface StreamProps {
  path: string;
  follow: boolean;
  wrap: boolean;
  /** show each line's step (the whole workflow's log) */
  showPods: boolean;
  podLabel: (pod: string) => string;
  label: string;
  /** tailLines asked of the server per step: a step that sent this many had older lines left out */
  tail?: number;
  empty: string;
}

/** StreamView shows the API's log stream, keeping its last lines. */
export function StreamView(p: StreamProps) {
  const store = useRef(new LineStore(STREAM_CAP)).current;
  const pods = useRef<{ names: string[]; index: Map<string, number>; sent: number[] }>({ names: [], index: new Map(), sent: [] });
  const [, setVersion] = useState(0);
  const [end, setEnd] = useState<{ done: boolean; error: Error | null }>({ done: false, error: null });
  useEffect(() => {
    store.clear();
    pods.current = { names: [], index: new Map(), sent: [] };
    setEnd({ done: false, error: null });
    setVersion(store.version);
    return readLogStream(p.path, (batch) => {
      const pd = pods.current;
      for (const e of batch) {
        const name = e.podName ?? '';
        let i = pd.index.get(name);
        if (i === undefined) { i = pd.names.length; pd.names.push(name); pd.index.set(name, i); pd.sent.push(0); }
        pd.sent[i]++;
        store.push(e.content ?? '', i);
      }
      setVersion(store.version);
    }, (error) => setEnd({ done: true, error }));
  }, [p.path]);

  const tailCut = p.tail !== undefined && pods.current.sent.some((n) => n >= p.tail!);
  const save = () => {
    const parts: string[] = [];
    for (let i = 0; i < store.count; i++) {
      parts.push((p.showPods ? p.podLabel(pods.current.names[store.podOf(i)]) + ': ' : '') + store.line(i) + '\n');
    }
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob(parts, { type: 'text/plain' }));
    a.download = 'logs.txt';
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  };
  return (
    <div class="logs-view">
      <div class="logs-status" role="status">
        <span>{fmt(store.count)} lines{end.done ? '' : p.follow ? ' · following' : ' · loading'}</span>
        {store.dropped > 0 && <span class="logs-warn">{fmt(store.dropped)} older lines were dropped: only the last {fmt(store.count)} are kept</span>}
        {tailCut && <span class="logs-warn">A step's log is longer than {fmt(p.tail!)} lines: only its last {fmt(p.tail!)} were loaded (choose the step to read all of it)</span>}
        {store.count > 0 && <button type="button" class="logs-small" onClick={save}>Save shown lines</button>}
      </div>
      <ErrorBox error={end.error} />
      <StreamRows store={store} pods={pods.current.names} {...p} />
      {end.done && !end.error && store.count === 0 && <p class="hint">{p.empty}</p>}
    </div>
  );
}

/** StreamRows is the virtual list of a LineStore. */
function StreamRows(p: StreamProps & { store: LineStore; pods: string[] }) {
  const el = useRef<HTMLDivElement>(null);
  const meas = useRef<HTMLSpanElement>(null);
  const box = useBox(el, meas);
  const [scroll, setScroll] = useState(0);
  const atBottom = useRef(true);
  const { store } = p;
  const gutter = p.showPods ? 18 : 0; // characters
  const cols = Math.max(20, Math.floor((box.w - 16) / box.ch) - gutter - 1);
  // With wrap, a line takes ceil(length / cols) rows: their running sum
  // maps a row to its line (recomputed once a batch, O(lines)).
  const cum = useMemo(() => {
    if (!p.wrap) return null;
    const c = new Float64Array(store.count + 1);
    for (let i = 0; i < store.count; i++) c[i + 1] = c[i] + Math.max(1, Math.ceil(store.line(i).length / cols));
    return c;
  }, [p.wrap, store.version, cols]);
  const total = cum ? cum[store.count] : store.count;
  const visible = Math.ceil(box.h / LH) + 1;
  const full = total * LH;
  const spacer = Math.min(full, MAX_PX);
  const scaled = full > MAX_PX;
  const first = Math.max(0, Math.min(Math.max(0, total - visible + 1),
    scaled ? Math.round((scroll / Math.max(1, spacer - box.h)) * Math.max(0, total - visible + 1)) : Math.floor(scroll / LH)));

  // Stay at the bottom while following; else keep the same lines in
  // sight when the oldest are dropped (rows shift up by as many).
  const dropped = useRef(store.dropped);
  useLayoutEffect(() => {
    const e = el.current;
    const gone = store.dropped - dropped.current;
    dropped.current = store.dropped;
    if (!e) return;
    if (p.follow && atBottom.current) {
      if (e.scrollHeight > e.clientHeight) e.scrollTop = e.scrollHeight;
    } else if (gone > 0 && !cum && !scaled) {
      e.scrollTop = Math.max(0, e.scrollTop - gone * LH);
    }
    setScroll(e.scrollTop);
  }, [total, store.version, p.follow]);

  const onScroll = () => {
    const e = el.current!;
    atBottom.current = e.scrollTop + e.clientHeight >= e.scrollHeight - LH;
    setScroll(e.scrollTop);
  };
  const rows = [];
  for (let r = first; r < Math.min(total, first + visible); r++) {
    let li = r;
    let text: string;
    let lead = true;
    if (cum) {
      let lo = 0;
      let hi = store.count - 1;
      while (lo < hi) { // the last line starting at or before row r
        const mid = (lo + hi + 1) >> 1;
        if (cum[mid] <= r) lo = mid; else hi = mid - 1;
      }
      li = lo;
      const piece = r - cum[li];
      lead = piece === 0;
      text = store.line(li).slice(piece * cols, (piece + 1) * cols);
    } else {
      text = store.line(li);
    }
    rows.push(
      <div class="logs-row" key={r}>
        {p.showPods && <span class="logs-gut logs-pod">{lead ? p.podLabel(p.pods[store.podOf(li)]) : ''}</span>}
        <span class="logs-text">{text}</span>
      </div>,
    );
  }
  return (
    <div class="logs-scroll" ref={el} onScroll={onScroll} tabIndex={0} role="region" aria-label={p.label}>
      <Measure r={meas} />
      <div class="logs-spacer" style={{ height: `${spacer}px` }} />
      <div class="logs-window" style={{ transform: `translateY(${scaled ? scroll : first * LH}px)` }}>{rows}</div>
    </div>
  );
}

export interface RangedProps {
  url: string;
  wrap: boolean;
  label: string;
  empty: string;
  /** the server has no ranged route: use the stream */
  onNotRanged: () => void;
}

/**
 * RangedView shows one step's raw log by byte ranges. The scrollbar is a
 * fraction of the bytes (a height of about size / bytes-per-line rows,
 * capped at MAX_PX); the wheel and the keys move by pieces (lines), so
 * scrolling is line by line at any size.
 */
export function RangedView(p: RangedProps) {
  const [nonce, setNonce] = useState(0);
  const rl = useMemo(() => new RangedLog(p.url), [p.url, nonce]);
  const [state, setState] = useState<{ open: boolean; error: Error | null }>({ open: false, error: null });
  const [, bump] = useState(0);
  const reopenAt = useRef<number | 'end' | null>(null);
  const top = useRef<Pos>({ k: 0, i: 0 });
  const pending = useRef<number | 'end' | null>(null);
  useEffect(() => {
    setState({ open: false, error: null });
    rl.onChange = () => bump((n) => n + 1);
    rl.open().then(() => {
      top.current = { k: 0, i: 0 };
      pending.current = reopenAt.current;
      reopenAt.current = null;
      setState({ open: true, error: null });
    }, (e) => {
      if (e instanceof NotRanged) p.onNotRanged();
      else if (e?.name !== 'AbortError') setState({ open: false, error: e });
    });
    return () => rl.close();
  }, [rl]);
  if (state.error) return <ErrorBox error={state.error} />;
  if (!state.open) return <div class="loading" aria-busy="true">Opening the log…</div>;
  if (rl.size === 0) return <p class="hint">{p.empty}</p>;
  const reload = () => {
    reopenAt.current = pending.current ?? rl.offset(top.current);
    setNonce((n) => n + 1);
  };
  return <RangedRows rl={rl} top={top} pending={pending} reload={reload} {...p} />;
}

type RowsProps = RangedProps & { rl: RangedLog; top: { current: Pos }; pending: { current: number | 'end' | null }; reload: () => void };

function RangedRows(p: RowsProps) {
  const { rl, top, pending } = p;
  const el = useRef<HTMLDivElement>(null);
  const meas = useRef<HTMLSpanElement>(null);
  const box = useBox(el, meas);
  const [, bump] = useState(0);
  const expected = useRef(-1);
  const acc = useRef(0);
  const rows = Math.max(1, Math.floor(box.h / LH));
  const bpl = rl.bytesPerLine;
  const spacer = Math.max(box.h, Math.min(MAX_PX, Math.ceil(rl.size / bpl) * LH));
  const range = Math.max(1, spacer - box.h);

  /** lastTop is the top of the last page, undefined while a chunk it needs loads. */
  const lastTop = (): Pos | undefined => {
    let q = rl.last();
    for (let j = 0; q && j < rows - 1; j++) {
      const r = rl.prev(q);
      if (r === undefined) return undefined;
      if (r === null) break;
      q = r;
    }
    return q;
  };
  const lt = lastTop();
  const maxOff = lt ? rl.offset(lt) : Math.max(0, rl.size - rows * bpl);

  // A position waiting for its chunk takes it when the chunk is here.
  if (pending.current === 'end' && lt) { top.current = lt; pending.current = null; }
  else if (typeof pending.current === 'number') {
    const q = rl.at(pending.current);
    if (q) { top.current = q; pending.current = null; }
  }
  // Moving down never goes past the last page.
  if (lt && rl.offset(top.current) > maxOff) top.current = lt;

  const frac = pending.current === 'end' ? 1 : maxOff > 0 ? Math.min(1, (typeof pending.current === 'number' ? pending.current : rl.offset(top.current)) / maxOff) : 0;
  const sync = () => {
    const e = el.current;
    if (!e) return;
    const want = Math.round(frac * range);
    if (Math.abs(e.scrollTop - want) > 1) {
      e.scrollTop = want;
      expected.current = e.scrollTop;
    }
  };
  useLayoutEffect(sync);

  const go = (f: () => void) => { f(); bump((n) => n + 1); };
  const step = (n: number) => go(() => {
    if (pending.current !== null) return; // still on its way
    top.current = rl.move(top.current, n);
  });
  const toStart = () => go(() => { pending.current = null; top.current = { k: 0, i: 0 }; });
  const toEnd = () => go(() => { pending.current = 'end'; });
  const onScroll = () => {
    const e = el.current!;
    if (Math.abs(e.scrollTop - expected.current) <= 1) return; // our own sync
    expected.current = e.scrollTop;
    const f = e.scrollTop / range;
    go(() => { pending.current = f >= 0.9999 ? 'end' : Math.floor(f * maxOff); });
  };
  useEffect(() => {
    const e = el.current!;
    const onWheel = (ev: WheelEvent) => {
      if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) return; // sideways: the browser's
      ev.preventDefault();
      acc.current += ev.deltaY * (ev.deltaMode === 1 ? 1 : ev.deltaMode === 2 ? rows : 1 / LH);
      const n = Math.trunc(acc.current);
      acc.current -= n;
      if (n) step(n);
    };
    e.addEventListener('wheel', onWheel, { passive: false });
    return () => e.removeEventListener('wheel', onWheel);
  });
  const onKey = (ev: KeyboardEvent) => {
    const moves: Record<string, () => void> = {
      ArrowDown: () => step(1), ArrowUp: () => step(-1), PageDown: () => step(rows - 1), PageUp: () => step(1 - rows),
      Home: toStart, End: toEnd,
    };
    const f = moves[ev.key];
    if (f) { ev.preventDefault(); f(); }
  };

  const digits = fmt(rl.size).length;
  const out = [];
  let shownEnd = 0;
  let q: Pos | null | undefined = pending.current === null ? top.current : undefined;
  if (q && top.current.k > 0) rl.chunk(top.current.k - 1); // ahead of a scroll up
  for (let j = 0; j <= rows && q; j++) {
    const c = rl.chunk(q.k);
    if (!c) { q = undefined; break; }
    const cont = rl.isCont(c, q.i);
    shownEnd = q.k * CHUNK + c.ends[q.i];
    out.push(
      <div class="logs-row" key={`${q.k}.${q.i}`}>
        <span class="logs-gut" style={{ width: `${digits + 1}ch` }} title={cont ? 'the line goes on' : undefined}>{cont ? '↪' : fmt(rl.offset(q))}</span>
        <span class="logs-text">{rl.text(c, q.i)}</span>
      </div>,
    );
    q = rl.next(q);
  }
  if (q === null) shownEnd = rl.size; // the last line is in sight
  if (q === undefined) out.push(<div class="logs-row logs-loading" key="loading"><span class="logs-text">Loading…</span></div>);
  if (q) rl.chunk(q.k); // ahead of a scroll down

  const off = typeof pending.current === 'number' ? pending.current : pending.current === 'end' ? maxOff : rl.offset(top.current);
  return (
    <div class="logs-view">
      <div class="logs-status" role="status">
        <span>
          Bytes {fmt(off)}–{fmt(Math.max(off, shownEnd))} of {fmt(rl.size)} ({Math.floor((Math.max(off, shownEnd) / rl.size) * 100)}%) · line ≈{fmt(off / bpl + 1)} of ≈{fmt(rl.size / bpl)}
          <span class="hint"> (lines estimated from {fmt(bpl)} bytes a line; the left column is the byte offset)</span>
        </span>
        <span class="hint">{fmtBytes(rl.keptBytes())} held</span>
        <button type="button" class="logs-small" onClick={toStart}>Start</button>
        <button type="button" class="logs-small" onClick={toEnd}>End</button>
        <button type="button" class="logs-small" onClick={p.reload} title="read the log's size again (a running step's log grows)">Reload</button>
      </div>
      <ErrorBox error={rl.error} />
      <div class={`logs-scroll logs-ranged${p.wrap ? ' logs-wrap' : ''}`} ref={el} onScroll={onScroll} onKeyDown={onKey}
        tabIndex={0} role="region" aria-label={p.label}>
        <Measure r={meas} />
        <div class="logs-sticky" style={{ height: `${box.h}px` }}>{out}</div>
        <div style={{ height: `${Math.max(0, spacer - box.h)}px` }} />
      </div>
    </div>
  );
}
