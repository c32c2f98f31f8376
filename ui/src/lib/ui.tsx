// Small pieces every page uses: loading data, errors, phases, times.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';

/** useAsync runs load on mount and when deps change; reload runs it again. */
export function useAsync<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [n, setN] = useState(0);
  useEffect(() => {
    const ac = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(ac.signal).then(
      (data) => { if (!ac.signal.aborted) setState({ data, loading: false }); },
      (error) => { if (!ac.signal.aborted) setState({ error, loading: false }); },
    );
    return () => ac.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, n]);
  const reload = useCallback(() => setN((x) => x + 1), []);
  return { ...state, reload, set: (data: T) => setState({ data, loading: false }) };
}

export function ErrorBox({ error }: { error?: Error | null }) {
  if (!error) return null;
  const status = error instanceof ApiError && error.status ? ` (${error.status})` : '';
  return <div class="error" role="alert">{error.message}{status}</div>;
}

export function Loading() {
  return <div class="loading" aria-busy="true">Loading…</div>;
}

const phaseIcon: Record<string, string> = {
  Succeeded: '✔', Failed: '✖', Error: '⚠', Running: '●', Pending: '○', Skipped: '↷', Omitted: '–', Suspended: '❚❚',
};

export function Phase({ phase }: { phase?: string }) {
  const p = phase || 'Pending';
  return <span class={`phase phase-${p}`} title={p}><span aria-hidden="true">{phaseIcon[p] ?? '○'}</span> {p}</span>;
}

/** ago is a short relative time ("3m ago", "in 2h"). */
export function ago(t?: string | null, now = Date.now()): string {
  if (!t) return '';
  const d = (now - Date.parse(t)) / 1000;
  const a = Math.abs(d);
  const s = a < 60 ? `${Math.round(a)}s` : a < 3600 ? `${Math.round(a / 60)}m` : a < 86400 ? `${Math.round(a / 3600)}h` : `${Math.round(a / 86400)}d`;
  return d >= 0 ? `${s} ago` : `in ${s}`;
}

/** duration of a start and an end (now when unfinished), as "1h2m3s". */
export function duration(start?: string | null, end?: string | null, now = Date.now()): string {
  if (!start) return '';
  let s = Math.max(0, Math.round(((end ? Date.parse(end) : now) - Date.parse(start)) / 1000));
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  return (h ? `${h}h` : '') + (h || m ? `${m}m` : '') + `${s}s`;
}

export function Time({ t }: { t?: string | null }) {
  if (!t) return <span>-</span>;
  return <time dateTime={t} title={new Date(t).toLocaleString()}>{ago(t)}</time>;
}

export function Page({ title, actions, children }: { title: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren }) {
  useEffect(() => {
    if (typeof title === 'string') document.title = `${title} · braid`;
  }, [title]);
  return (
    <section class="page">
      <header class="page-head">
        <h1>{title}</h1>
        {actions && <div class="actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

/** confirmAction asks before a destructive action. */
export const confirmAction = (what: string) => window.confirm(`${what}?`);
