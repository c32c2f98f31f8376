// The UI talks to braid only through the public API: REST under api/v1,
// the SSE streams, and the artifact and step-log routes. Every URL is
// relative to <base href>, and the credential is the authorization cookie
// the server sets at login, so nothing here holds a token.

/** An error answer of the API: its HTTP status and message. */
export class ApiError extends Error {
  constructor(public status: number, message: string, public code?: number) {
    super(message);
  }
}

/** unauthenticated is called on a 401, to show the login page. */
let unauthenticated: () => void = () => {};
export function onUnauthenticated(f: () => void) {
  unauthenticated = f;
}

async function errorOf(r: Response): Promise<ApiError> {
  let msg = r.statusText || `HTTP ${r.status}`;
  let code: number | undefined;
  try {
    const text = await r.text();
    try {
      const j = JSON.parse(text);
      if (j && typeof j.message === 'string') msg = j.message;
      if (j && typeof j.code === 'number') code = j.code;
    } catch {
      if (text.trim()) msg = text.trim();
    }
  } catch {
    /* the body is gone: keep the status text */
  }
  if (r.status === 401) unauthenticated();
  return new ApiError(r.status, msg, code);
}

/** request calls the API (path relative to the base, e.g. "api/v1/info"). */
export async function request<T = unknown>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', signal, headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
  }
  const r = await fetch(path, init);
  if (!r.ok) throw await errorOf(r);
  const text = await r.text();
  return (text ? JSON.parse(text) : {}) as T;
}

export const get = <T = unknown>(path: string, signal?: AbortSignal) => request<T>('GET', path, undefined, signal);
export const post = <T = unknown>(path: string, body: unknown) => request<T>('POST', path, body);
export const put = <T = unknown>(path: string, body: unknown) => request<T>('PUT', path, body);
export const del = <T = unknown>(path: string) => request<T>('DELETE', path);

/** qs builds a query string from the defined values (arrays repeat the key). */
export function qs(params: Record<string, string | number | boolean | string[] | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
    else q.set(k, String(v));
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

/** seg escapes one path segment. */
export const seg = (s: string) => encodeURIComponent(s);

/**
 * stream reads an SSE stream of the API: each `data:` message parsed as
 * JSON is given to onMessage (with the envelope's "result" unwrapped, as
 * the gateway sends {"result":...}). It reconnects after a drop, after
 * backoff, until the returned function is called.
 */
export function stream<T>(path: string, onMessage: (m: T) => void, onError?: (e: ApiError | null) => void): () => void {
  let closed = false;
  let es: EventSource | null = null;
  let retry = 500;
  let timer: number | undefined;
  const open = () => {
    if (closed) return;
    es = new EventSource(path, { withCredentials: true });
    es.onopen = () => { retry = 500; onError?.(null); };
    es.onmessage = (ev) => {
      let m: any;
      try { m = JSON.parse(ev.data); } catch { return; }
      if (m && m.error) {
        onError?.(new ApiError(0, m.error.message ?? 'stream error', m.error.code));
        return;
      }
      onMessage((m && 'result' in m ? m.result : m) as T);
    };
    es.onerror = async () => {
      es?.close();
      if (closed) return;
      // EventSource hides the status: ask once so a 401 shows the login page.
      try {
        const r = await fetch('api/v1/userinfo', { credentials: 'same-origin' });
        if (r.status === 401) { unauthenticated(); return; }
      } catch { /* offline: retry */ }
      onError?.(new ApiError(0, 'the stream was interrupted; reconnecting'));
      timer = window.setTimeout(open, retry);
      retry = Math.min(retry * 2, 10_000);
    };
  };
  open();
  return () => { closed = true; es?.close(); if (timer) clearTimeout(timer); };
}
