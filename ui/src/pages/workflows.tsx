// The workflow list: filters in the URL, a page at a time (continue
// tokens), live updates from the watch stream, and batch actions.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { get } from '../lib/api';
import { href, setQuery } from '../lib/router';
import type { PageProps } from '../routes';
import type { List, WatchEvent, Workflow } from '../lib/types';
import { ErrorBox, Loading, Page, useAsync } from '../lib/ui';
import { ActionSummary, BatchActions, type ActionResult } from './workflows/actions';
import { usePhaseCounts } from './workflows/counts';
import { FilterBar } from './workflows/filters';
import { applyEvent, useWatch, type LiveState } from './workflows/live';
import { listPath, PAGE_SIZES, Q, readFilters, rowKey, watchPath, type Filters } from './workflows/query';
import { WorkflowTable } from './workflows/table';

const NS_KEY = 'braid.workflows.namespaces';

/** useSeenNamespaces remembers (in localStorage) the namespaces seen, for the namespace input. */
function useSeenNamespaces(rows: Workflow[], current: string): string[] {
  const [seen, setSeen] = useState<string[]>(() => {
    try { return JSON.parse(localStorage.getItem(NS_KEY) ?? '[]'); } catch { return []; }
  });
  useEffect(() => {
    const all = new Set(seen);
    rows.forEach((r) => r.metadata.namespace && all.add(r.metadata.namespace));
    if (current) all.add(current);
    if (all.size === seen.length) return;
    const next = [...all].sort().slice(0, 200);
    setSeen(next);
    try { localStorage.setItem(NS_KEY, JSON.stringify(next)); } catch { /* private mode: keep in memory */ }
  }, [rows, current]);
  return seen;
}

function LiveBadge({ state }: { state: LiveState }) {
  if (state === 'off') return null;
  const text = state === 'live' ? 'Live' : state === 'connecting' ? 'Connecting…' : 'Reconnecting…';
  return (
    <span class={`wl-live wl-live-${state}`} role="status" title="Updates from the watch stream">
      <span aria-hidden="true">●</span> {text}
    </span>
  );
}

function Pager({ f, next, shown, total }: { f: Filters; next?: string; shown: number; total?: number }) {
  const page = f.pages.length + 1;
  const go = (pages: string[]) => setQuery({ [Q.pages]: pages.join('.') || undefined }, { push: true });
  return (
    <nav class="wl-pager" aria-label="Pages">
      <button type="button" disabled={page === 1} onClick={() => go([])}>« First</button>
      <button type="button" disabled={page === 1} onClick={() => go(f.pages.slice(0, -1))}>‹ Previous</button>
      <span aria-live="polite">
        Page {page} · {shown} shown{total !== undefined ? ` · ${total} in all` : ''}
      </span>
      <button type="button" disabled={!next} onClick={() => next && go([...f.pages, next])}>Next ›</button>
      <label for="wl-limit" class="wl-inline">
        Per page
        <select id="wl-limit" value={String(f.limit)}
          onChange={(e) => setQuery({ [Q.limit]: (e.target as HTMLSelectElement).value, [Q.pages]: undefined }, { push: true })}>
          {[...new Set([...PAGE_SIZES, f.limit])].sort((a, b) => a - b).map((n) => <option key={n} value={n}>{n}</option>)}
        </select>
      </label>
    </nav>
  );
}

function Empty({ f, more }: { f: Filters; more: boolean }) {
  const filtered = f.name || f.phases.length || f.labels || f.template || f.cron || f.createdAfter || f.finishedBefore;
  if (more) {
    // braid applies finishedBefore after it cuts the page: a page may be empty with more after it.
    return <div class="card wl-empty"><p>No matching workflows on this page; the next pages may have some.</p></div>;
  }
  return (
    <div class="card wl-empty">
      <p><strong>No {f.archived ? 'archived ' : ''}workflows{f.ns ? ` in ${f.ns}` : ''}{filtered ? ' match the filters' : ''}.</strong></p>
      <p class="hint">
        {filtered ? 'Change or clear the filters, or ' : ''}
        <a href={href('/submit', f.ns ? { namespace: f.ns } : undefined)}>submit a new workflow</a>.
      </p>
    </div>
  );
}

export function WorkflowList({ params, query }: PageProps) {
  const f = useMemo(() => readFilters(params.ns, query), [params.ns, query.toString()]);
  const cont = f.pages[f.pages.length - 1];
  // The filters without paging: what the counts, the watch and the selection depend on.
  const filterKey = JSON.stringify({ ...f, pages: [], limit: 0 });
  const pageKey = filterKey + '|' + f.limit + '|' + (cont ?? '');
  const list = useAsync((signal) => get<List<Workflow>>(listPath(f, { cont }), signal), [pageKey]);
  // The rows are the page as loaded, then as the watch changed it: edits
  // hold the rows of one loaded page (base), and a new page replaces them
  // in the same render (no effect between the answer and the table).
  const [edits, setEdits] = useState<{ base?: List<Workflow>; rows: Workflow[] }>({ rows: [] });
  const base = useRef(list.data);
  base.current = list.data;
  const rows = list.data ? (edits.base === list.data ? edits.rows : list.data.items ?? []) : [];
  const setRows = (fn: (rs: Workflow[]) => Workflow[]) => setEdits((e) => {
    const b = base.current;
    return { base: b, rows: fn(e.base === b ? e.rows : b?.items ?? []) };
  });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [result, setResult] = useState<ActionResult | null>(null);
  const [bump, setBump] = useState(0);

  useEffect(() => { setSelected(new Set()); }, [pageKey]);

  const ready = !list.loading && !!list.data;
  // No watch on the archive, nor while the page fails (e.g. a bad label selector, which the watch would refuse too).
  const live = useWatch(f.archived || list.error ? null : watchPath(f), ready, (ev: WatchEvent<Workflow>) => {
    setRows((rs) => applyEvent(rs, ev, f, f.pages.length === 0));
    setBump((n) => n + 1);
  });
  // Events are lost while the stream is down: read the page again once it is back.
  const wasDown = useRef(false);
  useEffect(() => {
    if (live === 'reconnecting') wasDown.current = true;
    if (live === 'live' && wasDown.current) { wasDown.current = false; list.reload(); }
  }, [live]);

  const remaining = list.data?.metadata?.remainingItemCount;
  // Counts start once the first page of these filters is shown, and stay through reloads.
  const shownFor = useRef('');
  if (ready) shownFor.current = filterKey;
  const { counts, error: countError } = usePhaseCounts(f, filterKey, shownFor.current === filterKey, remaining !== undefined && remaining !== null, bump);
  const namespaces = useSeenNamespaces(rows, f.ns);
  const chosen = rows.filter((r) => selected.has(rowKey(r)));
  const next = list.data?.metadata?.continue;
  const total = remaining !== undefined && remaining !== null ? rows.length + Number(remaining) : undefined;

  const title = f.archived ? 'Archived workflows' : 'Workflows';
  return (
    <Page title={title} actions={<>
      <LiveBadge state={live} />
      <button type="button" onClick={list.reload} disabled={list.loading}>Refresh</button>
      <a class="button primary" href={href('/submit', f.ns ? { namespace: f.ns } : undefined)}>Submit new workflow</a>
    </>}>
      <FilterBar f={f} namespaces={namespaces} counts={counts} countError={countError} />
      <BatchActions selected={chosen} archived={f.archived} onDone={(r) => {
        setResult(r);
        setSelected(new Set());
        list.reload();
        setBump((n) => n + 1);
      }} />
      <ActionSummary result={result} onClose={() => setResult(null)} />
      {list.error && (
        <div>
          <ErrorBox error={list.error} />
          <button type="button" onClick={list.reload}>Try again</button>
        </div>
      )}
      {list.loading && !list.data && <Loading />}
      {list.data && rows.length === 0 && !list.loading && <Empty f={f} more={!!next} />}
      {rows.length > 0 && !list.error && (
        <WorkflowTable rows={rows} archived={f.archived} selected={selected} onSelect={setSelected} busy={list.loading} />
      )}
      {(rows.length > 0 || f.pages.length > 0 || next) && (
        <Pager f={f} next={next} shown={rows.length} total={total} />
      )}
    </Page>
  );
}
