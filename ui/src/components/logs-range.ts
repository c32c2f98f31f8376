// Ranged reads of one step's raw log (GET step-logs/{ns}/{wf}/{pod}, with
// HTTP Range): a log of any size is read 64 KiB at a time around what is
// shown, and only a bounded number of those chunks are kept (LRU).
//
// A chunk is split into pieces: its lines, and lines longer than
// MAX_PIECE bytes cut into several pieces. The first piece of a chunk that
// starts inside a line (the byte before it is not a newline) is marked a
// continuation, as are the later pieces of a long line, so a line that
// spans chunks is shown whole, in pieces, and a 1 GB line costs no more
// than any other 1 GB log. A position in the log is a (chunk, piece).
import { ApiError } from '../lib/api';

export const CHUNK = 64 << 10;
/** The longest piece, so that a wrapped piece still fits in the view. */
export const MAX_PIECE = 2048;
const MAX_CHUNKS = 48;

/** A position in the log: piece i of chunk k. */
export interface Pos { k: number; i: number }

export interface Chunk {
  k: number;
  bytes: Uint8Array;
  /** the pieces' starts in bytes, bit 31 set on a continuation */
  starts: Uint32Array;
  /** the pieces' ends (exclusive, the newline left out) */
  ends: Uint32Array;
}

const CONT = 0x8000_0000;

/** NotRanged says the server has no ranged step-log route (use the stream). */
export class NotRanged extends Error {}

/** splitChunk cuts a chunk's bytes into pieces; prevNewline says the byte before it ends a line. */
export function splitChunk(k: number, bytes: Uint8Array, prevNewline: boolean): Chunk {
  const starts: number[] = [];
  const ends: number[] = [];
  const emit = (s: number, e: number, cont: boolean) => {
    while (e - s > MAX_PIECE) {
      let cut = s + MAX_PIECE;
      // Cut before a UTF-8 character, not inside it.
      for (let j = 0; j < 3 && (bytes[cut] & 0xc0) === 0x80; j++) cut--;
      starts.push(cont ? (s | CONT) >>> 0 : s);
      ends.push(cut);
      s = cut;
      cont = true;
    }
    starts.push(cont ? (s | CONT) >>> 0 : s);
    ends.push(e);
  };
  let s = 0;
  let cont = !prevNewline;
  for (let j = bytes.indexOf(10); j >= 0; j = bytes.indexOf(10, j + 1)) {
    emit(s, j, cont);
    s = j + 1;
    cont = false;
  }
  if (s < bytes.length) emit(s, bytes.length, cont);
  // A chunk that starts on the newline ending the chunk before's last
  // line would begin with an empty continuation: leave it out.
  if (starts.length > 1 && starts[0] === (0 | CONT) >>> 0 && ends[0] === 0) { starts.shift(); ends.shift(); }
  return { k, bytes, starts: Uint32Array.from(starts), ends: Uint32Array.from(ends) };
}

const decoder = new TextDecoder();

export class RangedLog {
  size = 0;
  /** average bytes a line in the chunks read, for the scroll height and "≈" line numbers */
  bytesPerLine = 80;
  error: Error | null = null;
  private cache = new Map<number, Chunk>();
  private seen = { bytes: 0, lines: 0 };
  private inflight = new Map<number, Promise<void>>();
  private ac = new AbortController();
  /** onChange is called when a chunk arrives or fails. */
  onChange: () => void = () => {};

  constructor(readonly url: string) {}

  /**
   * open reads the first chunk, which gives the size (Content-Range) too.
   * It throws NotRanged when the server has no such route.
   */
  async open(): Promise<void> {
    const r = await fetch(this.url, { credentials: 'same-origin', signal: this.ac.signal, headers: { Range: `bytes=0-${CHUNK - 1}` } });
    if (r.status === 416) { // an empty log: "bytes */0"
      this.size = Number(/\/(\d+)/.exec(r.headers.get('Content-Range') ?? '')?.[1] ?? 0);
      await r.body?.cancel();
      return;
    }
    if (!r.ok) throw await rangeError(r);
    if (r.status === 200) {
      // No range was applied: only an empty answer (another container's
      // log) is usable; anything else means no ranges here.
      const len = Number(r.headers.get('Content-Length') ?? -1);
      await r.body?.cancel();
      if (len === 0) { this.size = 0; return; }
      throw new NotRanged('the server answered without a range');
    }
    this.size = total(r);
    const bytes = new Uint8Array(await r.arrayBuffer());
    this.put(splitChunk(0, bytes, true));
  }

  close() { this.ac.abort(); }

  get chunks() { return Math.ceil(this.size / CHUNK); }

  /** chunk returns chunk k if it is kept (and marks it used), else asks for it and returns undefined. */
  chunk(k: number): Chunk | undefined {
    const c = this.cache.get(k);
    if (c) {
      this.cache.delete(k);
      this.cache.set(k, c);
      return c;
    }
    if (k >= 0 && k < this.chunks) this.load(k);
    return undefined;
  }

  /** load reads chunk k with the byte before it (to know whether it starts a line). */
  load(k: number): Promise<void> {
    if (this.cache.has(k)) return Promise.resolve();
    let p = this.inflight.get(k);
    if (p) return p;
    const from = k * CHUNK;
    const to = Math.min(this.size, from + CHUNK) - 1;
    const first = Math.max(0, from - 1);
    p = (async () => {
      const r = await fetch(this.url, { credentials: 'same-origin', signal: this.ac.signal, headers: { Range: `bytes=${first}-${to}` } });
      if (r.status !== 206) throw await rangeError(r);
      const b = new Uint8Array(await r.arrayBuffer());
      const lead = from - first;
      this.put(splitChunk(k, b.subarray(lead), k === 0 || b[0] === 10));
    })().then(
      () => { this.inflight.delete(k); this.onChange(); },
      (e) => {
        this.inflight.delete(k);
        if (this.ac.signal.aborted) return;
        this.error = e;
        this.onChange();
      },
    );
    this.inflight.set(k, p);
    return p;
  }

  private put(c: Chunk) {
    // Every chunk read refines the bytes a line, for the scroll height and
    // the "≈" line numbers (the scrollbar maps bytes, so nothing jumps).
    let lines = 0;
    for (let i = 0; i < c.starts.length; i++) if (!(c.starts[i] & CONT)) lines++;
    this.seen.bytes += c.bytes.length;
    this.seen.lines += lines;
    if (this.seen.lines) this.bytesPerLine = Math.max(1, this.seen.bytes / this.seen.lines);
    this.cache.set(c.k, c);
    while (this.cache.size > MAX_CHUNKS) this.cache.delete(this.cache.keys().next().value!);
  }

  /** offset is the byte offset of a position. */
  offset(p: Pos): number {
    const c = this.cache.get(p.k);
    return p.k * CHUNK + (c ? c.starts[p.i] & ~CONT : 0);
  }

  text(c: Chunk, i: number): string {
    return decoder.decode(c.bytes.subarray(c.starts[i] & ~CONT, c.ends[i]));
  }

  isCont(c: Chunk, i: number): boolean {
    return (c.starts[i] & CONT) !== 0;
  }

  /** next is the position after p, null at the end, undefined while the next chunk loads. */
  next(p: Pos): Pos | null | undefined {
    const c = this.chunk(p.k);
    if (!c) return undefined;
    if (p.i + 1 < c.starts.length) return { k: p.k, i: p.i + 1 };
    if (p.k + 1 >= this.chunks) return null;
    const n = this.chunk(p.k + 1);
    if (!n) return undefined;
    return n.starts.length ? { k: p.k + 1, i: 0 } : null;
  }

  /** prev is the position before p, null at the start, undefined while the chunk before loads. */
  prev(p: Pos): Pos | null | undefined {
    if (p.i > 0) return { k: p.k, i: p.i - 1 };
    if (p.k === 0) return null;
    const c = this.chunk(p.k - 1);
    if (!c) return undefined;
    return { k: p.k - 1, i: c.starts.length - 1 };
  }

  /** move goes n pieces forward (or back), as far as the kept chunks allow. */
  move(p: Pos, n: number): Pos {
    for (; n > 0; n--) {
      const q = this.next(p);
      if (!q) break;
      p = q;
    }
    for (; n < 0; n++) {
      const q = this.prev(p);
      if (!q) break;
      p = q;
    }
    return p;
  }

  /** at is the piece holding byte off, undefined while its chunk loads. */
  at(off: number): Pos | undefined {
    off = Math.max(0, Math.min(off, this.size - 1));
    const k = Math.floor(off / CHUNK);
    const c = this.chunk(k);
    if (!c) return undefined;
    const rel = off - k * CHUNK;
    let lo = 0;
    let hi = c.starts.length - 1;
    while (lo < hi) { // the last piece that starts at or before rel
      const mid = (lo + hi + 1) >> 1;
      if ((c.starts[mid] & ~CONT) <= rel) lo = mid; else hi = mid - 1;
    }
    return { k, i: lo };
  }

  /** last is the last piece, undefined while the last chunk loads. */
  last(): Pos | undefined {
    const k = this.chunks - 1;
    const c = this.chunk(k);
    if (!c) return undefined;
    return { k, i: c.starts.length - 1 };
  }

  /** keptBytes is what the cache holds, for the status line. */
  keptBytes(): number {
    let n = 0;
    for (const c of this.cache.values()) n += c.bytes.length + c.starts.length * 8;
    return n;
  }
}

function total(r: Response): number {
  const m = /bytes\s+\d+-\d+\/(\d+)/.exec(r.headers.get('Content-Range') ?? '');
  if (!m) throw new NotRanged('the answer has no Content-Range');
  return Number(m[1]);
}

/** rangeError turns a failed answer into NotRanged (no route: 404 without the API's JSON, or 501) or an ApiError. */
async function rangeError(r: Response): Promise<Error> {
  const text = await r.text().catch(() => '');
  let msg = r.statusText || `HTTP ${r.status}`;
  let api = false;
  try {
    const j = JSON.parse(text);
    if (typeof j?.message === 'string') { msg = j.message; api = true; }
  } catch { if (text.trim()) msg = text.trim(); }
  if (r.status === 501 || (r.status === 404 && !api)) return new NotRanged(msg);
  return new ApiError(r.status, msg);
}
