// The main thread's side of the layout worker: one worker for every graph
// on the page, with answers matched to requests by id. Where a worker
// cannot start (an odd browser, a test without one), the layout runs here.
import { layout, type LayoutInput, type LayoutOutput } from './layout';

let worker: Worker | null | undefined;
let seq = 0;
const waiting = new Map<number, { ok: (o: LayoutOutput) => void; fail: (e: Error) => void }>();

function start(): Worker | null {
  if (worker !== undefined) return worker;
  try {
    worker = new Worker(new URL('layout-worker.js', document.baseURI), { type: 'module' });
    worker.onmessage = (ev) => {
      const w = waiting.get(ev.data.id);
      if (!w) return;
      waiting.delete(ev.data.id);
      if (ev.data.error) w.fail(new Error(ev.data.error));
      else w.ok(ev.data as LayoutOutput);
    };
    worker.onerror = (ev) => {
      // A worker that failed to load: lay out here from now on.
      ev.preventDefault?.();
      worker = null;
      for (const [, w] of waiting) w.fail(new Error('layout worker failed'));
      waiting.clear();
    };
  } catch {
    worker = null;
  }
  return worker;
}

/** warm starts the worker ahead of the first layout (its script loads while the graph is built). */
export function warm() {
  start();
}

/** Graphs this small lay out in well under a millisecond: a round trip to the worker would cost more. */
const INLINE = 400;

/** layoutAsync lays out inp in the worker (its arrays are copied, not transferred: the caller keeps them). */
export function layoutAsync(inp: LayoutInput): Promise<LayoutOutput> {
  if (inp.n + inp.src.length <= INLINE) return Promise.resolve(layout(inp));
  const w = start();
  if (!w) return Promise.resolve(layout(inp));
  const id = ++seq;
  return new Promise<LayoutOutput>((ok, fail) => {
    waiting.set(id, { ok, fail });
    w.postMessage({ id, ...inp });
  }).catch(() => layout(inp));
}
