// A small router on the History API. Paths are relative to the document's
// <base href> (braid server --base-href), so the UI works under a prefix.
import { useEffect, useState } from 'preact/hooks';

/** The path prefix the UI is served under, always ending in "/". */
export function basePath(): string {
  return new URL(document.baseURI).pathname;
}

/** The current route: the path under the base (with a leading "/") and the query. */
export interface Route {
  path: string;
  query: URLSearchParams;
}

function current(): Route {
  const base = basePath();
  let p = location.pathname;
  p = p.startsWith(base) ? '/' + p.slice(base.length) : p;
  return { path: p, query: new URLSearchParams(location.search) };
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((f) => f()));

/** href is the URL of a route path ("/workflows/ns") under the base. */
export function href(path: string, query?: Record<string, string | undefined> | URLSearchParams): string {
  const q = query instanceof URLSearchParams ? query : new URLSearchParams(
    Object.entries(query ?? {}).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
  const s = q.toString();
  return basePath() + path.replace(/^\//, '') + (s ? '?' + s : '');
}

/** navigate goes to a route path; replace keeps the history entry. */
export function navigate(path: string, opts: { replace?: boolean; query?: Record<string, string | undefined> | URLSearchParams } = {}) {
  const url = href(path, opts.query);
  if (url === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  listeners.forEach((f) => f());
}

/** setQuery changes query parameters of the current route (undefined removes one). */
export function setQuery(changes: Record<string, string | undefined>, opts: { push?: boolean } = {}) {
  const r = current();
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === '') r.query.delete(k);
    else r.query.set(k, v);
  }
  navigate(r.path, { replace: !opts.push, query: r.query });
}

/** useRoute re-renders on every navigation. */
export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const f = () => setRoute(current());
    listeners.add(f);
    return () => { listeners.delete(f); };
  }, []);
  return route;
}

/** match tests a route path against a pattern like "/workflows/:ns/:name". */
export function match(pattern: string, path: string): Record<string, string> | null {
  const ps = pattern.split('/').filter(Boolean);
  const xs = path.split('/').filter(Boolean);
  if (ps.length !== xs.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < ps.length; i++) {
    if (ps[i].startsWith(':')) out[ps[i].slice(1)] = decodeURIComponent(xs[i]);
    else if (ps[i] !== xs[i]) return null;
  }
  return out;
}

/** onLinkClick makes an <a href> a client-side navigation (keeping ctrl-click etc.). */
export function onLinkClick(e: MouseEvent) {
  const a = (e.target as Element).closest('a');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  if (a.target || a.hasAttribute('download') || a.origin !== location.origin) return;
  const base = basePath();
  if (!a.pathname.startsWith(base) || a.dataset.native !== undefined) return;
  if (serverOwned(a.pathname.slice(base.length))) return;
  e.preventDefault();
  navigate('/' + a.pathname.slice(base.length), { query: new URLSearchParams(a.search) });
}

/** serverOwned says whether a path under the base is the server's, not a page. */
export function serverOwned(rel: string): boolean {
  return /^(api|artifacts|input-artifacts|artifacts-by-uid|input-artifacts-by-uid|artifact-files|step-logs|oauth2|healthz|readyz)(\/|$)/.test(rel);
}
