// Batch actions on the selected rows: each workflow is one request, a few
// at a time; the failures are gathered into one summary.
import { useState } from 'preact/hooks';
import { del, put, qs, seg } from '../../lib/api';
import type { Workflow } from '../../lib/types';
import { completed } from '../../lib/types';
import { confirmAction } from '../../lib/ui';

export type ActionName = 'retry' | 'resubmit' | 'suspend' | 'resume' | 'stop' | 'terminate' | 'delete';

interface ActionDef {
  name: ActionName;
  label: string;
  /** applies says whether the action makes sense for a workflow (as the server would accept it). */
  applies: (wf: Workflow) => boolean;
  confirm?: boolean;
  danger?: boolean;
  archive: boolean; // also offered on archived workflows
}

const running = (wf: Workflow) => !completed(wf.status?.phase);
const failed = (wf: Workflow) => wf.status?.phase === 'Failed' || wf.status?.phase === 'Error';

export const ACTIONS: ActionDef[] = [
  { name: 'retry', label: 'Retry', applies: failed, archive: true },
  { name: 'resubmit', label: 'Resubmit', applies: () => true, archive: true },
  { name: 'suspend', label: 'Suspend', applies: (wf) => running(wf) && !wf.spec?.suspend, archive: false },
  { name: 'resume', label: 'Resume', applies: running, archive: false },
  { name: 'stop', label: 'Stop', applies: running, confirm: true, archive: false },
  { name: 'terminate', label: 'Terminate', applies: running, confirm: true, danger: true, archive: false },
  { name: 'delete', label: 'Delete', applies: () => true, confirm: true, danger: true, archive: true },
];

/** request is the API call of one action on one workflow. */
function request(action: ActionName, wf: Workflow, archived: boolean): Promise<unknown> {
  const { name = '', namespace = '', uid = '' } = wf.metadata;
  if (archived) {
    if (action === 'delete') return del(`api/v1/archived-workflows/${seg(uid)}` + qs({ namespace, name }));
    const body = action === 'resubmit' ? { uid, name, namespace, memoized: false } : { uid, name, namespace };
    return put(`api/v1/archived-workflows/${seg(uid)}/${action}`, body);
  }
  if (action === 'delete') return del(`api/v1/workflows/${seg(namespace)}/${seg(name)}`);
  const body = action === 'resubmit' ? { name, namespace, memoized: false } : { name, namespace };
  return put(`api/v1/workflows/${seg(namespace)}/${seg(name)}/${action}`, body);
}

export interface ActionResult {
  action: string;
  ok: number;
  errors: { name: string; message: string }[];
}

/** runAll runs an action on each workflow, CONCURRENCY at a time. */
async function runAll(action: ActionName, wfs: Workflow[], archived: boolean): Promise<ActionResult> {
  const CONCURRENCY = 4;
  const out: ActionResult = { action, ok: 0, errors: [] };
  let next = 0;
  const worker = async () => {
    while (next < wfs.length) {
      const wf = wfs[next++];
      try {
        await request(action, wf, archived);
        out.ok++;
      } catch (e) {
        out.errors.push({ name: `${wf.metadata.namespace}/${wf.metadata.name}`, message: (e as Error).message });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, wfs.length) }, worker));
  return out;
}

/** BatchActions is the toolbar over the table. */
export function BatchActions({ selected, archived, onDone }: {
  selected: Workflow[]; archived: boolean; onDone: (r: ActionResult) => void;
}) {
  const [busy, setBusy] = useState<ActionName | null>(null);
  const n = selected.length;
  const run = async (a: ActionDef) => {
    const what = `${a.label} ${n} workflow${n === 1 ? '' : 's'}`;
    if (a.confirm && !confirmAction(what)) return;
    setBusy(a.name);
    try {
      onDone({ ...(await runAll(a.name, selected, archived)), action: a.label });
    } finally {
      setBusy(null);
    }
  };
  return (
    <div class="wl-batch" role="toolbar" aria-label="Actions on the selected workflows">
      <span class="wl-batch-count" aria-live="polite">{n ? `${n} selected` : 'Select workflows for actions'}</span>
      {ACTIONS.filter((a) => !archived || a.archive).map((a) => {
        const bad = selected.filter((wf) => !a.applies(wf));
        const disabled = !n || bad.length > 0 || busy !== null;
        const why = !n ? 'Select workflows first'
          : bad.length ? `Not for ${bad.length} of the selected (e.g. ${bad[0].metadata.name}: ${bad[0].status?.phase || 'Pending'})` : undefined;
        return (
          <button type="button" key={a.name} class={a.danger ? 'danger' : undefined} disabled={disabled} title={why}
            onClick={() => run(a)}>
            {busy === a.name ? `${a.label}…` : a.label}
          </button>
        );
      })}
    </div>
  );
}

/** ActionSummary shows what the last batch did, with each failure. */
export function ActionSummary({ result, onClose }: { result: ActionResult | null; onClose: () => void }) {
  if (!result) return null;
  const failed = result.errors.length;
  return (
    <div class={failed ? 'error wl-summary' : 'card wl-summary'} role={failed ? 'alert' : 'status'}>
      <div class="wl-summary-head">
        <strong>
          {result.action}: {result.ok} done{failed ? `, ${failed} failed` : ''}
        </strong>
        <button type="button" onClick={onClose} aria-label="Dismiss the summary">✕</button>
      </div>
      {failed > 0 && (
        <ul>
          {result.errors.map((e) => <li key={e.name}><code>{e.name}</code>: {e.message}</li>)}
        </ul>
      )}
    </div>
  );
}
