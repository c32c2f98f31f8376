// Phase counts for the filters other than the phases.
//
// One request per phase: the current filters plus the label
// workflows.argoproj.io/phase=<P>, listOptions.limit=1, the field selector
// ext.showRemainingItemCount=true and fields=metadata,items.metadata.name,
// so that each answer is one name and the list's metadata; the count is
// items.length + metadata.remainingItemCount, which the server counts
// without reading the workflows (live and archived lists alike). A server
// that gives no remainingItemCount (the page of the list says so) is
// counted by reading the phases of up to SCAN_LIMIT workflows in one
// request instead, and a count past that is a lower bound ("5000+").
import { useEffect, useRef, useState } from 'preact/hooks';
import { get } from '../../lib/api';
import type { List, Workflow } from '../../lib/types';
import { LABEL_PHASE, PHASES, listPath, type Filters } from './query';

const SCAN_LIMIT = 10_000;
const COUNT_FIELDS = 'metadata,items.metadata.name';

export interface Counts {
  byPhase: Record<string, number>;
  atLeast: boolean; // the counts are lower bounds
}

type PhaseList = List<Pick<Workflow, 'status'>>;

/** phasePath is the request that counts one phase: limit 1, the phase as a label, names only. */
function phasePath(f: Filters, phase: string): string {
  const labels = [f.labels.trim().replace(/,\s*$/, ''), `${LABEL_PHASE}=${phase}`].filter(Boolean).join(',');
  const path = listPath({ ...f, labels, phases: [] }, { limit: 1, withPhases: false, fields: COUNT_FIELDS });
  // The archive's path has no `fields` of its own (it always has a query: its field selector).
  return f.archived ? `${path}${path.includes('?') ? '&' : '?'}fields=${encodeURIComponent(COUNT_FIELDS)}` : path;
}

async function countByRemaining(f: Filters, signal: AbortSignal): Promise<Counts | null> {
  const one = async (phase: string) => {
    const l = await get<List<Pick<Workflow, 'metadata'>>>(phasePath(f, phase), signal);
    const rest = l.metadata?.remainingItemCount;
    const n = l.items?.length ?? 0;
    // Without a count, the answer is whole only when no page follows.
    if (rest === undefined || rest === null) return n === 0 || !l.metadata?.continue ? n : null;
    return n + Number(rest);
  };
  const ns = await Promise.all(PHASES.map(one));
  if (ns.some((n) => n === null)) return null;
  return { byPhase: Object.fromEntries(PHASES.map((p, i) => [p, ns[i] as number])), atLeast: false };
}

async function countByScan(f: Filters, signal: AbortSignal): Promise<Counts> {
  const l = await get<PhaseList>(listPath({ ...f, phases: [] }, {
    withPhases: false, limit: SCAN_LIMIT, fields: 'metadata.continue,items.status.phase',
  }), signal);
  const byPhase: Record<string, number> = Object.fromEntries(PHASES.map((p) => [p, 0]));
  for (const wf of l.items ?? []) {
    const p = wf.status?.phase || 'Pending';
    byPhase[p] = (byPhase[p] ?? 0) + 1;
  }
  return { byPhase, atLeast: !!l.metadata?.continue };
}

/**
 * usePhaseCounts loads the counts once the page is shown (start), again
 * when the filters (key) change, and after watch events (bump), at most
 * every THROTTLE ms; an answer for older filters is dropped. remaining
 * says whether the server gave remainingItemCount on the page, so that
 * per-phase requests can count.
 */
export function usePhaseCounts(f: Filters, key: string, start: boolean, remaining: boolean, bump: number) {
  // A scan reads up to SCAN_LIMIT workflows: do it less often than per-phase counts.
  const THROTTLE = f.archived || remaining ? 3000 : 10_000;
  const [counts, setCounts] = useState<Counts | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const last = useRef(0);
  const inFlight = useRef(false);
  const again = useRef(false); // a bump came while a request was out
  const ac = useRef<AbortController | null>(null);
  const fetchNow = async () => {
    const mine = ac.current;
    if (!mine) return;
    if (inFlight.current) { again.current = true; return; }
    inFlight.current = true;
    last.current = Date.now();
    try {
      const c = (f.archived || remaining ? await countByRemaining(f, mine.signal) : null) ?? await countByScan(f, mine.signal);
      if (!mine.signal.aborted) { setCounts(c); setError(null); }
    } catch (e) {
      if (!mine.signal.aborted) setError(e as Error);
    } finally {
      inFlight.current = false;
      if (again.current && !mine.signal.aborted) { again.current = false; window.setTimeout(fetchNow, THROTTLE); }
    }
  };
  useEffect(() => {
    setCounts(null);
    if (!start) return;
    const c = new AbortController();
    ac.current = c;
    inFlight.current = again.current = false;
    fetchNow();
    return () => { c.abort(); if (ac.current === c) ac.current = null; };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, start, remaining]);
  useEffect(() => {
    if (!bump || !start) return;
    // Watch events come in bursts: one request per burst, after the throttle.
    const t = window.setTimeout(fetchNow, Math.max(0, last.current + THROTTLE - Date.now()));
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [bump]);
  return { counts, error };
}
