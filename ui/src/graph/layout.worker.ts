// The layout worker: lays out a graph off the main thread. A request is
// { id, n, w, h, src, dst } (typed arrays, transferred); the answer is
// { id, ...LayoutOutput } with its arrays transferred back.
import { layout } from './layout';

interface Req { id: number; n: number; w: Float32Array; h: Float32Array; src: Int32Array; dst: Int32Array }

self.onmessage = (ev: MessageEvent<Req>) => {
  const { id, ...inp } = ev.data;
  try {
    const out = layout(inp);
    (self as unknown as Worker).postMessage({ id, ...out }, [out.x.buffer, out.y.buffer, out.pOff.buffer, out.pts.buffer]);
  } catch (e) {
    (self as unknown as Worker).postMessage({ id, error: String(e) });
  }
};
