// The timeline: a Gantt chart of the nodes, one row each by startedAt.
// Only the rows in view are rendered (fixed row height), so a workflow of
// 10,000 nodes scrolls as fast as one of ten.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { NodeStatus, Workflow } from '../../lib/types';
import { duration } from '../../lib/ui';

const ROW = 26;
const OVERSCAN = 8;
const leafTypes = new Set(['Pod', 'Container', 'Suspend', 'HTTP', 'Plugin']);

interface Row {
  n: NodeStatus;
  start: number; // ms, NaN when not started
  end: number; // ms, NaN when still running
}

interface Rows {
  rows: Row[];
  total: number;
  min: number;
  maxEnd: number;
  running: boolean;
}

/** buildRows picks the nodes (leaves unless all), sorted by start, and the time range. */
function buildRows(wf: Workflow, all: boolean): Rows {
  const nodes = Object.values(wf.status?.nodes ?? {});
  const rows: Row[] = [];
  let min = Infinity, maxEnd = -Infinity, running = false;
  for (const n of nodes) {
    if (!all && !(leafTypes.has(n.type) || !n.children?.length)) continue;
    const start = n.startedAt ? Date.parse(n.startedAt) : NaN;
    const end = n.finishedAt ? Date.parse(n.finishedAt) : NaN;
    if (start < min) min = start;
    if (end > maxEnd) maxEnd = end;
    if (!isNaN(start) && isNaN(end)) running = true;
    rows.push({ n, start, end });
  }
  // Not started last; ties by name so the order is stable between updates.
  rows.sort((a, b) => (isNaN(a.start) ? Infinity : a.start) - (isNaN(b.start) ? Infinity : b.start) || (a.n.name < b.n.name ? -1 : 1));
  const ws = wf.status?.startedAt ? Date.parse(wf.status.startedAt) : NaN;
  if (ws < min) min = ws;
  return { rows, total: nodes.length, min, maxEnd, running };
}

const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400, 172800, 604800].map((s) => s * 1000);

/** ticks picks a round step so that ticks are at least ~90px apart. */
function ticks(span: number, width: number): number[] {
  const most = Math.max(2, Math.floor(width / 90));
  const step = steps.find((s) => span / s <= most) ?? steps[steps.length - 1];
  const out: number[] = [];
  for (let t = 0; t <= span; t += step) out.push(t);
  return out;
}

function tickLabel(ms: number): string {
  if (ms === 0) return '0s';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return s % 60 ? `${Math.floor(s / 60)}m${s % 60}s` : `${s / 60}m`;
  if (s < 86400) return s % 3600 ? `${Math.floor(s / 3600)}h${Math.round((s % 3600) / 60)}m` : `${s / 3600}h`;
  return `${Math.round(s / 8640) / 10}d`;
}

export interface TimelineProps {
  wf: Workflow;
  version: number;
  selected?: string;
  onSelect: (id: string) => void;
  now: number;
}

export function Timeline({ wf, version, selected, onSelect, now }: TimelineProps) {
  const [all, setAll] = useState(false);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const data = useMemo(() => buildRows(wf, all), [version, all]);
  const { rows } = data;
  const box = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 600, width: 900 });
  const frame = useRef(0);

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setView((v) => ({ ...v, height: el.clientHeight, width: el.clientWidth }));
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  // Bring the selected row into view when it is chosen elsewhere (graph, URL).
  const index = useMemo(() => rows.findIndex((r) => r.n.id === selected), [rows, selected]);
  const keyed = useRef(false);
  useEffect(() => {
    const el = box.current;
    if (!el || index < 0) return;
    const y = index * ROW;
    if (y < el.scrollTop || y + ROW * 2 > el.scrollTop + el.clientHeight) el.scrollTop = Math.max(0, y - el.clientHeight / 2);
  }, [index]);
  // After an arrow key, focus follows the selection (once its row is rendered).
  useEffect(() => {
    if (!keyed.current) return;
    const b = box.current?.querySelector<HTMLButtonElement>('.wf-tl-row.sel');
    if (b) { keyed.current = false; b.focus({ preventScroll: true }); }
  });

  const onScroll = () => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      if (box.current) setView((v) => ({ ...v, top: box.current!.scrollTop }));
    });
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    e.preventDefault();
    const next = Math.min(rows.length - 1, Math.max(0, index + (e.key === 'ArrowDown' ? 1 : -1)));
    if (rows[next]) { keyed.current = true; onSelect(rows[next].n.id); }
  };

  const min = isFinite(data.min) ? data.min : now;
  const max = Math.max(data.running || !isFinite(data.maxEnd) ? now : data.maxEnd, min + 1000);
  const span = max - min;
  const barsWidth = Math.max(100, view.width - 300);
  const marks = ticks(span, barsWidth);
  const pct = (t: number) => `${((t - min) / span) * 100}%`;
  const first = Math.max(0, Math.floor(view.top / ROW) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((view.top + view.height) / ROW) + OVERSCAN);
  const slots = Math.ceil((view.height / ROW + 2 * OVERSCAN + 2) / 32) * 32;

  return (
    <div class="wf-tl">
      <div class="wf-tl-bar">
        <label class="wf-check"><input type="checkbox" checked={all} onChange={(e) => setAll((e.target as HTMLInputElement).checked)} /> Show all nodes</label>
        <span class="hint">{rows.length} of {data.total} nodes{!all ? ' (pods and other leaves)' : ''}; ↑/↓ to move</span>
      </div>
      <div class="wf-tl-scroll" ref={box} onScroll={onScroll} onKeyDown={onKey} role="list" aria-label="Timeline of the nodes">
        <div class="wf-tl-axis" aria-hidden="true">
          <div class="wf-tl-name">Node</div>
          <div class="wf-tl-track">
            {marks.map((m) => <span key={m} class="wf-tl-tick" style={{ left: `${(m / span) * 100}%` }}>{tickLabel(m)}</span>)}
          </div>
        </div>
        <div class="wf-tl-body" style={{ height: `${rows.length * ROW}px` }}>
          <div class="wf-tl-grid" aria-hidden="true" style={{ top: `${first * ROW}px`, height: `${(last - first) * ROW}px` }}>
            {marks.map((m) => <span key={m} style={{ left: `${(m / span) * 100}%` }} />)}
          </div>
          {rows.slice(first, last).map((r, i) => (
            // Keyed by slot, not node: scrolling patches the same elements rather than making new ones.
            <TimelineRow key={(first + i) % slots} r={r} top={(first + i) * ROW} sel={r.n.id === selected} onSelect={onSelect} now={now} pct={pct} span={span} />
          ))}
        </div>
        {rows.length === 0 && <p class="hint wf-tl-empty">No nodes have run yet.</p>}
      </div>
    </div>
  );
}

const dots: Record<string, string> = { Succeeded: '✔', Failed: '✖', Error: '⚠', Running: '●', Skipped: '↷', Omitted: '–' };

/** PhaseDot is the phase as an icon only: the row's label says it in words. */
function PhaseDot({ phase }: { phase?: string }) {
  const p = phase ?? 'Pending';
  return <span class={`phase phase-${p}`} aria-hidden="true">{dots[p] ?? '○'}</span>;
}

interface RowProps {
  r: Row;
  top: number;
  sel: boolean;
  onSelect: (id: string) => void;
  now: number;
  pct: (t: number) => string;
  span: number;
}

function TimelineRow({ r, top, sel, onSelect, now, pct, span }: RowProps) {
  const { n } = r;
  const started = !isNaN(r.start);
  const running = started && isNaN(r.end);
  const end = running ? now : r.end;
  const width = started ? `max(2px, ${(Math.max(0, end - r.start) / span) * 100}%)` : '0';
  const d = started ? duration(n.startedAt, n.finishedAt, now) : 'not started';
  const label = `${n.displayName ?? n.name}: ${n.phase ?? 'Pending'}, ${d}`;
  return (
    <div role="listitem" class="wf-tl-rowwrap" style={{ top: `${top}px`, height: `${ROW}px` }}>
      <button type="button" class={`wf-tl-row${sel ? ' sel' : ''}`} aria-pressed={sel} title={label} onClick={() => onSelect(n.id)}>
        <span class="wf-tl-name">
          <PhaseDot phase={n.phase} /> <span class="wf-tl-label">{n.displayName ?? n.name}</span>
          <span class="wf-sr">{n.phase ?? 'Pending'}</span>
          <span class="wf-tl-dur">{started ? d : ''}</span>
        </span>
        <span class="wf-tl-track">
          {started && <span class={`wf-tl-barfill ph-${n.phase ?? 'Pending'}${running ? ' running' : ''}`} style={{ left: pct(r.start), width }} />}
        </span>
      </button>
    </div>
  );
}
