// Reading tar archives in the browser, as a stream: the default archive of
// an Argo artifact is a .tgz, and braid serves a directory saved without
// an archive as a plain tar. Headers are ustar/POSIX, with GNU long names
// (L/K) and pax extended headers (x: path, linkpath, size); a number field
// may be GNU base-256. Only headers and the first bytes of each file (for
// a preview) are kept, and reading stops after a cap.

export interface TarEntry {
  path: string;
  size: number;
  type: 'file' | 'dir' | 'link' | 'other';
  link?: string;
  /** the first bytes of a file (up to the reader's keep) */
  data?: Uint8Array;
}

const BLOCK = 512;
const MAX_META = 1 << 20; // a long name or pax header bigger than this is not believed
const dec = new TextDecoder();

function str(b: Uint8Array, off: number, len: number): string {
  const s = b.subarray(off, off + len);
  const end = s.indexOf(0);
  return dec.decode(end >= 0 ? s.subarray(0, end) : s);
}

/** num reads an octal field, or a GNU base-256 one (first bit set). */
function num(b: Uint8Array, off: number, len: number): number {
  if (b[off] & 0x80) {
    let v = b[off] & 0x7f;
    for (let i = 1; i < len; i++) v = v * 256 + b[off + i];
    return v;
  }
  const t = str(b, off, len).trim();
  return t ? parseInt(t, 8) : 0;
}

function checksumOK(h: Uint8Array): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i];
  return sum === num(h, 148, 8);
}

/** paxRecords parses "<len> key=value\n" records. */
function paxRecords(b: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  let p = 0;
  while (p < b.length) {
    const sp = b.indexOf(32, p);
    if (sp < 0) break;
    const len = parseInt(dec.decode(b.subarray(p, sp)), 10);
    if (!(len > 0) || p + len > b.length) break;
    const rec = dec.decode(b.subarray(sp + 1, p + len - 1)); // without the newline
    const eq = rec.indexOf('=');
    if (eq > 0) out[rec.slice(0, eq)] = rec.slice(eq + 1);
    p += len;
  }
  return out;
}

export class TarReader {
  entries: TarEntry[] = [];
  /** the end marker was read */
  ended = false;
  error: string | null = null;
  private hdr = new Uint8Array(BLOCK);
  private hlen = 0;
  private zeros = 0;
  private left = 0; // data bytes of the current entry still to come
  private pad = 0; // then padding to the block
  private meta: { kind: number; buf: Uint8Array; n: number } | null = null;
  private cur: TarEntry | null = null;
  private curKept = 0;
  private curBuf: Uint8Array | null = null;
  private next: { path?: string; link?: string; size?: number } = {};

  /** keep: how many bytes of each file to keep for previews (0: none). */
  constructor(readonly keep: number) {}

  /** push reads more of the archive; false once it ended or failed. */
  push(chunk: Uint8Array): boolean {
    let off = 0;
    while (off < chunk.length && !this.ended && !this.error) {
      if (this.left > 0) {
        const n = Math.min(this.left, chunk.length - off);
        this.data(chunk.subarray(off, off + n));
        this.left -= n;
        off += n;
        if (this.left === 0) this.dataDone();
        continue;
      }
      if (this.pad > 0) {
        const n = Math.min(this.pad, chunk.length - off);
        this.pad -= n;
        off += n;
        continue;
      }
      const n = Math.min(BLOCK - this.hlen, chunk.length - off);
      this.hdr.set(chunk.subarray(off, off + n), this.hlen);
      this.hlen += n;
      off += n;
      if (this.hlen === BLOCK) {
        this.hlen = 0;
        this.header(this.hdr);
      }
    }
    return !this.ended && !this.error;
  }

  private header(h: Uint8Array) {
    if (h.every((x) => x === 0)) {
      if (++this.zeros === 2) this.ended = true;
      return;
    }
    this.zeros = 0;
    if (!checksumOK(h)) {
      this.error = this.entries.length ? 'a damaged tar header: the listing stops here' : 'not a tar archive';
      return;
    }
    const type = h[156];
    let size = num(h, 124, 12);
    const posix = str(h, 257, 6) === 'ustar'; // "ustar\0"; GNU's "ustar  " uses the prefix bytes for other things
    const isGNU = h[262] === 32;
    // GNU long name/link (L, K) and pax headers (x, g) describe the next entry.
    if (type === 76 || type === 75 || type === 120 || type === 103) {
      if (size > MAX_META) { this.error = 'an oversized extended header'; return; }
      this.meta = { kind: type, buf: new Uint8Array(size), n: 0 };
      this.start(size);
      return;
    }
    let path = str(h, 0, 100);
    const prefix = posix && !isGNU ? str(h, 345, 155) : '';
    if (prefix) path = prefix + '/' + path;
    path = this.next.path ?? path;
    if (this.next.size !== undefined) size = this.next.size;
    const link = this.next.link ?? str(h, 157, 100);
    this.next = {};
    const t: TarEntry['type'] = type === 53 || ((type === 48 || type === 0) && path.endsWith('/')) ? 'dir'
      : type === 48 || type === 0 || type === 55 ? 'file' : type === 49 || type === 50 ? 'link' : 'other';
    const e: TarEntry = { path: path.replace(/^\.\//, ''), size: t === 'dir' || t === 'link' ? 0 : size, type: t };
    if (t === 'link') e.link = link;
    this.entries.push(e);
    this.cur = t === 'file' ? e : null;
    this.curKept = 0;
    this.curBuf = this.cur && this.keep > 0 ? new Uint8Array(Math.min(size, this.keep)) : null;
    if (this.curBuf) e.data = this.curBuf.subarray(0, 0);
    // A hard link's header can still carry a size: skip whatever it says.
    this.start(size);
  }

  private start(size: number) {
    this.left = size;
    this.pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (size === 0) this.dataDone();
  }

  private data(b: Uint8Array) {
    if (this.meta) {
      this.meta.buf.set(b, this.meta.n);
      this.meta.n += b.length;
    } else if (this.cur && this.curBuf && this.curKept < this.curBuf.length) {
      const n = Math.min(b.length, this.curBuf.length - this.curKept);
      this.curBuf.set(b.subarray(0, n), this.curKept);
      this.curKept += n;
      this.cur.data = this.curBuf.subarray(0, this.curKept); // what was read, should reading stop here
    }
  }

  private dataDone() {
    const m = this.meta;
    if (!m) return;
    this.meta = null;
    if (m.kind === 76) this.next.path = str(m.buf, 0, m.buf.length);
    else if (m.kind === 75) this.next.link = str(m.buf, 0, m.buf.length);
    else if (m.kind === 120) {
      const r = paxRecords(m.buf);
      if (r.path !== undefined) this.next.path = r.path;
      if (r.linkpath !== undefined) this.next.link = r.linkpath;
      if (r.size !== undefined) this.next.size = Number(r.size);
    }
  }
}

export interface ArchiveRead {
  entries: TarEntry[];
  /** bytes of tar read (after gunzip) */
  read: number;
  /** reading stopped at the cap */
  capped: boolean;
  error: string | null;
}

/**
 * readArchive reads a tar (gunzipped first when gz, with the browser's
 * DecompressionStream) from body, at most cap bytes of tar, calling
 * onProgress as it goes.
 */
export async function readArchive(body: ReadableStream<Uint8Array>, gz: boolean, cap: number, keep: number,
  onProgress?: (r: ArchiveRead) => void): Promise<ArchiveRead> {
  const tar = new TarReader(keep);
  const stream = gz ? body.pipeThrough(new DecompressionStream('gzip') as unknown as ReadableWritablePair<Uint8Array, Uint8Array>) : body;
  const reader = stream.getReader();
  const res: ArchiveRead = { entries: tar.entries, read: 0, capped: false, error: null };
  let last = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      let v = value;
      if (res.read + v.length > cap) {
        v = v.subarray(0, cap - res.read);
        res.capped = true;
      }
      res.read += v.length;
      const more = tar.push(v);
      if (!more || res.capped) {
        await reader.cancel().catch(() => {});
        break;
      }
      if (onProgress && res.read - last > 1 << 20) {
        last = res.read;
        onProgress({ ...res });
      }
    }
  } catch (e) {
    if ((e as Error)?.name === 'AbortError') throw e;
    res.error = gz ? `the gzip stream is damaged: ${(e as Error).message}` : (e as Error).message;
  }
  res.error ??= tar.error;
  if (!res.error && !res.capped && !tar.ended && tar.entries.length === 0) res.error = 'not a tar archive';
  return res;
}
