// The log line stream of the API (GET api/v1/workflows/{ns}/{name}/log),
// read with fetch rather than lib/api's stream(): a log stream ends when
// every line is sent, and EventSource would reconnect and send it all
// again; fetch also gives the status and message of a refused request
// (a bad grep is a 400 with the regexp's error).
import { ApiError, get } from '../lib/api';

/** One message of the log stream. */
export interface LogEntry {
  content?: string;
  podName?: string;
}

/**
 * readLogStream reads the SSE log stream at path. Entries arrive in
 * batches (at most every flushMs), so that a fast log costs one render a
 * batch, not one a line. onEnd is called once: with null when the server
 * ended the stream, with the error otherwise. The returned function stops
 * reading (onEnd is not called then).
 */
export function readLogStream(path: string, onBatch: (entries: LogEntry[]) => void,
  onEnd: (err: Error | null) => void, flushMs = 80): () => void {
  const ac = new AbortController();
  let pending: LogEntry[] = [];
  let timer: number | undefined;
  const flush = () => {
    timer = undefined;
    if (ac.signal.aborted || pending.length === 0) return;
    const b = pending;
    pending = [];
    onBatch(b);
  };
  const finish = (err: Error | null) => {
    if (ac.signal.aborted) return;
    if (timer !== undefined) clearTimeout(timer);
    flush();
    onEnd(err);
  };
  (async () => {
    const r = await fetch(path, { credentials: 'same-origin', signal: ac.signal, headers: { Accept: 'text/event-stream' } });
    if (!r.ok) throw await statusError(r);
    if (!r.body) throw new ApiError(0, 'the log stream has no body');
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let at = 0;
      let nl: number;
      while ((nl = buf.indexOf('\n', at)) >= 0) {
        const err = parseLine(buf.slice(at, nl), pending);
        if (err) throw err;
        at = nl + 1;
      }
      buf = buf.slice(at);
      if (timer === undefined && pending.length) timer = window.setTimeout(flush, flushMs);
    }
    if (buf) parseLine(buf, pending);
  })().then(() => finish(null), (e) => finish(e instanceof Error ? e : new Error(String(e))));
  return () => {
    ac.abort();
    if (timer !== undefined) clearTimeout(timer);
  };
}

/** parseLine adds the entry of one SSE line to out, or returns its error. */
function parseLine(line: string, out: LogEntry[]): ApiError | null {
  if (!line.startsWith('data:')) return null; // blank lines and ":" keep-alives
  let m: any;
  try { m = JSON.parse(line.slice(5)); } catch { return null; }
  if (m?.error) return new ApiError(m.error.http_code ?? 0, m.error.message ?? 'log stream error', m.error.grpc_code);
  const e = m && 'result' in m ? m.result : m;
  if (e) out.push(e as LogEntry);
  return null;
}

async function statusError(r: Response): Promise<ApiError> {
  let msg = r.statusText || `HTTP ${r.status}`;
  try {
    const t = await r.text();
    try { msg = JSON.parse(t).message ?? msg; } catch { if (t.trim()) msg = t.trim(); }
  } catch { /* keep the status text */ }
  // lib/api shows the login page on a 401 of its own calls: make one.
  if (r.status === 401) get('api/v1/userinfo').catch(() => {});
  return new ApiError(r.status, msg);
}

/**
 * LineStore keeps the last lines of a stream within a line cap and a
 * character cap (a line can be 256 KiB), dropping the oldest: a ring, so
 * that dropping costs nothing per line.
 */
export class LineStore {
  private text: string[];
  private pod: Int32Array;
  private start = 0;
  count = 0;
  chars = 0;
  dropped = 0;
  /** bumped on every change, for renders and caches */
  version = 0;
  constructor(readonly maxLines = 100_000, readonly maxChars = 32 << 20) {
    this.text = new Array(maxLines);
    this.pod = new Int32Array(maxLines);
  }
  push(text: string, pod: number) {
    if (this.count === this.maxLines) this.dropOne();
    const i = (this.start + this.count) % this.maxLines;
    this.text[i] = text;
    this.pod[i] = pod;
    this.count++;
    this.chars += text.length;
    while (this.chars > this.maxChars && this.count > 1) this.dropOne();
    this.version++;
  }
  private dropOne() {
    this.chars -= this.text[this.start].length;
    this.text[this.start] = '';
    this.start = (this.start + 1) % this.maxLines;
    this.count--;
    this.dropped++;
  }
  line(i: number): string {
    return this.text[(this.start + i) % this.maxLines];
  }
  podOf(i: number): number {
    return this.pod[(this.start + i) % this.maxLines];
  }
  clear() {
    this.text = new Array(this.maxLines);
    this.start = this.count = this.chars = this.dropped = 0;
    this.version++;
  }
}
