// The filter bar. Every filter lives in the URL: a change here is a
// navigation (setQuery, or a new path for the namespace), and the page
// reads the filters back from the URL.
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, qs, seg } from '../../lib/api';
import { navigate, setQuery, useRoute } from '../../lib/router';
import type { List } from '../../lib/types';
import type { Counts } from './counts';
import { fromLocalInput, NAME_MODES, PHASES, Q, toLocalInput, type Filters } from './query';

const MODE_LABELS: Record<string, string> = { Contains: 'Contains', Prefix: 'Prefix', Exact: 'Exact', NotEquals: 'Not equals' };

/** change sets filters in the URL and goes back to the first page. */
function change(changes: Record<string, string | undefined>, push = true) {
  setQuery({ ...changes, [Q.pages]: undefined }, { push });
}

/** TextFilter is an input that commits (to the URL) on change: Enter or leaving it. */
function TextFilter({ id, label, value, onCommit, placeholder, list, onFocus, debounce }: {
  id: string; label: string; value: string; onCommit: (v: string) => void; placeholder?: string;
  list?: string; onFocus?: () => void; debounce?: number;
}) {
  const [v, setV] = useState(value);
  const timer = useRef<number>();
  useEffect(() => setV(value), [value]);
  useEffect(() => () => clearTimeout(timer.current), []);
  const commit = (x: string) => { clearTimeout(timer.current); if (x.trim() !== value) onCommit(x.trim()); };
  return (
    <label for={id}>
      {label}
      <input id={id} type="search" value={v} placeholder={placeholder} list={list} onFocus={onFocus} autoComplete="off"
        onInput={(e) => {
          const x = (e.target as HTMLInputElement).value;
          setV(x);
          if (debounce) { clearTimeout(timer.current); timer.current = window.setTimeout(() => commit(x), debounce); }
        }}
        onChange={(e) => commit((e.target as HTMLInputElement).value)} />
    </label>
  );
}

/** useNames loads the names of a kind in the namespace the first time asked (on focus). */
function useNames(kind: 'workflow-templates' | 'cron-workflows', ns: string) {
  const [names, setNames] = useState<string[]>([]);
  const loaded = useRef('');
  useEffect(() => { loaded.current = ''; setNames([]); }, [ns]);
  const load = () => {
    if (loaded.current === ns + '/') return;
    loaded.current = ns + '/';
    get<List<{ metadata: { name?: string } }>>(`api/v1/${kind}/${seg(ns)}` + qs({ fields: 'items.metadata.name' }))
      .then((l) => setNames([...new Set((l.items ?? []).map((i) => i.metadata?.name ?? '').filter(Boolean))].sort()),
        () => { loaded.current = ''; });
  };
  return { names, load };
}

function PhaseFilter({ phases, counts, countError }: { phases: string[]; counts: Counts | null; countError: Error | null }) {
  const toggle = (p: string) => {
    const next = phases.includes(p) ? phases.filter((x) => x !== p) : [...phases, p];
    change({ [Q.phase]: PHASES.filter((x) => next.includes(x)).join(',') });
  };
  const title = countError ? `Counts unavailable: ${countError.message}`
    : counts?.atLeast ? 'Counts of the first workflows only (the list is longer): lower bounds' : 'Workflows per phase for the other filters';
  return (
    <fieldset class="wl-phases" title={title}>
      <legend>Phase</legend>
      {PHASES.map((p) => {
        const n = counts?.byPhase[p];
        return (
          <label key={p} class={`wl-phase-opt phase-${p}`}>
            <input type="checkbox" checked={phases.includes(p)} onChange={() => toggle(p)} />
            <span>{p}</span>
            {n !== undefined && <span class="wl-count" aria-label={`${n}${counts?.atLeast ? ' or more' : ''} workflows`}>{n}{counts?.atLeast ? '+' : ''}</span>}
          </label>
        );
      })}
    </fieldset>
  );
}

export function FilterBar({ f, namespaces, counts, countError }: {
  f: Filters; namespaces: string[]; counts: Counts | null; countError: Error | null;
}) {
  const route = useRoute();
  const templates = useNames('workflow-templates', f.ns);
  const crons = useNames('cron-workflows', f.ns);
  const goNamespace = (ns: string) => {
    const q = new URLSearchParams(route.query);
    q.delete(Q.pages);
    navigate(ns ? `/workflows/${seg(ns)}` : '/workflows', { query: q });
  };
  const anyFilter = f.name || f.phases.length || f.labels || f.template || f.cron || f.createdAfter || f.finishedBefore;
  return (
    <form class="filters wl-filters" role="search" aria-label="Filter workflows" onSubmit={(e) => e.preventDefault()}>
      <TextFilter id="wl-ns" label="Namespace" value={f.ns} onCommit={goNamespace} placeholder="all namespaces" list="wl-ns-list" />
      <datalist id="wl-ns-list">{namespaces.map((n) => <option key={n} value={n} />)}</datalist>
      <div class="wl-name-filter">
        <TextFilter id="wl-name" label="Name" value={f.name} debounce={400} onCommit={(v) => change({ [Q.name]: v }, false)} />
        <label for="wl-name-mode">
          Match
          <select id="wl-name-mode" value={f.nameMode} onChange={(e) => change({ [Q.nameMode]: (e.target as HTMLSelectElement).value })}>
            {NAME_MODES.map((m) => <option key={m} value={m}>{MODE_LABELS[m]}</option>)}
          </select>
        </label>
      </div>
      <TextFilter id="wl-labels" label="Labels" value={f.labels} placeholder="team=a,env!=prod" onCommit={(v) => change({ [Q.label]: v })} />
      <TextFilter id="wl-template" label="Workflow template" value={f.template} list="wl-template-list" onFocus={templates.load}
        onCommit={(v) => change({ [Q.template]: v })} />
      <datalist id="wl-template-list">{templates.names.map((n) => <option key={n} value={n} />)}</datalist>
      <TextFilter id="wl-cron" label="Cron workflow" value={f.cron} list="wl-cron-list" onFocus={crons.load}
        onCommit={(v) => change({ [Q.cron]: v })} />
      <datalist id="wl-cron-list">{crons.names.map((n) => <option key={n} value={n} />)}</datalist>
      <label for="wl-after">
        Created after
        <input id="wl-after" type="datetime-local" value={toLocalInput(f.createdAfter)}
          onChange={(e) => change({ [Q.createdAfter]: fromLocalInput((e.target as HTMLInputElement).value) })} />
      </label>
      <label for="wl-before" title={f.archived ? 'The archive cannot filter by finish time' : undefined}>
        Finished before
        <input id="wl-before" type="datetime-local" value={toLocalInput(f.finishedBefore)} disabled={f.archived}
          onChange={(e) => change({ [Q.finishedBefore]: fromLocalInput((e.target as HTMLInputElement).value) })} />
      </label>
      <label class="wl-inline" for="wl-archived">
        <input id="wl-archived" type="checkbox" checked={f.archived}
          onChange={() => change({ [Q.archived]: f.archived ? undefined : '1', [Q.finishedBefore]: undefined })} />
        Archived
      </label>
      {anyFilter && (
        <button type="button" class="wl-clear" onClick={() => change({
          [Q.name]: undefined, [Q.phase]: undefined, [Q.label]: undefined, [Q.template]: undefined, [Q.cron]: undefined,
          [Q.createdAfter]: undefined, [Q.finishedBefore]: undefined,
        })}>Clear filters</button>
      )}
      <PhaseFilter phases={f.phases} counts={counts} countError={countError} />
    </form>
  );
}
