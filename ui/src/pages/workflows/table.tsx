// The table of workflows: one row each, with a selection checkbox.
import { memo } from 'preact/compat';
import { useEffect, useRef, useState } from 'preact/hooks';
import { href } from '../../lib/router';
import type { Workflow } from '../../lib/types';
import { completed } from '../../lib/types';
import { ago, duration, Phase } from '../../lib/ui';
import { detailPath, rowKey } from './query';

/** useNow ticks every period ms while active. */
function useNow(active: boolean, period: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    const t = window.setInterval(() => setNow(Date.now()), period);
    return () => clearInterval(t);
  }, [active, period]);
  return now;
}

// One formatter for every cell: toLocaleString builds one per call, which
// costs a 500-row page a tenth of a second on each render.
const fullTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

function When({ t, now }: { t?: string | null; now: number }) {
  const ms = t ? Date.parse(t) : NaN;
  if (isNaN(ms)) return <span>-</span>;
  return <time dateTime={t!} title={fullTime.format(ms)}>{ago(t, now)}</time>;
}

function SelectAll({ rows, selected, onChange }: { rows: Workflow[]; selected: Set<string>; onChange: (s: Set<string>) => void }) {
  const ref = useRef<HTMLInputElement>(null);
  const n = rows.filter((r) => selected.has(rowKey(r))).length;
  const all = rows.length > 0 && n === rows.length;
  useEffect(() => { if (ref.current) ref.current.indeterminate = n > 0 && !all; });
  return (
    <input ref={ref} type="checkbox" checked={all} disabled={!rows.length} aria-label="Select all workflows on this page"
      onChange={() => onChange(all ? new Set() : new Set(rows.map(rowKey)))} />
  );
}

/** Row re-renders only when its props change: the running ones every second, the rest with the slow clock. */
const Row = memo(function Row({ wf, archived, checked, now, onToggle }: {
  wf: Workflow; archived: boolean; checked: boolean; now: number; onToggle: (k: string) => void;
}) {
  const m = wf.metadata;
  const st = wf.status ?? {};
  const suspended = !!wf.spec?.suspend && !completed(st.phase);
  // now only makes the row render again; read the clock itself, as the slow tick may be older than the row.
  const at = Math.max(now, Date.now());
  return (
    <tr class={checked ? 'wl-selected' : undefined}>
      <td class="wl-check"><input type="checkbox" checked={checked} onChange={() => onToggle(rowKey(wf))} aria-label={`Select ${m.name}`} /></td>
      <td>
        <Phase phase={st.phase} />
        {suspended && <span class="wl-tag" title="spec.suspend is set">suspended</span>}
      </td>
      <th scope="row" class="wl-name">
        <a href={href(detailPath(wf, archived))}>{m.name}</a>
      </th>
      <td>{m.namespace}</td>
      <td><When t={st.startedAt || m.creationTimestamp} now={at} /></td>
      <td><When t={st.finishedAt} now={at} /></td>
      <td class="wl-num">{duration(st.startedAt, st.finishedAt, at)}</td>
      <td class="wl-num">{st.progress ?? ''}</td>
      <td class="wl-msg" title={st.message}>{st.message ?? ''}</td>
    </tr>
  );
});

export function WorkflowTable({ rows, archived, selected, onSelect, busy }: {
  rows: Workflow[]; archived: boolean; selected: Set<string>; onSelect: (s: Set<string>) => void; busy: boolean;
}) {
  const fast = useNow(rows.some((r) => r.status?.startedAt && !r.status?.finishedAt), 1000);
  const slow = useNow(rows.length > 0, 30_000);
  // A stable toggle, so that memo skips the rows that did not change.
  const state = useRef({ selected, onSelect });
  state.current = { selected, onSelect };
  const toggle = useRef((k: string) => {
    const s = new Set(state.current.selected);
    if (s.has(k)) s.delete(k); else s.add(k);
    state.current.onSelect(s);
  }).current;
  return (
    <div class="wl-scroll">
      <table class="list wl-table" aria-busy={busy}>
        <caption class="wl-sr">{archived ? 'Archived workflows' : 'Workflows'}</caption>
        <thead>
          <tr>
            <th scope="col" class="wl-check"><SelectAll rows={rows} selected={selected} onChange={onSelect} /></th>
            <th scope="col">Phase</th>
            <th scope="col">Name</th>
            <th scope="col">Namespace</th>
            <th scope="col">Started</th>
            <th scope="col">Finished</th>
            <th scope="col">Duration</th>
            <th scope="col">Progress</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((wf) => {
            const k = rowKey(wf);
            const running = !!wf.status?.startedAt && !wf.status?.finishedAt;
            return <Row key={k} wf={wf} archived={archived} checked={selected.has(k)} now={running ? fast : slow} onToggle={toggle} />;
          })}
        </tbody>
      </table>
    </div>
  );
}
