// Previews of an artifact (or a file in it): text, JSON, images, HTML
// (in a sandboxed frame, scripts never run), and the entries of a tar or
// .tgz archive, read in the browser. What is read is capped: 256 KiB of a
// file, 64 MiB of an archive.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError } from '../lib/api';
import { ErrorBox } from '../lib/ui';
import { readArchive, type ArchiveRead, type TarEntry } from './artifacts-tar';

export const TEXT_CAP = 256 << 10;
export const ARCHIVE_CAP = 64 << 20;

const IMAGE = /^(png|jpe?g|gif|webp|svg|bmp|ico|avif)$/;
const TEXT = /^(txt|log|md|csv|tsv|ya?ml|xml|sh|py|go|js|ts|ini|toml|cfg|conf|env|out|err|sql|properties)$/;

export const fmtSize = (n: number) =>
  n < 1024 ? `${n} B` : n < 1 << 20 ? `${(n / 1024).toFixed(1)} KiB` : n < 1 << 30 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${(n / (1 << 30)).toFixed(2)} GiB`;

/** extOf is a name's extension, lower case ("tar.gz" counts as "tgz"). */
export function extOf(name?: string): string {
  if (!name) return '';
  const base = name.slice(name.lastIndexOf('/') + 1).toLowerCase();
  if (base.endsWith('.tar.gz')) return 'tgz';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1) : '';
}

type Shown =
  | { kind: 'text' | 'json' | 'html'; text: string; truncated: boolean }
  | { kind: 'image'; src: string }
  | { kind: 'archive'; read: ArchiveRead; done: boolean }
  | { kind: 'binary'; size?: number };

const isGzip = (ct: string, ext: string) => /gzip|compressed-tar/.test(ct) || ext === 'tgz' || ext === 'gz';
const isTar = (ct: string, ext: string) => /x-tar\b/.test(ct) || ext === 'tar';

/** classify decides how to show the first bytes of something. */
function classify(bytes: Uint8Array, truncated: boolean, ct: string, ext: string): Shown {
  const head = bytes.subarray(0, 8192);
  const textual = /^text\/|json|xml|yaml|javascript/.test(ct) || TEXT.test(ext) || ext === 'json' || ext === 'html' || ext === 'htm';
  if (!textual && head.includes(0)) return { kind: 'binary' };
  const text = new TextDecoder().decode(bytes);
  if (!textual && (text.slice(0, 8192).match(/\uFFFD/g)?.length ?? 0) > 8) return { kind: 'binary' };
  if (/json/.test(ct) || ext === 'json') {
    if (!truncated) {
      try { return { kind: 'json', text: JSON.stringify(JSON.parse(text), null, 2), truncated }; } catch { /* shown as text */ }
    }
    return { kind: 'text', text, truncated };
  }
  if (/text\/html/.test(ct) || ext === 'html' || ext === 'htm') return { kind: 'html', text, truncated };
  return { kind: 'text', text, truncated };
}

/** sniff tells an archive or an image from its first bytes. */
function sniff(b: Uint8Array): 'gzip' | 'tar' | 'image' | null {
  if (b[0] === 0x1f && b[1] === 0x8b) return 'gzip';
  if (b.length >= 262 && String.fromCharCode(...b.subarray(257, 262)) === 'ustar') return 'tar';
  if ((b[0] === 0x89 && b[1] === 0x50) || (b[0] === 0xff && b[1] === 0xd8) || (b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46)) return 'image';
  return null;
}

/** readUpTo reads at most cap bytes of a stream and cancels the rest. */
async function readUpTo(reader: ReadableStreamDefaultReader<Uint8Array>, cap: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const parts: Uint8Array[] = [];
  let n = 0;
  let truncated = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parts.push(value);
    n += value.length;
    if (n > cap) { truncated = true; break; }
  }
  if (truncated) await reader.cancel().catch(() => {});
  const out = new Uint8Array(Math.min(n, cap));
  let at = 0;
  for (const p of parts) {
    const take = Math.min(p.length, out.length - at);
    out.set(p.subarray(0, take), at);
    at += take;
    if (at === out.length) break;
  }
  return { bytes: out, truncated };
}

/** prepend makes a stream of first and then what reader has left. */
function prepend(first: Uint8Array, reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      if (!sent) { sent = true; if (first.length) { c.enqueue(first); return; } }
      const { value, done } = await reader.read();
      if (done) c.close(); else c.enqueue(value);
    },
    cancel() { return reader.cancel(); },
  });
}

async function fail(r: Response): Promise<ApiError> {
  const t = (await r.text().catch(() => '')).trim();
  let msg = t || r.statusText || `HTTP ${r.status}`;
  try { msg = JSON.parse(t).message ?? msg; } catch { /* a plain-text error, as the artifact routes send */ }
  return new ApiError(r.status, msg);
}

/**
 * load fetches url and works out what it is: by Content-Type, by the name's
 * extension (the Content-Disposition filename, else the hint: a key like
 * ".../json" has none, while the artifact's path may), then by its bytes.
 */
async function load(url: string, hint: string, keep: boolean, signal: AbortSignal, onArchive: (s: Shown) => void): Promise<Shown> {
  const r = await fetch(url, { credentials: 'same-origin', signal });
  if (!r.ok || !r.body) throw await fail(r);
  const ct = (r.headers.get('Content-Type') ?? '').toLowerCase();
  const disp = /filename="?([^";]+)"?/.exec(r.headers.get('Content-Disposition') ?? '')?.[1];
  const ext = extOf(disp) || extOf(hint);
  const size = Number(r.headers.get('Content-Length') ?? NaN);
  const reader = r.body.getReader();
  if (ct.startsWith('image/') || IMAGE.test(ext)) {
    await reader.cancel().catch(() => {});
    return { kind: 'image', src: url };
  }
  const first = await reader.read();
  const head = first.value ?? new Uint8Array(0);
  const sniffed = sniff(head);
  const gz = isGzip(ct, ext) || sniffed === 'gzip';
  if (gz || isTar(ct, ext) || sniffed === 'tar') {
    const read = await readArchive(prepend(head, reader), gz, ARCHIVE_CAP, keep ? TEXT_CAP : 0, (p) => onArchive({ kind: 'archive', read: p, done: false }));
    if (gz && read.error === 'not a tar archive') return gunzipped(url, signal, ct, ext);
    return { kind: 'archive', read, done: true };
  }
  if (sniffed === 'image') {
    await reader.cancel().catch(() => {});
    return { kind: 'image', src: url };
  }
  const rest = first.done ? { bytes: new Uint8Array(0), truncated: false } : await readUpTo(reader, TEXT_CAP - head.length);
  const bytes = new Uint8Array(Math.min(TEXT_CAP, head.length + rest.bytes.length));
  bytes.set(head.subarray(0, bytes.length));
  if (bytes.length > head.length) bytes.set(rest.bytes.subarray(0, bytes.length - head.length), head.length);
  const truncated = rest.truncated || head.length > TEXT_CAP;
  const shown = classify(bytes, truncated, ct, ext);
  return shown.kind === 'binary' ? { kind: 'binary', size: Number.isFinite(size) ? size : undefined } : shown;
}

/** gunzipped shows a .gz that holds no tar: the start of what it holds. */
async function gunzipped(url: string, signal: AbortSignal, ct: string, ext: string): Promise<Shown> {
  const r = await fetch(url, { credentials: 'same-origin', signal });
  if (!r.ok || !r.body) throw await fail(r);
  const s = r.body.pipeThrough(new DecompressionStream('gzip') as unknown as ReadableWritablePair<Uint8Array, Uint8Array>);
  const { bytes, truncated } = await readUpTo(s.getReader(), TEXT_CAP);
  return classify(bytes, truncated, ct.includes('gzip') ? '' : ct, ext === 'gz' ? '' : ext);
}

/**
 * Preview fetches url and shows what it holds. browse, for a directory
 * saved without an archive (braid serves it as a tar), makes the URL of a
 * file in it: its files are then fetched one by one, not kept from the tar.
 */
export function Preview(p: { url: string; name: string; hint?: string; browse?: (path: string) => string }) {
  const [shown, setShown] = useState<Shown | null>(null);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    const ac = new AbortController();
    setShown(null);
    setError(null);
    load(p.url, p.hint ?? p.name, !p.browse, ac.signal, (s) => { if (!ac.signal.aborted) setShown(s); }).then(
      (s) => { if (!ac.signal.aborted) setShown(s); },
      (e) => { if (!ac.signal.aborted) setError(e); },
    );
    return () => ac.abort();
  }, [p.url]);
  if (error) return <ErrorBox error={error} />;
  if (!shown) return <div class="loading" aria-busy="true">Loading the preview…</div>;
  if (shown.kind === 'archive') return <ArchiveView read={shown.read} done={shown.done} name={p.name} browse={p.browse} />;
  return <Shown shown={shown} name={p.name} />;
}

function Shown({ shown, name }: { shown: Shown; name: string }) {
  const [broken, setBroken] = useState(false);
  switch (shown.kind) {
    case 'image':
      return broken ? <p class="hint">This image cannot be shown: download it.</p>
        : <img class="art-img" src={shown.src} alt={`Preview of ${name}`} onError={() => setBroken(true)} />;
    case 'binary':
      return <p class="hint">Binary content{shown.size !== undefined ? ` (${fmtSize(shown.size)})` : ''}: download it to see it.</p>;
    case 'archive':
      return null;
    case 'html':
      return (
        <div>
          <Truncated on={shown.truncated} />
          {/* sandbox="" and no allow-scripts: the artifact's scripts never run, and it gets no origin */}
          <iframe class="art-frame" sandbox="" srcdoc={shown.text} title={`Preview of ${name}`} />
        </div>
      );
    default:
      return (
        <div>
          <Truncated on={shown.truncated} />
          <pre class="art-pre" tabIndex={0} aria-label={`Content of ${name}`}>{shown.text}</pre>
        </div>
      );
  }
}

const Truncated = ({ on }: { on: boolean }) => on ? <p class="hint">Only the first {fmtSize(TEXT_CAP)} are shown: download it for all of it.</p> : null;

const byName = new Intl.Collator(undefined, { numeric: true });
/** The most rows a folder lists: an archive can hold a million files. */
const MAX_ROWS = 2000;

interface Dir { name: string; path: string; size: number; type: TarEntry['type'] | 'dir'; entry?: TarEntry }

/** children lists what is directly in dir (dirs implied by deeper paths too). */
function children(entries: TarEntry[], dir: string): Dir[] {
  const out = new Map<string, Dir>();
  for (const e of entries) {
    const path = e.path.replace(/\/+$/, '');
    if (!path.startsWith(dir) || path.length === dir.length) continue;
    const rest = path.slice(dir.length);
    const slash = rest.indexOf('/');
    if (slash >= 0 || e.type === 'dir') {
      const name = slash >= 0 ? rest.slice(0, slash) : rest;
      const d = out.get(name) ?? { name, path: dir + name + '/', size: 0, type: 'dir' as const };
      d.size += e.size;
      out.set(name, d);
    } else {
      out.set(rest, { name: rest, path, size: e.size, type: e.type, entry: e });
    }
  }
  return [...out.values()].sort((a, b) => (a.type === 'dir' ? 0 : 1) - (b.type === 'dir' ? 0 : 1) || byName.compare(a.name, b.name));
}

/** ArchiveView lists an archive's entries by directory, and previews a chosen file. */
function ArchiveView({ read, done, name, browse }: { read: ArchiveRead; done: boolean; name: string; browse?: (path: string) => string }) {
  // Start inside the one top directory that braid's and most archives have.
  const top = useMemo(() => {
    const firsts = new Set(read.entries.map((e) => e.path.split('/')[0]));
    return firsts.size === 1 && read.entries.some((e) => e.path.includes('/')) ? [...firsts][0] + '/' : '';
  }, [done]);
  const [dir, setDir] = useState<string | null>(null);
  const [file, setFile] = useState<Dir | null>(null);
  const cwd = dir ?? top;
  const list = children(read.entries, cwd);
  const up = cwd ? cwd.slice(0, cwd.slice(0, -1).lastIndexOf('/') + 1) : null;
  const files = read.entries.filter((e) => e.type === 'file');
  // braid's tar of a directory artifact holds <artifact>/...: the file's path in the artifact leaves that out.
  const inArtifact = (path: string) => path.slice(path.indexOf('/') + 1);
  return (
    <div class="art-archive">
      <p class="art-sum" role="status">
        {done ? '' : 'Reading… '}{files.length} files, {fmtSize(files.reduce((n, e) => n + e.size, 0))}
        {read.capped && <span class="art-warn"> · only the first {fmtSize(ARCHIVE_CAP)} were read: the listing is incomplete (download it for all)</span>}
      </p>
      {read.error && <div class="error" role="alert">{read.error}</div>}
      <nav class="art-crumbs" aria-label={`Folders of ${name}`}>
        <button type="button" class="art-link" aria-label={`${name}: the archive's top`} onClick={() => { setDir(''); setFile(null); }}>/</button>
        {cwd.split('/').filter(Boolean).map((part, i, all) => (
          <span key={i}>{i ? ' / ' : ' '}<button type="button" class="art-link" onClick={() => { setDir(all.slice(0, i + 1).join('/') + '/'); setFile(null); }}>{part}</button></span>
        ))}
      </nav>
      <div class="art-entries-wrap">
      <table class="list art-entries">
        <thead><tr><th scope="col">Name</th><th scope="col">Size</th></tr></thead>
        <tbody>
          {up !== null && <tr><td><button type="button" class="art-link" onClick={() => { setDir(up); setFile(null); }}>.. (up)</button></td><td /></tr>}
          {list.slice(0, MAX_ROWS).map((d) => (
            <tr key={d.path} class={file?.path === d.path ? 'art-sel' : undefined}>
              <td>
                {d.type === 'dir'
                  ? <button type="button" class="art-link" onClick={() => { setDir(d.path); setFile(null); }}>{d.name}/</button>
                  : d.type === 'file'
                    ? <button type="button" class="art-link" aria-pressed={file?.path === d.path} onClick={() => setFile(file?.path === d.path ? null : d)}>{d.name}</button>
                    : <span>{d.name}{d.entry?.link ? ` → ${d.entry.link}` : ''}</span>}
              </td>
              <td>{d.type === 'link' ? 'link' : fmtSize(d.size)}</td>
            </tr>
          ))}
          {list.length === 0 && <tr><td colSpan={2} class="hint">Empty.</td></tr>}
          {list.length > MAX_ROWS && <tr><td colSpan={2} class="hint">The first {MAX_ROWS} of {list.length} are listed.</td></tr>}
        </tbody>
      </table>
      </div>
      {file && (
        <div class="art-entry">
          <div class="art-entry-head">{file.path}
            {browse && <a class="button art-small" href={browse(inArtifact(file.path))} download="" data-native>Download</a>}
          </div>
          {browse
            ? <Preview url={browse(inArtifact(file.path))} name={file.name} />
            : <EntryPreview entry={file.entry!} />}
        </div>
      )}
    </div>
  );
}

/** EntryPreview shows a file of an archive from the bytes kept of it. */
function EntryPreview({ entry }: { entry: TarEntry }) {
  const ext = extOf(entry.path);
  const data = entry.data ?? new Uint8Array(0);
  const truncated = entry.size > data.length;
  const image = IMAGE.test(ext) || sniff(data) === 'image';
  const src = useMemo(() => {
    if (!image || truncated) return '';
    const type = ext === 'svg' ? 'image/svg+xml' : `image/${ext === 'jpg' ? 'jpeg' : ext || 'png'}`;
    return URL.createObjectURL(new Blob([data as Uint8Array<ArrayBuffer>], { type }));
  }, [entry]);
  useEffect(() => () => { if (src) URL.revokeObjectURL(src); }, [src]);
  if (image) return src ? <Shown shown={{ kind: 'image', src }} name={entry.path} /> : <p class="hint">The image is over {fmtSize(TEXT_CAP)}: download the archive to see it.</p>;
  const shown = classify(data, truncated, '', ext);
  return <Shown shown={shown.kind === 'binary' ? { kind: 'binary', size: entry.size } : shown} name={entry.path} />;
}
