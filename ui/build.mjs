// Builds the UI into ../internal/ui/dist, which the braid binary embeds.
// The output depends only on the sources and the locked packages (no
// time, no absolute paths, no source maps), so that `make verify-ui` can
// rebuild it and compare with what is committed.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const out = new URL('../internal/ui/dist/', import.meta.url).pathname;

const common = {
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  legalComments: 'none',
  charset: 'utf8',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  logLevel: 'warning',
  write: false,
};

const files = {};
async function one(entry, name, extra = {}) {
  const r = await build({ ...common, entryPoints: [entry], ...extra });
  for (const f of r.outputFiles) files[name] = f.contents;
}
await one('src/main.tsx', 'app.js');
await one('src/graph/layout.worker.ts', 'layout-worker.js');
await one('src/style.css', 'app.css', { format: undefined, loader: { '.css': 'css' } });

// Only a build that succeeded replaces the files (a failed one throws
// above and leaves the last good build in place).
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const hash = (b) => createHash('sha256').update(b).digest('hex').slice(0, 12);
const version = hash(Buffer.concat(Object.keys(files).sort().map((k) => Buffer.from(files[k]))));
for (const [name, data] of Object.entries(files)) writeFileSync(out + name, data);
// index.html names each asset with a version, so a browser never mixes
// the files of two builds; the server sets <base href> (--base-href).
let html = readFileSync('src/index.html', 'utf8');
for (const name of Object.keys(files)) html = html.replaceAll(`"${name}"`, `"${name}?v=${hash(files[name])}"`);
html = html.replaceAll('__BUILD__', version);
writeFileSync(out + 'index.html', html);
writeFileSync(out + 'favicon.svg', readFileSync('src/favicon.svg'));
