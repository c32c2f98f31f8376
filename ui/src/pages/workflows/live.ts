// Live updates of the page from the watch stream.
import { useEffect, useRef, useState } from 'preact/hooks';
import { stream } from '../../lib/api';
import type { WatchEvent, Workflow } from '../../lib/types';
import { matches, rowKey, type Filters } from './query';

export type LiveState = 'off' | 'connecting' | 'live' | 'reconnecting';

const rv = (wf: Workflow) => Number(wf.metadata.resourceVersion ?? 0) || 0;

/**
 * applyEvent is rows after one watch event: a known row is updated in
 * place (unless the event is older than it) or dropped; a new one goes on
 * top, on the first page only, if it passes the filters the watch cannot
 * apply.
 */
export function applyEvent(rows: Workflow[], ev: WatchEvent<Workflow>, f: Filters, firstPage: boolean): Workflow[] {
  const wf = ev.object;
  if (!wf?.metadata) return rows;
  const k = rowKey(wf);
  const i = rows.findIndex((r) => rowKey(r) === k);
  if (ev.type === 'DELETED') return i < 0 ? rows : rows.filter((_, j) => j !== i);
  if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') return rows;
  if (i >= 0) {
    if (rv(wf) && rv(wf) < rv(rows[i])) return rows;
    if (!matches(f, wf)) return rows.filter((_, j) => j !== i); // it left the filters (e.g. finishedBefore)
    const out = rows.slice();
    out[i] = wf;
    return out;
  }
  // A workflow that starts to match the selectors comes as MODIFIED when
  // the watch did not start at "0" (braid): an unfinished one belongs on
  // top (unfinished first, newest first), a finished one somewhere below.
  const onTop = ev.type === 'ADDED' || !wf.status?.finishedAt;
  if (onTop && firstPage && matches(f, wf)) return [wf, ...rows];
  return rows;
}

/**
 * useWatch opens the watch while enabled (it is opened with the page's
 * request, so that nothing between the two is missed) and hands each
 * event to onEvent. Events that come before ready (the page is loaded)
 * wait, then go in order.
 */
export function useWatch(path: string | null, ready: boolean, onEvent: (ev: WatchEvent<Workflow>) => void): LiveState {
  const [state, setState] = useState<LiveState>('off');
  const queue = useRef<WatchEvent<Workflow>[]>([]);
  const readyRef = useRef(ready);
  const handler = useRef(onEvent);
  handler.current = onEvent;
  readyRef.current = ready;
  useEffect(() => {
    queue.current = [];
    if (!path) { setState('off'); return; }
    setState('connecting');
    return stream<WatchEvent<Workflow>>(path, (ev) => {
      if (readyRef.current) handler.current(ev);
      else queue.current.push(ev);
    }, (err) => setState(err ? 'reconnecting' : 'live'));
  }, [path]);
  useEffect(() => {
    if (!ready || !queue.current.length) return;
    const q = queue.current;
    queue.current = [];
    q.forEach((ev) => handler.current(ev));
  }, [ready]);
  return state;
}
